// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite emulated PMU: a second owner of the PMU, a TEST MODEL.
 *
 * On real machines events-lite shares the PMU with perf, the NMI
 * watchdog (a perf counter) and KVM's vPMU. This stand-in does what they
 * do to the emulated registers, so that the tests can see whether
 * events-lite leaves them alone. On every online CPU it reserves some
 * general-purpose counters from the perfctr reservation, as perf does,
 * programs them and (Intel) fixed counters to interrupt every @period
 * events, sets their global enable bits, and takes their overflows in
 * its own NMI handler, registered before events-lite's as perf's is.
 * "Guest" counters are programmed with their global enable clear, as
 * perf keeps a KVM guest's counters off while the host runs: they must
 * count nothing.
 *
 * /sys/module/pmc_emu/parameters/foreign, root only:
 *   write "start GP FIXED GUEST PERIOD"  counter masks (hex), events
 *   write "reserve GP" or "reserve all"   reserve only, program nothing
 *   write "stop"                          stop and release
 *   write "clear"                         zero what read shows
 *   read: "reserved MASK" and the sums over CPUs of pmis (its overflows
 *   its handler took), wraps (its counters' wraps), pending (wraps not
 *   yet taken when it stopped), lost_enables (times it found one of its
 *   enable bits cleared), guest_counted (events its guest counters
 *   counted), lite_msr and lite_nmi_msr (events-lite's MSR accesses,
 *   and those in NMI context). A correct neighbour leaves pmis + pending
 *   == wraps, and lost_enables and guest_counted at 0. Then, of the CPU
 *   the reader runs on, stale_here: the mask of general-purpose
 *   counters that hold a count and do not count (pmc_emu_stale_here()).
 * Start and reserve fail with EBUSY while events-lite has one of the
 * counters programmed on some CPU, and start with EOPNOTSUPP on PMUs
 * without a global status (the handler finds its overflows there). A
 * CPU that comes online later runs none of it.
 */
#define pr_fmt(fmt) "events-lite emu: " fmt

#include <linux/bitops.h>
#include <linux/cpu.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/nmi.h>
#include <linux/pmc.h>
#include <linux/smp.h>
#include <linux/sysfs.h>
#include <asm/nmi.h>

#include "emu.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "pmc_emu."

static DEFINE_MUTEX(pmc_emu_foreign_mutex);
/* pmc_emu_foreign_mutex: what it reserved and runs, on every CPU */
static unsigned long pmc_emu_foreign_reserved;
static struct pmc_emu_foreign pmc_emu_foreign_cfg;

/* Take the counters in @mask from the reservation, all or none. */
static int pmc_emu_foreign_reserve(unsigned long mask)
{
	unsigned long got = 0;
	int idx;

	for_each_set_bit(idx, &mask, BITS_PER_LONG) {
		if (test_and_set_bit(idx, &pmc_emu_reserved)) {
			for_each_set_bit(idx, &got, BITS_PER_LONG)
				clear_bit(idx, &pmc_emu_reserved);
			return -EBUSY;
		}
		__set_bit(idx, &got);
	}
	pmc_emu_foreign_reserved = mask;
	return 0;
}

static void pmc_emu_foreign_unreserve(void)
{
	int idx;

	for_each_set_bit(idx, &pmc_emu_foreign_reserved, BITS_PER_LONG)
		clear_bit(idx, &pmc_emu_reserved);
	pmc_emu_foreign_reserved = 0;
}

static void pmc_emu_foreign_load(struct pmc_emu_cpu *e, int slot, u64 period)
{
	e->ctr[slot] = -period & GENMASK_ULL(pmc_emu_model->width - 1, 0);
	e->frac[slot] = 0;
}

/* On each CPU, IRQs off: program its counters as perf would. */
static void pmc_emu_foreign_start_cpu(void *arg)
{
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);
	const struct pmc_emu_foreign *cfg = arg;
	u64 cycles = pmc_emu_model->event_map[PMC_HW_CPU_CYCLES];
	int slot;

	pmc_emu_advance(e);
	for (slot = 0; slot < PMC_EMU_SLOTS; slot++) {
		if (!(cfg->bits & pmc_emu_bit(slot)))
			continue;
		if (slot >= PMC_EMU_FIXED0) {
			e->fixed_ctrl |= (u64)(PMC_EMU_FIXED_EN | PMC_EMU_FIXED_PMI) <<
					 (4 * (slot - PMC_EMU_FIXED0));
		} else {
			e->sel[slot] = cycles | PMC_X86_SEL_USR | PMC_X86_SEL_OS |
				       PMC_X86_SEL_INT | PMC_X86_SEL_EN;
		}
		if (cfg->guest & pmc_emu_bit(slot))
			e->ctr[slot] = 0;
		else
			pmc_emu_foreign_load(e, slot, cfg->period);
	}
	e->foreign.bits = cfg->bits;
	e->foreign.enabled = cfg->enabled;
	e->foreign.guest = cfg->guest;
	e->foreign.period = cfg->period;
	/* as perf's enable writes it: its guest's counters off in the host */
	e->global_ctrl = (e->global_ctrl | cfg->enabled) & ~cfg->guest;
	pmc_emu_arm(e);
}

