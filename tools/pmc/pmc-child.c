// SPDX-License-Identifier: GPL-2.0
/*
 * The fork-and-hold child of pmc-stat and pmc-record, and their SIGINT
 * flag.
 *
 * The child stops itself, so the parent can open and enable its counters
 * on the pid, one ioctl() at a time, while it runs nothing: they all
 * start together when the parent continues it, and a group's members run
 * exactly as long as their leader. It then waits for a go byte on one
 * pipe; an exec error comes back on another, which exec closes on
 * success.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "pmc-child.h"

static void __attribute__((noreturn))
run_child(char **cmd, pid_t parent, int go_fd, int err_fd)
{
	char go = 0;
	ssize_t n;
	int err;

	/* The command gets the default action, whatever the parent set. */
	signal(SIGINT, SIG_DFL);
	/* Never left stopped by a parent that died before continuing it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(127);
	raise(SIGSTOP);
	do {
		n = read(go_fd, &go, 1);
	} while (n < 0 && errno == EINTR);
	if (n != 1 || go != 'g')
		_exit(127);		/* parent gave up */
	/* The command outlives pmc-stat, as it would outlive a shell. */
	prctl(PR_SET_PDEATHSIG, 0);
	execvp(cmd[0], cmd);
	err = errno;
	/* If the parent is gone there is nobody left to tell. */
	n = write(err_fd, &err, sizeof(err));
	(void)n;
	_exit(127);
}

int pmc_child_spawn(struct pmc_child *child, const char *prog, char **cmd)
{
	pid_t parent = getpid();
	int go[2], err[2], status;
	pid_t ret;

	child->prog = prog;
	/* O_CLOEXEC: neither pipe may leak into the command. */
	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		fprintf(stderr, "%s: pipe: %s\n", prog, strerror(errno));
		return -1;
	}
	child->exited = false;
	child->pid = fork();
	if (child->pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
		return -1;
	}
	if (child->pid == 0) {
		close(go[1]);
		close(err[0]);
		run_child(cmd, parent, go[0], err[1]);
	}
	close(go[0]);
	close(err[1]);
	child->go_fd = go[1];
	child->err_fd = err[0];
	/*
	 * Stopped, or continued already by a SIGCONT from elsewhere (job
	 * control): either way it goes no further than the go pipe.
	 */
	do {
		ret = waitpid(child->pid, &status, WUNTRACED | WCONTINUED);
	} while (ret < 0 && errno == EINTR);
	if (ret == child->pid && (WIFSTOPPED(status) || WIFCONTINUED(status)))
		return 0;
	fprintf(stderr, "%s: the command's process did not stop before exec\n",
		prog);
	if (ret == child->pid)
		child->exited = true;
	pmc_child_abort(child);
	return -1;
}

bool pmc_child_reap(struct pmc_child *child, bool nohang)
{
	int status;
	pid_t ret;

	if (child->exited)
		return true;
	do {
		ret = waitpid(child->pid, &status, nohang ? WNOHANG : 0);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0) {
		fprintf(stderr, "%s: waitpid: %s\n", child->prog,
			strerror(errno));
		child->exited = true;
		child->status = 1;
		return true;
	}
	if (ret == 0)
		return false;
	child->exited = true;
	if (WIFSIGNALED(status))
		child->status = 128 + WTERMSIG(status);
	else
		child->status = WEXITSTATUS(status);
	return true;
}

static void close_pipe(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Closing the go pipe unsent makes the child exit without running. */
void pmc_child_abort(struct pmc_child *child)
{
	close_pipe(&child->go_fd);
	close_pipe(&child->err_fd);
	if (!child->exited)
		kill(child->pid, SIGCONT);
	pmc_child_reap(child, false);
}

int pmc_child_release(struct pmc_child *child, char **cmd)
{
	int err;
	ssize_t n;

	if (write(child->go_fd, "g", 1) != 1) {
		fprintf(stderr, "%s: write: %s\n", child->prog,
			strerror(errno));
		pmc_child_abort(child);
		return -1;
	}
	close_pipe(&child->go_fd);
	kill(child->pid, SIGCONT);
	do {
		n = read(child->err_fd, &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	close_pipe(&child->err_fd);
	if (n == sizeof(err)) {
		fprintf(stderr, "%s: cannot run '%s': %s\n", child->prog,
			cmd[0], strerror(err));
		pmc_child_reap(child, false);
		return -1;
	}
	return 0;
}

volatile sig_atomic_t pmc_interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	pmc_interrupted = 1;
}

void pmc_catch_sigint(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}
