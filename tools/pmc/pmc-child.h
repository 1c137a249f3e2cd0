/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run a command under the pmc-* tools: fork it held, stopped, before exec,
 * so counters can be opened and enabled on its pid before it runs
 * anything, and all start at once.
 */
#ifndef _PMC_CHILD_H
#define _PMC_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct pmc_child {
	const char *prog;		/* prefix for error messages */
	pid_t pid;
	int go_fd;			/* write end: release the child */
	int err_fd;			/* read end: exec errno, or EOF */
	bool exited;
	int status;			/* exit code, 128 + signal */
};

/*
 * Fork @cmd, stopped before exec until pmc_child_release(). Returns 0,
 * or -1 after printing why, prefixed with @prog.
 */
int pmc_child_spawn(struct pmc_child *child, const char *prog, char **cmd);

/*
 * Let the child exec; returns 0 once it runs the command, else -1 with
 * the child reaped.
 */
int pmc_child_release(struct pmc_child *child, char **cmd);

/*
 * Make a child that was never released exit without running, and reap
 * it. Safe to call again after pmc_child_release().
 */
void pmc_child_abort(struct pmc_child *child);

/*
 * Collect the child's status into child->status; with @nohang, only if
 * it has exited. Returns true once it has.
 */
bool pmc_child_reap(struct pmc_child *child, bool nohang);

/* Set once SIGINT arrives after pmc_catch_sigint(): end the count. */
extern volatile sig_atomic_t pmc_interrupted;

/*
 * From now on SIGINT sets pmc_interrupted, without SA_RESTART, so that
 * a poll() or nanosleep() under way returns. Call it after forking the
 * command: the command keeps the default action.
 */
void pmc_catch_sigint(void);

#endif /* _PMC_CHILD_H */