/* Its enables as it left them? Counted once per check that finds not. */
static void pmc_emu_foreign_check(struct pmc_emu_cpu *e)
{
	u64 fixed = 0;
	int slot;

	for (slot = PMC_EMU_FIXED0; slot < PMC_EMU_SLOTS; slot++)
		if (e->foreign.bits & pmc_emu_bit(slot))
			fixed |= (u64)PMC_EMU_FIXED_EN << (4 * (slot - PMC_EMU_FIXED0));
	for (slot = 0; slot < PMC_EMU_FIXED0; slot++)
		if (e->foreign.bits & pmc_emu_bit(slot) &&
		    !(e->sel[slot] & PMC_X86_SEL_EN))
			break;
	if ((e->global_ctrl & e->foreign.enabled) != e->foreign.enabled ||
	    (e->fixed_ctrl & fixed) != fixed || slot < PMC_EMU_FIXED0)
		e->foreign.lost_enables++;
}

static void pmc_emu_foreign_stop_cpu(void *unused)
{
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);
	u64 bits = e->foreign.bits;
	int slot;

	if (!bits)
		return;
	pmc_emu_advance(e);
	pmc_emu_foreign_check(e);
	/* Their NMI may be on its way: its handler will take the bits. */
	e->foreign.stale = e->global_status & bits & ~e->foreign.guest;
	e->foreign.pending += hweight64(e->foreign.stale);
	for (slot = 0; slot < PMC_EMU_SLOTS; slot++) {
		if (!(bits & pmc_emu_bit(slot)))
			continue;
		if (e->foreign.guest & pmc_emu_bit(slot))
			e->foreign.guest_counted += e->ctr[slot];
		if (slot >= PMC_EMU_FIXED0)
			e->fixed_ctrl &= ~(0xfULL << (4 * (slot - PMC_EMU_FIXED0)));
		else
			e->sel[slot] = 0;
		/* its count is its own to clear, as perf clears its own */
		e->ctr[slot] = 0;
	}
	e->global_ctrl &= ~bits;
	e->foreign.bits = 0;
	e->foreign.enabled = 0;
	e->foreign.guest = 0;
	/* the NMI for the stale bits comes now, not at some later tick */
	pmc_emu_arm(e);
}

/* Its overflows, perf's way: its own status bits, acknowledged, reloaded. */
static int pmc_emu_foreign_nmi(unsigned int cmd, struct pt_regs *regs)
{
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);
	u64 mine = e->foreign.bits & ~e->foreign.guest;
	u64 status = e->global_status & (mine | e->foreign.stale);
	int slot;

	if (!status)
		return NMI_DONE;
	e->global_status &= ~status;
	/* taken at stop as pending */
	status &= ~e->foreign.stale;
	e->foreign.stale = 0;
	if (status)
		pmc_emu_foreign_check(e);
	for (slot = 0; slot < PMC_EMU_SLOTS; slot++) {
		if (!(status & pmc_emu_bit(slot)))
			continue;
		e->foreign.pmis++;
		pmc_emu_foreign_load(e, slot, e->foreign.period);
	}
	/* the tick re-arms for the next wrap; events-lite's regs stay */
	WRITE_ONCE(e->nmis, e->nmis + 1);
	return hweight64(status) ?: NMI_HANDLED;
}

/* Power-up clears the registers: its counters on that CPU are gone. */
void pmc_emu_foreign_reset(struct pmc_emu_cpu *e)
{
	e->foreign.stale = 0;
	e->foreign.bits = 0;
	e->foreign.enabled = 0;
	e->foreign.guest = 0;
}

static void pmc_emu_foreign_clear_cpu(void *unused)
{
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);

	e->foreign.pmis = 0;
	e->foreign.wraps = 0;
	e->foreign.pending = 0;
	e->foreign.lost_enables = 0;
	e->foreign.guest_counted = 0;
	e->lite_msr = 0;
	e->lite_nmi_msr = 0;
}

static void pmc_emu_foreign_stop(void)
{
	on_each_cpu(pmc_emu_foreign_stop_cpu, NULL, 1);
	pmc_emu_foreign_unreserve();
	pmc_emu_foreign_cfg.bits = 0;
}

