// SPDX-License-Identifier: GPL-2.0
/*
 * pmc_open(2) against an unprivileged user: what uid 65534 may open at
 * each pmc_paranoid level, counters across a setuid exec, and the
 * locked-memory charge of ring buffers through many fds, mremap() and
 * fork() copies and partial munmap().
 *
 * Runs as root: each test sets pmc_paranoid, then does its work in a
 * child that has become nobody. Without root the tests skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "pmc_harness.h"

#define SUID_COPY	"/tmp/pmc_priv_suid"
#define PLAIN_COPY	"/tmp/pmc_priv_plain"
#define VICTIM_COMM	"suid-victim"
#define VICTIM_BURN_NS	(300 * NSEC_PER_MSEC)
#define SAMPLE_NS	(100 * NSEC_PER_USEC)
#define KERNEL_START	0xffff800000000000ULL
#define RING_PAGES	64		/* data pages: 1 + 64 = 260 KiB */
#define ALLOWANCE_KB	516		/* pmc_mlock_kb's default */

static bool is_root(void)
{
	return geteuid() == 0;
}

/* A sampler of @pid's user-mode task-clock: IP, TID and callchain. */
static int sampler_open(pid_t pid, unsigned int extra)
{
	struct pmc_attr attr;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = SAMPLE_NS;
	attr.record_type = PMC_RECORD_IP | PMC_RECORD_TID |
			   PMC_RECORD_CALLCHAIN | PMC_RECORD_ADDR;
	attr.comm = !!(extra & 1);
	attr.mmap = !!(extra & 2);
	return pmc_open(&attr, pid, -1, -1, 0);
}

