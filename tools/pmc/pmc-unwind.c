// SPDX-License-Identifier: GPL-2.0
/*
 * DWARF unwinding of user stacks for pmc-report, with libdwfl.
 *
 * Each process gets one Dwfl whose modules are its mapped files at the
 * addresses the MMAP records gave them, reported as the unwinder first
 * needs each; its thread state is one sample's at a time: the
 * registers start the walk, and memory reads come from the sample's
 * stack copy, or for code and read-only data from the files. A process
 * that exec()s keeps the Dwfl of its old image: its modules are checked
 * against the mappings of each address, and a mismatch starts afresh.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <linux/pmc.h>

#include "libpmc.h"
#include "pmc-maps.h"
#include "pmc-regs.h"
#include "pmc-symbols.h"
#include "pmc-unwind.h"
#include "pmc-util.h"

/* The sample being unwound in a process's Dwfl. */
struct unwind_state {
	__u32 pid, tid;
	const struct pmc_sample_ext *x;
	__u64 regs_mask;
	__u64 sp;
	__u64 *ips;
	size_t nr, max;
	bool thread_given;		/* next_thread's one thread */
};

struct process_dwfl {
	__u32 pid;
	Dwfl *dwfl;
	const struct unwind_arch *arch;	/* its files' machine */
	bool attached;			/* dwfl_attach_state() done */
	struct unwind_state *state;	/* the sample, while unwinding */
};

static struct process_dwfl **processes;
static size_t nr_processes, cap_processes;

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* The sample's value of perf register @reg; false if not recorded. */
static bool sample_reg(const struct unwind_state *st, int reg, __u64 *val)
{
	__u64 below = st->regs_mask & ((1ULL << reg) - 1);

	if (!(st->regs_mask & (1ULL << reg)))
		return false;
	*val = pmc_sample_reg(st->x, __builtin_popcountll(below));
	return true;
}

/*
 * Report the file mapped at @addr of the process as a module at its
 * address, unless one covers @addr already. False if none can be.
 */
static bool report_module(struct process_dwfl *p, __u64 addr)
{
	const struct map *map = maps_find(p->pid, addr);
	Dwfl_Module *mod = dwfl_addrmodule(p->dwfl, addr);
	int fd;

	if (mod)
		return true;
	if (!map || !map->dso)
		return false;
	fd = dso_open_elf(map->dso);
	if (fd < 0)
		return false;
	dwfl_report_begin_add(p->dwfl);
	/* libdwfl owns fd; it biases an ET_DYN to the mapping's start. */
	mod = dwfl_report_elf(p->dwfl, dso_name(map->dso), dso_name(map->dso),
			      fd, map->start - map->pgoff, false);
	dwfl_report_end(p->dwfl, NULL, NULL);
	return mod && dwfl_addrmodule(p->dwfl, addr) == mod;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct process_dwfl *p = arg;

	(void)dwfl;
	if (p->state->thread_given)
		return 0;
	p->state->thread_given = true;
	*thread_argp = p;
	return p->state->tid;
}

/* A word of the stack copy, else of the file mapped there. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	struct process_dwfl *p = arg;
	const struct unwind_state *st = p->state;
	Dwarf_Addr bias, at = addr;
	Dwfl_Module *mod;
	Elf_Data *data;
	Elf_Scn *scn;

	(void)dwfl;
	if (addr >= st->sp && addr - st->sp + 8 <= st->x->stack_dyn) {
		memcpy(result, (const char *)st->x->stack + (addr - st->sp), 8);
		return true;
	}
	if (!report_module(p, addr))
		return false;
	mod = dwfl_addrmodule(p->dwfl, addr);
	scn = mod ? dwfl_module_address_section(mod, &at, &bias) : NULL;
	data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !data->d_buf || at + 8 > data->d_size)
		return false;
	memcpy(result, (const char *)data->d_buf + at, 8);
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct process_dwfl *p = arg;
	const struct unwind_arch *arch = p->arch;
	Dwarf_Word regs[MAX_DWARF_REGS];
	__u64 pc, val;
	size_t i;

	for (i = 0; i < arch->nr; i++) {
		if (!sample_reg(p->state, arch->dwarf_regs[i], &val))
			return false;
		regs[i] = val;
	}
	if (!sample_reg(p->state, arch->pc, &pc) ||
	    !dwfl_thread_state_registers(thread, 0, arch->nr, regs))
		return false;
	dwfl_thread_state_register_pc(thread, pc);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int frame_callback(Dwfl_Frame *frame, void *arg)
{
	struct unwind_state *st = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	st->ips[st->nr++] = pc;
	return st->nr < st->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Each process's, by pid: libdwfl keeps a pointer to it. */
static struct process_dwfl *process_dwfl(__u32 pid)
{
	struct process_dwfl *p;
	size_t i;

	for (i = 0; i < nr_processes; i++)
		if (processes[i]->pid == pid)
			return processes[i];
	if (!debuginfo_path)
		debuginfo_path = must_strdup("-:.debug:/usr/lib/debug");
	p = must_calloc(1, sizeof(*p));
	p->pid = pid;
	p->dwfl = dwfl_begin(&offline_callbacks);
	GROW(processes, nr_processes, cap_processes);
	processes[nr_processes++] = p;
	return p;
}

/* The machine of the module at @addr, once it is reported. */
static const struct unwind_arch *module_arch(Dwfl *dwfl, __u64 addr)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	GElf_Addr bias;
	GElf_Ehdr ehdr;
	Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;

	return elf && gelf_getehdr(elf, &ehdr) ? arch_of(ehdr.e_machine) :
						 NULL;
}

size_t unwind_user(__u32 pid, __u32 tid, const struct pmc_sample_ext *x,
		   __u64 regs_mask, __u64 *ips, size_t max)
{
	struct unwind_state st = {
		.pid = pid, .tid = tid, .x = x, .regs_mask = regs_mask,
		.ips = ips, .max = max,
	};
	struct process_dwfl *p;
	__u64 pc = 0;
	size_t i;

	if (x->regs_abi != PMC_REGS_ABI_64 || !x->stack_dyn || !max)
		return 0;
	p = process_dwfl(pid);
	/* The PC is register 32 on arm64 and 8 on x86-64: try each. */
	for (i = 0; !p->arch && i < sizeof(arches) / sizeof(arches[0]); i++)
		if (sample_reg(&st, arches[i].pc, &pc) && p->dwfl &&
		    report_module(p, pc))
			p->arch = module_arch(p->dwfl, pc);
	if (!p->arch || !sample_reg(&st, p->arch->sp, &st.sp) ||
	    !sample_reg(&st, p->arch->pc, &pc) || !report_module(p, pc))
		return 0;
	/* The first module gives libdwfl the machine: attach after it. */
	if (!p->attached) {
		if (!dwfl_attach_state(p->dwfl, NULL, pid, &thread_callbacks, p))
			return 0;
		p->attached = true;
	}
	p->state = &st;
	dwfl_getthread_frames(p->dwfl, tid, frame_callback, &st);
	p->state = NULL;
	return st.nr;
}