static int pmc_emu_foreign_start(unsigned long gp, unsigned long fixed,
				 unsigned long guest, u64 period)
{
	const struct pmc_x86_model *model = pmc_emu_model;
	struct pmc_emu_foreign *cfg = &pmc_emu_foreign_cfg;
	int ret;

	if (!model->global_status)
		return -EOPNOTSUPP;
	if (gp & guest || (gp | guest) >> model->nr_counters ||
	    fixed >= BIT(pmc_emu_nr_fixed) || !period ||
	    period >= BIT_ULL(model->width - 1))
		return -EINVAL;
	ret = pmc_emu_foreign_reserve(gp | guest);
	if (ret)
		return ret;
	cfg->bits = gp | guest | (u64)fixed << 32;
	cfg->enabled = gp | (u64)fixed << 32;
	cfg->guest = guest;
	cfg->period = period;
	cpus_read_lock();
	on_each_cpu(pmc_emu_foreign_start_cpu, cfg, 1);
	cpus_read_unlock();
	return 0;
}

static int pmc_emu_foreign_set(const char *val, const struct kernel_param *kp)
{
	unsigned long gp, fixed, guest;
	unsigned long long period;
	int ret = -EINVAL;

	if (!pmc_emu_model)
		return -ENODEV;
	mutex_lock(&pmc_emu_foreign_mutex);
	if (sysfs_streq(val, "stop")) {
		pmc_emu_foreign_stop();
		ret = 0;
	} else if (sysfs_streq(val, "clear")) {
		on_each_cpu(pmc_emu_foreign_clear_cpu, NULL, 1);
		ret = 0;
	} else if (pmc_emu_foreign_reserved || pmc_emu_foreign_cfg.bits) {
		ret = -EBUSY;	/* stop first */
	} else if (sscanf(val, "start %lx %lx %lx %llu", &gp, &fixed, &guest,
			  &period) == 4) {
		ret = pmc_emu_foreign_start(gp, fixed, guest, period);
	} else if (sysfs_streq(val, "reserve all")) {
		ret = pmc_emu_foreign_reserve(BIT(pmc_emu_model->nr_counters) - 1);
	} else if (sscanf(val, "reserve %lx", &gp) == 1) {
		ret = gp && !(gp >> pmc_emu_model->nr_counters) ?
		      pmc_emu_foreign_reserve(gp) : -EINVAL;
	}
	mutex_unlock(&pmc_emu_foreign_mutex);
	return ret;
}

static int pmc_emu_foreign_get(char *buf, const struct kernel_param *kp)
{
	struct pmc_emu_foreign sum = { };
	unsigned long msr = 0, nmi_msr = 0;
	int cpu;

	if (!pmc_emu_model)
		return -ENODEV;
	for_each_possible_cpu(cpu) {
		struct pmc_emu_cpu *e = per_cpu_ptr(&pmc_emu_cpu, cpu);

		sum.pmis += READ_ONCE(e->foreign.pmis);
		sum.wraps += READ_ONCE(e->foreign.wraps);
		sum.pending += READ_ONCE(e->foreign.pending);
		sum.lost_enables += READ_ONCE(e->foreign.lost_enables);
		sum.guest_counted += READ_ONCE(e->foreign.guest_counted);
		msr += READ_ONCE(e->lite_msr);
		nmi_msr += READ_ONCE(e->lite_nmi_msr);
	}
	return sysfs_emit(buf,
			  "reserved %#lx\npmis %lu\nwraps %lu\npending %lu\nlost_enables %lu\nguest_counted %lu\nlite_msr %lu\nlite_nmi_msr %lu\nstale_here %#lx\n",
			  READ_ONCE(pmc_emu_foreign_reserved), sum.pmis,
			  sum.wraps, sum.pending, sum.lost_enables,
			  sum.guest_counted, msr, nmi_msr,
			  pmc_emu_stale_here());
}

static const struct kernel_param_ops pmc_emu_foreign_ops = {
	.set	= pmc_emu_foreign_set,
	.get	= pmc_emu_foreign_get,
};

module_param_cb(foreign, &pmc_emu_foreign_ops, NULL, 0600);
MODULE_PARM_DESC(foreign, "a second owner of the PMU: start GP FIXED GUEST PERIOD | reserve GP | reserve all | stop | clear");

/* Before events-lite's handler, as perf's is: it sees its NMIs first. */
void __init pmc_emu_foreign_init(void)
{
	register_nmi_handler(NMI_LOCAL, pmc_emu_foreign_nmi, 0,
			     "pmc_emu_foreign");
}
