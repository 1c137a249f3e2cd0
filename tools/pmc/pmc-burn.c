// SPDX-License-Identifier: GPL-2.0
/*
 * pmc-burn: a CPU workload of known shape, to check what pmc-report shows.
 *
 *	pmc-burn [-f] [-v] [-t THREADS] [MS]
 *
 * main() calls burn(), which for MS milliseconds of CPU time (500 if
 * not given) calls hot_loop() and warm_loop() in turn. Both spin the
 * same loop, hot_loop() three times as many rounds, so a profile gives
 * hot_loop about 3/4 of the samples and warm_loop about 1/4, each with
 * the call chain main -> burn -> *_loop.
 *
 * With -f, it forks first: the child, which runs on in this program
 * without an exec, does the same, and the parent prints the child's pid
 * and waits for it.
 *
 * With -v, each round also calls clock_loop(), which reads
 * CLOCK_MONOTONIC CLOCK_ROUNDS times: through the vDSO, so samples land
 * in code that is in no file ("[vdso]").
 *
 * With -t, THREADS threads (main's included), all started at once, each
 * burn MS milliseconds of their own CPU time, sleeping a millisecond
 * after each round, so that the threads of a process can be told apart
 * and none of them keeps a CPU to itself. Each thread but main's is
 * named burn-N (N from 1), as a profiler should show it.
 *
 * The Makefile builds this with -O1 -fno-omit-frame-pointer: frame
 * pointers let the kernel walk the stack (see spin() for the leaves),
 * and noinline keeps the three functions apart.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define MAX_THREADS	64

/*
 * Rounds of warm_loop() per call, a fraction of a millisecond natively:
 * short enough that burn() overshoots its time by little, even under
 * emulation.
 */
#define WARM_ROUNDS	20000UL
#define HOT_ROUNDS	(3 * WARM_ROUNDS)

/*
 * Steps of a linear congruential generator: a serial chain of multiplies
 * of the same cost in both loops. The state is a volatile local, which
 * the compiler cannot drop and which makes the leaf functions use their
 * stack: GCC keeps the frame pointer of a leaf only then, even with
 * -fno-omit-frame-pointer, and without it a walk skips the caller.
 */
static inline void spin(unsigned long rounds)
{
	volatile unsigned long x = rounds;

	while (rounds--)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
}

static __attribute__((noinline)) void hot_loop(void)
{
	spin(HOT_ROUNDS);
}

static __attribute__((noinline)) void warm_loop(void)
{
	spin(WARM_ROUNDS);
}

/* clock_gettime() calls per round of -v: about a third of its time. */
#define CLOCK_ROUNDS	2000

static __attribute__((noinline)) void clock_loop(void)
{
	struct timespec ts;
	int i;

	for (i = 0; i < CLOCK_ROUNDS; i++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
}

static bool threaded;		/* -t: thread CPU time, with naps */
static bool vdso;		/* -v: clock_loop() too */

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(threaded ? CLOCK_THREAD_CPUTIME_ID :
		      CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void burn(double seconds)
{
	static const struct timespec nap = { 0, 1000000 };
	double end = cpu_seconds() + seconds;

	do {
		hot_loop();
		warm_loop();
		if (vdso)
			clock_loop();
		if (threaded)
			nanosleep(&nap, NULL);
	} while (cpu_seconds() < end);
}

static void *burn_thread(void *ms)
{
	burn(*(unsigned long *)ms / 1e3);
	return NULL;
}

static unsigned long parse_ms(const char *arg, const char *what)
{
	char *end;
	unsigned long val = strtoul(arg, &end, 10);

	if (end == arg || *end || arg[0] == '-') {
		fprintf(stderr, "pmc-burn: bad %s '%s'\n", what, arg);
		exit(2);
	}
	return val;
}

int main(int argc, char **argv)
{
	pthread_t threads[MAX_THREADS];
	unsigned long ms = 500, nr = 1, i;
	pid_t child = -1;
	int status;
	bool fork_first = false;

	for (; argc > 1; argc--, argv++) {
		if (!strcmp(argv[1], "-f"))
			fork_first = true;
		else if (!strcmp(argv[1], "-v"))
			vdso = true;
		else
			break;
	}
	if (argc > 2 && !strcmp(argv[1], "-t")) {
		nr = parse_ms(argv[2], "thread count");
		if (!nr || nr > MAX_THREADS) {
			fprintf(stderr, "pmc-burn: 1 to %d threads\n",
				MAX_THREADS);
			return 2;
		}
		threaded = true;
		argc -= 2;
		argv += 2;
	}
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: pmc-burn [-f] [-v] [-t THREADS] [MS]\n");
		return 2;
	}
	if (argc == 2)
		ms = parse_ms(argv[1], "milliseconds");
	if (fork_first) {
		fflush(NULL);
		child = fork();
		if (child < 0) {
			perror("pmc-burn: fork");
			return 1;
		}
		if (child > 0) {
			printf("%d\n", (int)child);
			fflush(stdout);
		}
	}
	for (i = 1; i < nr; i++) {
		char name[16];

		if (pthread_create(&threads[i], NULL, burn_thread, &ms)) {
			fprintf(stderr, "pmc-burn: cannot start a thread\n");
			return 1;
		}
		snprintf(name, sizeof(name), "burn-%lu", i);
		pthread_setname_np(threads[i], name);
	}
	burn(ms / 1e3);
	for (i = 1; i < nr; i++)
		pthread_join(threads[i], NULL);
	if (child > 0 && (waitpid(child, &status, 0) != child ||
			  !WIFEXITED(status) || WEXITSTATUS(status)))
		return 1;
	return 0;
}
