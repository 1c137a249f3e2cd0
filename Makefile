# SPDX-License-Identifier: GPL-2.0
# events-lite: top-level entry points. See README.md.
#
#   make run     build the fast kernel and tools, boot, run the pmc-stat demo
#   make shell   a shell in the guest on the fast kernel, with the tools in
#                /bin and build/share as /share (PMC_EMU=p6: emulated PMU)
#   make check   the whole test suite on the debug kernel (and on arm64,
#                cross-built with riscv64); ends with "N passed, M failed"
#   make check-busy, make check-onecore
#                the same with every host CPU busy (stress-ng), or with
#                QEMU on one host CPU (taskset): the results must not
#                depend on the host
#   make bench   events-lite against perf_event_open (build/bench/)
#   make fuzz    the pmc_open(2) fuzzer for FUZZ_SECONDS (300) per boot

SHELL := /bin/bash
BUILD := build
SCRIPTS := scripts

.PHONY: all run shell check bench fuzz deps series src kernel-fast kernel-debug \
	tools-fast tools-debug cross clean distclean check-busy check-onecore

all: run

deps:
	@$(SCRIPTS)/install-deps
	@$(SCRIPTS)/base-tree

# patches/ is the source of truth; see "Changing a patch" in README.md.
series: deps
	@$(SCRIPTS)/series check

# The patched tree, from patches/ (what is mailed is what is built).
src: deps
	@$(SCRIPTS)/series apply

kernel-fast kernel-debug: kernel-%: src
	@$(SCRIPTS)/build-kernel $*

tools-fast tools-debug: tools-%: kernel-%
	@$(SCRIPTS)/build-tools $*

# pmc_open(2) is wired on every architecture: build it on two more, and
# arm64's kselftests for its boot in `make check`.
cross: src
	@$(SCRIPTS)/build-cross riscv64
	@$(SCRIPTS)/build-cross arm64

run: tools-fast
	@rm -rf $(BUILD)/run && mkdir -p $(BUILD)/run
	@PMC_KERNEL=fast $(SCRIPTS)/vm-run --quiet --share $(BUILD)/run \
		--add $(BUILD)/tools-fast/pmc-stat \
		--add $(BUILD)/tools-fast/pmc-record \
		--add $(BUILD)/tools-fast/pmc-report \
		--add $(BUILD)/tools-fast/pmc-burn \
		--add $(SCRIPTS)/guest/demo -- demo
	@echo "== on the host: pmc-report --symfs build/tools-fast --kallsyms build/run/kallsyms build/run/burn.data (recorded in the guest, through vm-run --share)"
	@$(BUILD)/tools-fast/pmc-report --symfs $(BUILD)/tools-fast \
		--kallsyms $(BUILD)/run/kallsyms --sort comm,symbol \
		$(BUILD)/run/burn.data
	@$(BUILD)/tools-fast/pmc-report --symfs $(BUILD)/tools-fast \
		--kallsyms $(BUILD)/run/kallsyms \
		--svg $(BUILD)/run/flame.svg $(BUILD)/run/burn.data > /dev/null 2>&1
	@echo "== flame graph: build/run/flame.svg (open it in a browser: click a frame to zoom, Search to highlight)"

# An interactive shell on the patched kernel; exit leaves it.
shell: tools-fast
	@mkdir -p $(BUILD)/share
	@PMC_KERNEL=fast $(SCRIPTS)/vm-run --quiet --shell --share $(BUILD)/share \
		$(if $(PMC_EMU),--append pmc_emu=$(PMC_EMU)) \
		$(foreach t,pmc-stat pmc-record pmc-report pmc-burn libpmc/count-region \
			libpmc/hot-ips,--add $(BUILD)/tools-fast/$(t))

# events-lite vs perf_event_open in the same guest; see README.md.
bench: tools-fast
	@$(SCRIPTS)/build-kernel nopmc
	@$(SCRIPTS)/build-cross arm64
	@$(SCRIPTS)/bench

fuzz: tools-debug
	@$(SCRIPTS)/fuzz $(FUZZ_SECONDS)

# When make started, for the times `make check` prints at its end.
START := $(shell date +%s)

# The build packages first; the rest, checkpatch and the cross builds
# beside the debug kernel's build (scripts/check).
check check-busy check-onecore: check%:
	@$(SCRIPTS)/install-deps build
	@$(SCRIPTS)/base-tree
	@$(SCRIPTS)/check $(START) $(patsubst -%,%,$*)

clean:
	rm -rf $(BUILD)/kbuild-* $(BUILD)/tools-* $(BUILD)/vm

distclean:
	rm -rf $(BUILD)