static void *ring_map(int fd, unsigned int data_pages)
{
	return mmap(NULL, (1 + data_pages) * page_size(),
		    PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

static __u64 ring_head(void *base)
{
	__u64 head = ((struct pmc_mmap_page *)base)->data_head;

	__sync_synchronize();
	return head;
}

struct ring_scan {
	unsigned int samples, comms, mmaps, kernel_words;
	bool victim_comm;
};

/* Walk the records of a ring that has not wrapped, from 0 to data_head. */
static int ring_scan(struct pmc_ring *r, struct ring_scan *scan)
{
	static union pmc_record rec;
	__u64 pos = 0, head = pmc_ring_data_head(r);
	unsigned int i;
	int ret;

	memset(scan, 0, sizeof(*scan));
	CHILD_CHECK(head <= r->size, "ring wrapped: head %llu",
		    (unsigned long long)head);
	while ((ret = pmc_ring_read_at(r, &pos, head, &rec)) > 0) {
		if (rec.h.misc & PMC_EVENT_MISC_OVERFLOW) {
			scan->samples++;
			for (i = 1; i < rec.h.size / 8; i++)
				if (rec.w[i] >= KERNEL_START)
					scan->kernel_words++;
		} else if (rec.h.type == PMC_EVENT_COMM) {
			scan->comms++;
			if (!strcmp(((struct comm_rec *)&rec)->comm, VICTIM_COMM))
				scan->victim_comm = true;
		} else if (rec.h.type == PMC_EVENT_MMAP) {
			scan->mmaps++;
		}
	}
	CHILD_CHECK(!ret, "%s", r->err);
	return 0;
}

FIXTURE(priv) {
	long paranoid;
};

FIXTURE_SETUP(priv)
{
	if (!is_root())
		SKIP(return, "needs root to set pmc_paranoid and become nobody");
	ASSERT_EQ(0, read_int_file(PARANOID_PATH, &self->paranoid));
}

FIXTURE_TEARDOWN(priv)
{
	if (is_root())
		write_int_file(PARANOID_PATH, self->paranoid);
}

/* What nobody may open at @level; the child checks, returns 0 if right. */
static int paranoid_child(void *arg)
{
	long level = (long)arg;
	struct pmc_attr attr;
	struct ring_scan scan;
	struct pmc_ring ring;
	int fd, err;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	err = pmc_open_errno(&attr, 1, -1, -1, 0);
	CHILD_CHECK(err == EACCES, "init's task: %s", strerror(err));

	err = pmc_open_errno(&attr, -1, 0, -1, 0);
	CHILD_CHECK(level > 0 ? err == EACCES : err == 0,
		    "per-CPU counter at level %ld: %s", level, strerror(err));
	/*
	 * Other users' registers and stacks: a per-CPU counter sees every
	 * task's, so they are for CAP_PERFMON only, at any level.
	 */
	attr.irq_period = NSEC_PER_MSEC;
	attr.record_type = PMC_RECORD_REGS_USER;
	attr.regs_user = TEST_REGS_MASK;
	err = pmc_open_errno(&attr, -1, 0, -1, 0);
	CHILD_CHECK(err == EACCES, "per-CPU user registers at level %ld: %s",
		    level, strerror(err));
	attr.record_type = PMC_RECORD_STACK_USER;
	attr.regs_user = 0;
	attr.stack_user = 512;
	err = pmc_open_errno(&attr, -1, 0, -1, 0);
	CHILD_CHECK(err == EACCES, "per-CPU user stacks at level %ld: %s",
		    level, strerror(err));
	/* ...while its own task's are its to see */
	CHILD_CHECK(!pmc_open_errno(&attr, 0, -1, -1, 0),
		    "its own user stack at level %ld: %s", level,
		    strerror(errno));
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);

	attr.exclude_kernel = 0;
	err = pmc_open_errno(&attr, 0, -1, -1, 0);
	CHILD_CHECK(level > 1 ? err == EACCES : err == 0,
		    "kernel counting at level %ld: %s", level, strerror(err));

	/* samples taken around syscalls carry no kernel address at level 2 */
	fd = sampler_open(0, 0);
	CHILD_CHECK(fd >= 0, "sampler: %s", strerror(errno));
	CHILD_CHECK(!pmc_ring_map(&ring, fd, 16, true), "mmap: %s",
		    strerror(errno));
	for (int i = 0; i < 2000 && pmc_ring_data_head(&ring) < 8 * page_size(); i++) {
		getppid();
		burn_cpu(20 * NSEC_PER_USEC);
	}
	if (ring_scan(&ring, &scan))
		return 1;
	CHILD_CHECK(scan.samples > 0, "no samples");
	if (level > 1)
		CHILD_CHECK(!scan.kernel_words,
			    "%u kernel addresses in %u samples",
			    scan.kernel_words, scan.samples);
	pmc_ring_unmap(&ring);
	close(fd);
	return 0;
}

TEST_F(priv, paranoid_levels)
{
	long level;

	for (level = 2; level >= 0; level--) {
		ASSERT_EQ(0, write_int_file(PARANOID_PATH, level));
		TH_LOG("pmc_paranoid %ld", level);
		run_unprivileged(_metadata, paranoid_child, (void *)level);
	}
}

/* Copy this binary to @path with @mode, owned by root. */
static int copy_self(const char *path, mode_t mode)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	in = open("/proc/self/exe", O_RDONLY);
	if (in < 0)
		return -1;
	unlink(path);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0700);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			n = -1;
	close(in);
	if (close(out) || n < 0 || chown(path, 0, 0) || chmod(path, mode))
		return -1;
	return 0;
}

/* The exec'ed image: rename itself, burn CPU, map code, exit. */
static int victim_main(void)
{
	void *code;
	int fd;

	prctl(PR_SET_NAME, VICTIM_COMM);
	burn_cpu(VICTIM_BURN_NS);
	fd = open("/bin/busybox", O_RDONLY);
	if (fd >= 0) {
		code = mmap(NULL, page_size(), PROT_READ | PROT_EXEC,
			    MAP_PRIVATE, fd, 0);
		if (code != MAP_FAILED)
			munmap(code, page_size());
		close(fd);
	}
	return 0;
}

struct exec_case {
	const char *path;
	bool setuid;
	bool inherit;		/* counters inherited, not opened on the pid */
};

