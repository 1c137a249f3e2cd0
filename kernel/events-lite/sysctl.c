// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite's sysctls, one table in /proc/sys/kernel. Each value is
 * defined, and read with READ_ONCE(), where it is used.
 */
#include <linux/init.h>
#include <linux/sysctl.h>

#include "internal.h"

static int pmc_max_sample_rate_max = NSEC_PER_SEC;

static const struct ctl_table pmc_sysctls[] = {
	{
		.procname	= "pmc_paranoid",
		.data		= &sysctl_pmc_paranoid,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_NEG_ONE,
		.extra2		= SYSCTL_THREE,
	},
	{
		.procname	= "pmc_mux_interval_ms",
		.data		= &sysctl_pmc_mux_interval_ms,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= SYSCTL_ONE_THOUSAND,
	},
	{
		.procname	= "pmc_mlock_kb",
		.data		= &sysctl_pmc_mlock_kb,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
	},
	{
		.procname	= "pmc_max_sample_rate",
		.data		= &sysctl_pmc_max_sample_rate,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		/* a rate's period, NSEC_PER_SEC / rate, is never 0 ns */
		.extra2		= &pmc_max_sample_rate_max,
	},
	{
		.procname	= "pmc_cpu_time_max_percent",
		.data		= &sysctl_pmc_cpu_time_max_percent,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE_HUNDRED,
	},
};

static int __init pmc_sysctl_init(void)
{
	register_sysctl_init("kernel", pmc_sysctls);
	return 0;
}
core_initcall(pmc_sysctl_init);
