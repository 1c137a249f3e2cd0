// SPDX-License-Identifier: GPL-2.0
/*
 * pmc-burn: a CPU workload of known shape, to check what pmc-report shows.
 *
 *	pmc-burn [MS]
 *
 * main() calls burn(), which for MS milliseconds of CPU time (500 if
 * not given) calls hot_loop() and warm_loop() in turn. Both spin the
 * same loop, hot_loop() three times as many rounds, so a profile gives
 * hot_loop about 3/4 of the samples and warm_loop about 1/4, each with
 * the call chain main -> burn -> *_loop.
 *
 * The Makefile builds this with -O1 -fno-omit-frame-pointer: frame
 * pointers let the kernel walk the stack (see spin() for the leaves),
 * and noinline keeps the three functions apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void burn(double seconds)
{
	double end = cpu_seconds() + seconds;

	do {
		hot_loop();
		warm_loop();
	} while (cpu_seconds() < end);
}

int main(int argc, char **argv)
{
	unsigned long ms = 500;
	char *end;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: pmc-burn [MS]\n");
		return 2;
	}
	if (argc == 2) {
		ms = strtoul(argv[1], &end, 10);
		if (end == argv[1] || *end) {
			fprintf(stderr, "pmc-burn: bad milliseconds '%s'\n",
				argv[1]);
			return 2;
		}
	}
	burn(ms / 1e3);
	return 0;
}