static int exec_child(void *arg)
{
	const struct exec_case *c = arg;
	struct ring_scan scan;
	struct pmc_attr attr;
	int pipefd[2], counting = -1, sampler = -1, status, err;
	struct pmc_ring ring = { .page = NULL };
	__u64 value;
	pid_t pid;
	char go;

	CHILD_CHECK(!pipe(pipefd), "%s", strerror(errno));
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.inherit = c->inherit;
	if (c->inherit) {
		counting = pmc_open(&attr, 0, -1, -1, 0);
		CHILD_CHECK(counting >= 0, "inherit counter: %s",
			    strerror(errno));
	}
	fflush(NULL);
	pid = fork();
	if (!pid) {
		close(pipefd[1]);
		if (read(pipefd[0], &go, 1) != 1)
			_exit(2);
		execl(c->path, c->path, "--victim", NULL);
		_exit(3);
	}
	close(pipefd[0]);
	if (!c->inherit) {
		counting = pmc_open(&attr, pid, -1, -1, 0);
		CHILD_CHECK(counting >= 0, "counter on %d: %s", pid,
			    strerror(errno));
		sampler = sampler_open(pid, 3);
		CHILD_CHECK(sampler >= 0, "sampler on %d: %s", pid,
			    strerror(errno));
		CHILD_CHECK(!pmc_ring_map(&ring, sampler, 64, true),
			    "mmap: %s", strerror(errno));
	}
	CHILD_CHECK(write(pipefd[1], "g", 1) == 1, "%s", strerror(errno));
	if (c->setuid) {
		/* the victim runs as root: the ptrace check fails from now */
		usleep(100 * 1000);
		err = pmc_open_errno(&attr, pid, -1, -1, 0);
		CHILD_CHECK(err == EACCES || err == ESRCH,
			    "open on the setuid victim: %s", strerror(err));
	}
	CHILD_CHECK(waitpid(pid, &status, 0) == pid, "%s", strerror(errno));
	CHILD_CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
		    "victim status %#x", status);
	CHILD_CHECK(read(counting, &value, sizeof(value)) == sizeof(value),
		    "read: %s", strerror(errno));
	if (c->setuid)
		CHILD_CHECK(value < VICTIM_BURN_NS / 2,
			    "counted %llu ns of the setuid image",
			    (unsigned long long)value);
	else
		CHILD_CHECK(value >= VICTIM_BURN_NS * 2 / 3,
			    "counted only %llu ns across a plain exec",
			    (unsigned long long)value);
	if (ring.page) {
		if (ring_scan(&ring, &scan))
			return 1;
		if (c->setuid) {
			CHILD_CHECK(!scan.victim_comm, "COMM of the setuid image");
			CHILD_CHECK(!scan.mmaps, "%u MMAP records", scan.mmaps);
			/* samples of the old image only: exec is slow */
			CHILD_CHECK(scan.samples <= value / SAMPLE_NS + 2,
				    "%u samples, %llu ns counted", scan.samples,
				    (unsigned long long)value);
		} else {
			CHILD_CHECK(scan.victim_comm, "no COMM after a plain exec");
			CHILD_CHECK(scan.samples >= 100, "%u samples",
				    scan.samples);
		}
	}
	return 0;
}

static void run_exec_case(struct __test_metadata *_metadata,
			  const struct exec_case *c)
{
	ASSERT_EQ(0, copy_self(c->path, c->setuid ? 04755 : 0755)) {
		TH_LOG("copy to %s: %s", c->path, strerror(errno));
	}
	ASSERT_EQ(0, write_int_file(PARANOID_PATH, 2));
	run_unprivileged(_metadata, exec_child, (void *)c);
	unlink(c->path);
}

/* Nothing of a setuid image reaches counters opened by its parent. */
TEST_F(priv, setuid_exec_detaches)
{
	static const struct exec_case c = { SUID_COPY, true, false };

	run_exec_case(_metadata, &c);
}

/* Inherited copies stop at the setuid exec too. */
TEST_F(priv, setuid_exec_detaches_inherited)
{
	static const struct exec_case c = { SUID_COPY, true, true };

	run_exec_case(_metadata, &c);
}

/* A plain exec keeps its counters: nothing is detached too eagerly. */
TEST_F(priv, plain_exec_keeps_counting)
{
	static const struct exec_case c = { PLAIN_COPY, false, false };

	run_exec_case(_metadata, &c);
}

