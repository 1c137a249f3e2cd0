// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite on x86: the TSC conversion in page 0, so that a task reads
 * its own clocks without a system call (kernel/events-lite/userpage.c).
 * local_clock() is sched_clock() plus __sched_clock_offset while
 * sched_clock is stable, and the native sched_clock is the TSC scaled by
 * this CPU's cyc2ns data: user space redoes that sum. Any other
 * sched_clock (a paravirt one, or an unstable TSC, which local_clock()
 * filters per CPU) user space cannot follow, nor can a task that may not
 * execute RDTSC (PR_SET_TSC): then it uses read(). A page written before
 * sched_clock was found unstable keeps its conversion until its next
 * rewrite.
 */
#include <linux/pmc.h>
#include <linux/sched/clock.h>
#include <asm/timer.h>

/* For current, on this CPU, with IRQs off (userpage.c). */
bool pmc_arch_user_time(struct pmc_mmap_page *up, u64 stamp)
{
	struct cyc2ns_data data;

	if (!boot_cpu_has(X86_FEATURE_TSC) || test_thread_flag(TIF_NOTSC) ||
	    !using_native_sched_clock() || !sched_clock_stable())
		return false;
	cyc2ns_read_begin(&data);
	up->time_mult = data.cyc2ns_mul;
	up->time_shift = data.cyc2ns_shift;
	up->time_offset = data.cyc2ns_offset + __sched_clock_offset - stamp;
	cyc2ns_read_end();
	return true;
}