/* Rings through many fds: never past pmc_mlock_kb with no rlimit. */
static int many_fds_child(void *arg)
{
	struct rlimit none = { 0, 0 };
	int fds[64], nr, i, j, err = 0;
	void *maps[64];

	(void)arg;
	CHILD_CHECK(!setrlimit(RLIMIT_MEMLOCK, &none), "%s", strerror(errno));
	for (j = 0; j < 2; j++) {
		for (nr = 0; nr < 64; nr++) {
			fds[nr] = sampler_open(0, 0);
			CHILD_CHECK(fds[nr] >= 0, "%s", strerror(errno));
			maps[nr] = ring_map(fds[nr], 16);
			if (maps[nr] == MAP_FAILED) {
				err = errno;
				close(fds[nr]);
				break;
			}
		}
		CHILD_CHECK(err == EPERM, "mmap %d: %s", nr, strerror(err));
		CHILD_CHECK(nr * 17 * 4 <= ALLOWANCE_KB,
			    "round %d: %d rings of 68 KiB mapped", j, nr);
		CHILD_CHECK(nr * 17 * 4 > ALLOWANCE_KB - 68,
			    "round %d: only %d rings of 68 KiB mapped", j, nr);
		for (i = 0; i < nr; i++) {
			munmap(maps[i], 17 * page_size());
			close(fds[i]);
		}
		/* the second round proves the charge came back */
	}
	CHILD_CHECK(vmpin_kb() == 0, "VmPin %ld kB", vmpin_kb());
	return 0;
}

TEST_F(priv, mlock_many_fds)
{
	ASSERT_EQ(0, write_int_file(PARANOID_PATH, 2));
	run_unprivileged(_metadata, many_fds_child, NULL);
}

/*
 * mremap() moves a ring with its charge: the moved mapping still shows
 * the live buffer, and a second full-size ring does not fit until it is
 * gone. Partial unmaps fail and leave the ring whole.
 */
static int vma_copies_child(void *arg)
{
	size_t len = (1 + RING_PAGES) * page_size(), pg = page_size();
	struct rlimit none = { 0, 0 };
	struct pmc_mmap_page *up;
	int fd, fd2, loops, ok = 0;
	void *base, *moved, *p;
	__u64 head;

	(void)arg;
	CHILD_CHECK(!setrlimit(RLIMIT_MEMLOCK, &none), "%s", strerror(errno));
	fd = sampler_open(0, 0);
	CHILD_CHECK(fd >= 0, "%s", strerror(errno));
	base = ring_map(fd, RING_PAGES);
	CHILD_CHECK(base != MAP_FAILED, "mmap: %s", strerror(errno));

	/* partial munmap, mremap and mprotect must all fail */
	CHILD_CHECK(munmap(base, pg) && errno == EINVAL, "munmap of page 0");
	CHILD_CHECK(munmap((char *)base + len - pg, pg) && errno == EINVAL,
		    "munmap of the last page");
	CHILD_CHECK(munmap((char *)base + 8 * pg, pg) && errno == EINVAL,
		    "munmap of a middle page");
	CHILD_CHECK(mremap(base, len, 2 * pg, 0) == MAP_FAILED,
		    "mremap shrank the ring");
	CHILD_CHECK(mprotect(base, pg, PROT_READ) && errno == EINVAL,
		    "mprotect of page 0");

	moved = mremap(base, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
		       (char *)base + 2 * len);
	CHILD_CHECK(moved != MAP_FAILED, "mremap: %s", strerror(errno));
	up = moved;
	CHILD_CHECK(up->version == 1, "page 0 version %u after the move",
		    up->version);
	head = ring_head(moved);
	burn_cpu(20 * NSEC_PER_MSEC);
	CHILD_CHECK(ring_head(moved) > head,
		    "no records through the moved mapping");

	/* the charge stayed with the moved mapping */
	fd2 = sampler_open(0, 0);
	CHILD_CHECK(fd2 >= 0, "%s", strerror(errno));
	p = ring_map(fd2, RING_PAGES);
	CHILD_CHECK(p == MAP_FAILED && errno == EPERM,
		    "a second 260 KiB ring: %s",
		    p == MAP_FAILED ? strerror(errno) : "mapped");
	CHILD_CHECK(!munmap(moved, len), "%s", strerror(errno));
	p = ring_map(fd2, RING_PAGES);
	CHILD_CHECK(p != MAP_FAILED, "after the munmap: %s", strerror(errno));
	munmap(p, len);
	close(fd2);

	/* open, map, move, keep: never more than the allowance */
	for (loops = 0; loops < 400; loops++) {
		fd2 = sampler_open(0, 0);
		CHILD_CHECK(fd2 >= 0, "%s", strerror(errno));
		p = ring_map(fd2, RING_PAGES);
		if (p != MAP_FAILED) {
			ok++;
			mremap(p, len, len, MREMAP_MAYMOVE);
		}
		close(fd2);
	}
	CHILD_CHECK(ok * (RING_PAGES + 1) * 4 <= ALLOWANCE_KB,
		    "%d rings of 260 KiB stayed mapped", ok);
	close(fd);
	return 0;
}

TEST_F(priv, vma_copies_keep_charge)
{
	ASSERT_EQ(0, write_int_file(PARANOID_PATH, 2));
	run_unprivileged(_metadata, vma_copies_child, NULL);
}

/* MADV_DOFORK refused: a fork has no copy, and the charge goes at close. */
static int dofork_refused(int fd, void *base, size_t len)
{
	unsigned char vec;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (!pid)
		_exit(mincore(base, page_size(), &vec) == -1 && errno == ENOMEM ?
		      0 : 7);
	CHILD_CHECK(pid > 0, "fork: %s", strerror(errno));
	CHILD_CHECK(waitpid(pid, &status, 0) == pid, "%s", strerror(errno));
	CHILD_CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
		    "the fork has the ring mapped: status %#x", status);
	CHILD_CHECK(!munmap(base, len), "%s", strerror(errno));
	close(fd);
	CHILD_CHECK(vmpin_kb() == 0, "VmPin %ld kB", vmpin_kb());
	return 0;
}

/*
 * MADV_DOFORK: the child's copy of the mapping keeps the buffer after
 * the parent unmaps it, and sees the parent's new samples, where the
 * kernel allows MADV_DOFORK on the ring at all.
 */
static int dofork_child(void *arg)
{
	size_t len = 17 * page_size();
	int fd, pipefd[2], status;
	void *base;
	__u64 head;
	pid_t pid;
	char c;

	(void)arg;
	fd = sampler_open(0, 0);
	CHILD_CHECK(fd >= 0, "%s", strerror(errno));
	base = ring_map(fd, 16);
	CHILD_CHECK(base != MAP_FAILED, "mmap: %s", strerror(errno));
	if (madvise(base, len, MADV_DOFORK)) {
		if (errno == ENOSYS)
			return 4;	/* no madvise in this kernel */
		/*
		 * Linux 7.x refuses MADV_DOFORK on special mappings: then
		 * no copy may exist, so a fork must not see the ring.
		 */
		CHILD_CHECK(errno == EINVAL, "madvise: %s", strerror(errno));
		return dofork_refused(fd, base, len);
	}
	CHILD_CHECK(pipe(pipefd) == 0, "%s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (!pid) {
		close(pipefd[1]);
		if (read(pipefd[0], &c, 1) != 1)
			_exit(2);
		head = ring_head(base);
		/* the parent samples while we wait */
		for (int i = 0; i < 200 && ring_head(base) == head; i++)
			usleep(10 * 1000);
		_exit(((struct pmc_mmap_page *)base)->version != 1 ? 5 :
		      ring_head(base) == head ? 6 : 0);
	}
	close(pipefd[0]);
	CHILD_CHECK(!munmap(base, len), "%s", strerror(errno));
	CHILD_CHECK(write(pipefd[1], "g", 1) == 1, "%s", strerror(errno));
	burn_cpu(200 * NSEC_PER_MSEC);
	CHILD_CHECK(waitpid(pid, &status, 0) == pid, "%s", strerror(errno));
	CHILD_CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
		    "the fork's copy: status %#x (5: bad page 0, 6: no records)",
		    status);
	close(fd);
	CHILD_CHECK(vmpin_kb() == 0, "VmPin %ld kB", vmpin_kb());
	return 0;
}

TEST_F(priv, dofork_copy_keeps_buffer)
{
	pid_t pid;
	int ret;

	ASSERT_EQ(0, write_int_file(PARANOID_PATH, 2));
	pid = spawn(_metadata, unprivileged_trampoline,
		    &(struct unprivileged_call){ dofork_child, NULL });
	ret = reap(_metadata, pid, NULL);
	if (ret == 4)
		SKIP(return, "no madvise() in this kernel");
	ASSERT_EQ(0, ret);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--victim"))
		return victim_main();
	return test_harness_run(argc, argv);
}
