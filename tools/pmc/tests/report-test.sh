#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# pmc-report on synthetic data files, on the host: no VM, no pmc kernel.
#
#	report-test.sh TOOLS_DIR
#
# TOOLS_DIR holds pmc-report and pmc-burn as tools/pmc/Makefile builds
# them (and host/pmc-report, its dynamic build, if made). mkdata.c
# writes the data files from pmc-burn's own symbols (nm), so the checks
# hold whatever addresses a rebuild gives; it compiles against
# $KHDR_INCLUDES if set, else the source tree's UAPI header.
# Prints a TAP line per check; exits 1 if any failed.
set -u

if [ $# != 1 ] || [ ! -x "$1/pmc-report" ] || [ ! -x "$1/pmc-burn" ]; then
	echo "usage: $0 TOOLS_DIR (holding pmc-report and pmc-burn)" >&2
	exit 2
fi
tools=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
report=$tools/pmc-report
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$top/tools/lib/pmc/tests/tap.sh"

# The files map pmc-burn as the VM records it, as /bin/pmc-burn: --symfs
# finds it by its basename in TOOLS_DIR, so no output holds a host path.
run() {
	"$report" --symfs "$tools" "$@"
}

# The address of function $1 of pmc-burn, its start if $2 is "start",
# else its middle.
addr() {
	# shellcheck disable=SC2046 # nm's address and size, as $3 and $4
	set -- "$1" "${2:-}" $(nm -S "$tools/pmc-burn" |
			       awk -v f="$1" '$4 == f { print $1, $2 }')
	[ $# = 4 ] || { echo "no $1 in pmc-burn" >&2; return 1; }
	if [ "$2" = start ]; then
		printf '0x%x\n' $((0x$3))
	else
		printf '0x%x\n' $((0x$3 + 0x$4 / 2))
	fi
}

# The source line of address $1 of pmc-burn as binutils sees it.
srcline() {
	addr2line -e "$tools/pmc-burn" "$1" | sed 's,.*/,,'
}

if [ -n "${KHDR_INCLUDES:-}" ]; then
	includes=$KHDR_INCLUDES
else
	mkdir -p "$tmp/include/linux"
	ln -s "$top/include/uapi/linux/pmc.h" "$tmp/include/linux/pmc.h"
	includes="-isystem $tmp/include"
fi
# shellcheck disable=SC2086 # $includes is a list of options
check "mkdata builds" \
	${CC:-cc} -O2 -Wall -Wextra -Werror $includes -o "$tmp/mkdata" \
		"$here/mkdata.c"
hot=$(addr hot_loop)
warm=$(addr warm_loop)
burn=$(addr burn)
main=$(addr main)
check "nm finds hot_loop, warm_loop, burn and main in pmc-burn" \
	test -n "$hot" -a -n "$warm" -a -n "$burn" -a -n "$main"
# $1: KIND, $2: the file's name, $3 and $4: IPs in hot_loop and warm_loop
mkdata() {
	"$tmp/mkdata" "$1" "$tmp/$2.data" "$tools/pmc-burn" /bin/pmc-burn \
		"$3" "$4" "$burn" "$main"
}
for kind in burn nochain unfinished mixed; do
	check "mkdata writes $kind.data" mkdata $kind $kind "$hot" "$warm"
done
# IPs at the functions' entries: DWARF tells their lines apart there.
hot_entry=$(addr hot_loop start) warm_entry=$(addr warm_loop start)
check "mkdata writes srcline.data" \
	mkdata burn srcline "$hot_entry" "$warm_entry"

# --- the default report --------------------------------------------------

run "$tmp/burn.data" >"$tmp/out" 2>"$tmp/err"
check "default report: exit status 0" test $? = 0
check "default report: the header" grep -qxF \
	"# event: task-clock, a sample every 1000000 ns (1000 Hz), call chains recorded (not shown)" \
	"$tmp/out"
check "default report: 400 samples over 0.399 s" \
	grep -qxF "# 400 samples over 0.399 s" "$tmp/out"
check "default report: hot_loop 75.00%, 300 samples" \
	grep -qx " *75.00% *300  pmc-burn  *pmc-burn  *hot_loop" "$tmp/out"
check "default report: warm_loop 25.00%, 100 samples" \
	grep -qx " *25.00% *100  pmc-burn  *pmc-burn  *warm_loop" "$tmp/out"
# shellcheck disable=SC2016 # awk's own $1
check "default report: the thread table" \
	awk '$1 == 100 && $3 == 300 { a = 1 } $1 == 101 && $3 == 100 { b = 1 }
	     END { exit !(a && b) }' "$tmp/out"
check "default report: no warnings (--symfs found pmc-burn)" \
	test ! -s "$tmp/err"

# --- --sort --------------------------------------------------------------

# The table's rows as "percent samples cells...", one per line.
rows() {
	run "$@" 2>/dev/null | awk '/^# (Overhead|Children)/ { t = 1; next }
		t && NF { $1 = $1; print }'
}
check "--sort comm: one row" \
	test "$(rows -s comm "$tmp/burn.data")" = "100.00% 400 pmc-burn"
check "--sort thread: pid/tid rows" \
	test "$(rows -s thread "$tmp/burn.data")" = "$(printf '%s\n' \
		"75.00% 300 100/100" "25.00% 100 100/101")"
check "--sort object: one row" \
	test "$(rows --sort=object "$tmp/burn.data")" = "100.00% 400 pmc-burn"
check "--sort symbol: hot_loop and warm_loop" \
	test "$(rows -s symbol "$tmp/burn.data")" = "$(printf '%s\n' \
		"75.00% 300 hot_loop" "25.00% 100 warm_loop")"
check "--sort srcline: where hot_loop and warm_loop start, as addr2line says" \
	test "$(rows -s srcline "$tmp/srcline.data")" = "$(printf '%s\n' \
		"75.00% 300 $(srcline "$hot_entry")" \
		"25.00% 100 $(srcline "$warm_entry")")"
check "--sort sym,dso,thread: columns in the order given" \
	test "$(rows -s sym,dso,thread "$tmp/burn.data")" = "$(printf '%s\n' \
		"75.00% 300 hot_loop pmc-burn 100/100" \
		"25.00% 100 warm_loop pmc-burn 100/101")"

# --- demangling ----------------------------------------------------------

# names.c's functions have a C++ and a Rust (v0) name; mkdata records
# them as hot_loop and warm_loop, mapped from /bin/names.
if ${CC:-cc} -O1 -static -o "$tmp/names" "$here/names.c"; then
	sym_at() {
		printf '0x%s\n' "$(nm "$tmp/names" | awk -v f="$1" '$3 == f { print $1 }')"
	}
	"$tmp/mkdata" burn "$tmp/names.data" "$tmp/names" /bin/names \
		"$(sym_at _ZNK3app6Matrix3dotERKS0_)" \
		"$(sym_at _RNvCsgStHSCytQ6I_7mycrate4main)" \
		"$(sym_at burn)" "$(sym_at main)"
	check "demangled: the C++ method and the Rust function, as written" \
		test "$("$report" --symfs "$tmp" -s symbol "$tmp/names.data" 2>/dev/null |
			awk '/^# Overhead/ { t = 1; next } t && NF { $1 = $1; print }')" = \
		"$(printf '%s\n' "75.00% 300 app::Matrix::dot(app::Matrix const&) const" \
			"25.00% 100 mycrate::main")"
else
	check "names.c builds (static)" false
fi

# --- call graphs ---------------------------------------------------------

run -s symbol -G callee "$tmp/burn.data" >"$tmp/out" 2>&1
check "-G callee: exit status 0" test $? = 0
check "-G callee: from hot_loop up to main" \
	diff -u - <(sed -n '/hot_loop$/,/^$/p' "$tmp/out") <<'EOF'
    75.00%       300  hot_loop
            |
            ---hot_loop
               burn
               main

EOF
run -s comm -G caller "$tmp/burn.data" >"$tmp/out" 2>&1
check "-G caller: from main down, forking in burn" \
	diff -u - <(sed -n '/pmc-burn$/,/^$/p' "$tmp/out") <<'EOF'
   100.00%       400  pmc-burn
            |
            ---main
               burn
               |
               |--75.00%--hot_loop
               |
                --25.00%--warm_loop

EOF
run -G callee "$tmp/nochain.data" >/dev/null 2>"$tmp/err"
check "-G without call chains: exit status 1" test $? = 1
check "-G without call chains: says so" \
	grep -q "no call chains recorded" "$tmp/err"
run -G sideways "$tmp/burn.data" >/dev/null 2>"$tmp/err"
check "-G sideways: usage error, exit status 2" test $? = 2

# --- folded stacks -------------------------------------------------------

run --folded "$tmp/burn.data" >"$tmp/out" 2>&1
check "--folded: exit status 0" test $? = 0
check "--folded: equals burn.folded" diff -u "$here/burn.folded" "$tmp/out"
run --folded "$tmp/mixed.data" >"$tmp/out" 2>/dev/null
check "--folded: kernel, hidden and unmapped frames and a second comm" \
	diff -u "$here/mixed.folded" "$tmp/out"
run "$tmp/mixed.data" >"$tmp/out" 2>/dev/null
check "header: two counters' 3 throttles (two overlap), 5 ms without samples" \
	grep -q "^# throttled 3 times, 0.005 s in all without samples" "$tmp/out"
check "header: the record of an unknown type is counted, not fatal" \
	grep -q "^# records of unknown type skipped: 1$" "$tmp/out"
run --folded "$tmp/nochain.data" >"$tmp/out" 2>"$tmp/err"
check "--folded without call chains: the sampled functions" \
	test "$(cat "$tmp/out")" = "$(printf '%s\n' \
		"pmc-burn;hot_loop 300" "pmc-burn;warm_loop 100")"
check "--folded without call chains: warns" \
	grep -q "no call chains recorded" "$tmp/err"
run --folded -s comm "$tmp/burn.data" >/dev/null 2>&1
check "--folded with -s: usage error, exit status 2" test $? = 2

# --- mappings ------------------------------------------------------------

check "mkdata writes overlap.data" mkdata overlap overlap "$hot" "$warm"
run --folded "$tmp/overlap.data" >"$tmp/out" 2>/dev/null
# The newest mapping of an address wins; what it overlaps keeps the rest
# at the right file offset; a MUNMAP leaves a hole; a pid without
# mappings borrows them.
check "mappings: laid over, cut, unmapped and borrowed, as the kernel would" \
	test "$(cat "$tmp/out")" = "$(printf '%s\n' "pmc-burn;[unknown] 1" \
		"pmc-burn;a.so+0x10 1" "pmc-burn;a.so+0x2010 1" \
		"pmc-burn;b.so+0x5010 2")"
# pmc-record -a: a forked child that never exec'ed runs on its parent's
# mappings (FORK), under its parent's name, and one CPU's buffer
# drained before another's is merged by time (attr.time_all). Before
# either, its samples were "[unknown]" or in another program's code.
check "mkdata writes fork.data" mkdata fork fork "$hot" "$warm"
run --folded --pid 101 "$tmp/fork.data" >"$tmp/out" 2>"$tmp/err"
check "-a: a forked child's samples in its parent's code, by its name" \
	test "$(cat "$tmp/out")" = "pmc-burn;main;burn;hot_loop 100"
run --sort comm,pid "$tmp/fork.data" >"$tmp/out" 2>/dev/null
check "-a: FORK and EXIT are known records, not \"unknown type\"" \
	test -z "$(grep "unknown type" "$tmp/out")"

# 32 times the mappings, the same 320,000 frames to look up: a search
# that scanned them took 21 times as long (0.58 s -> 12.3 s), a sorted
# one 1.8 times (reading the records). CPU time, not wall time, so that
# a busy host slows both alike; the best of three runs each.
fastest() {
	local i t best=

	for i in 1 2 3; do
		t=$( { TIMEFORMAT='%U %S'; time "$report" --symfs "$tools" \
			--folded "$1" >/dev/null 2>&1; } 2>&1 |
			awk '{ print $1 + $2 }')
		if [ -z "$best" ] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then
			best=$t
		fi
	done
	echo "$best"
}
check "mkdata writes 2,000 and 64,000 mappings" \
	eval 'mkdata maps:2000 few "$hot" "$warm" && mkdata maps:64000 many "$hot" "$warm"'
few=$(fastest "$tmp/few.data") many=$(fastest "$tmp/many.data")
echo "# 2,000 mappings: $few s, 64,000: $many s"
check "mappings: 32x as many cost < 5x the time (a lookup is a search, not a scan)" \
	awk -v f="$few" -v m="$many" 'BEGIN { exit !(f > 0 && m < 5 * f) }'

# --- perf script's layout ------------------------------------------------

# --script's output as the profilers that import perf script read it.
script_samples() {
	python3 "$here/script-samples.py" "$1"
}
run --script "$tmp/burn.data" >"$tmp/script" 2>"$tmp/err"
check "--script: exit status 0, no warnings" test $? = 0 -a ! -s "$tmp/err"
script_samples "$tmp/script" >"$tmp/samples"
check "--script: every sample reads as speedscope reads perf script" \
	test $? = 0 -a "$(wc -l <"$tmp/samples")" = 400
# shellcheck disable=SC2016 # awk's own $n
check "--script: 300 hot_loop and 100 warm_loop stacks, from main, in pmc-burn" \
	awk '$6 == "main(pmc-burn);burn(pmc-burn);hot_loop(pmc-burn)" { hot++ }
	     $6 == "main(pmc-burn);burn(pmc-burn);warm_loop(pmc-burn)" { warm++ }
	     END { exit !(hot == 300 && warm == 100) }' "$tmp/samples"
# shellcheck disable=SC2016
check "--script: comm, pid/tid and event of each; times in order" \
	awk '$1 != "pmc-burn" || $2 != 100 || ($3 != 100 && $3 != 101) ||
	     $5 != "task-clock" || $4 < last { bad = 1 } { last = $4 }
	     END { exit bad }' "$tmp/samples"
run --script "$tmp/mixed.data" >"$tmp/script" 2>/dev/null
script_samples "$tmp/script" >"$tmp/samples"
# shellcheck disable=SC2016
check "--script: kernel frames in [kernel.kallsyms], the second comm" \
	awk 'index($6, "([kernel.kallsyms])") { k++ } $1 == "worker" { w++ }
	     END { exit !(k == 9 && w == 1) }' "$tmp/samples"
run --script -s comm "$tmp/burn.data" >/dev/null 2>&1
check "--script with -s: usage error, exit status 2" test $? = 2

# --- several events (pmc-record -e a -e '{b,c}') --------------------------

for kind in events badsource; do
	check "mkdata writes $kind.data" mkdata $kind $kind "$hot" "$warm"
done
run "$tmp/events.data" >"$tmp/out" 2>"$tmp/err"
check "several events: exit status 0, no warnings" test $? = 0 -a ! -s "$tmp/err"
# shellcheck disable=SC2016 # awk's own $n
check "several events: a section each, in -e order, with its samples and lost" \
	awk '/^# event: / { e = e $3 } /^# [0-9]+ samples( over|$)/ { n = n $2 " " }
	     /^# [0-9]+ samples lost/ { l = l $2 " " }
	     END { exit !(e == "task-clock,instructions,cycles," &&
			  n == "400 50 20 " && l == "0 7 0 ") }' "$tmp/out"
check "several events: the file and command said once, above the first section" \
	test "$(awk '/^# (pmc-report of|command:|event:) / { printf "%s %s|", $2, $3 }' \
		"$tmp/out")" = \
	     "pmc-report of|event: task-clock,|command: 'pmc-burn'|event: instructions,|event: cycles,|"
# shellcheck disable=SC2016
check "several events: each section's own rows (instructions: hot_loop 100%)" \
	awk '/^# event: / { ev = $3 } $NF == "hot_loop" { h[ev] = $1 }
	     $NF == "warm_loop" { w[ev] = $1 }
	     END { exit !(h["task-clock,"] == "75.00%" &&
			  h["instructions,"] == "100.00%" &&
			  !("instructions," in w) && w["cycles,"] == "100.00%") }' \
	"$tmp/out"
run --script "$tmp/events.data" >"$tmp/script" 2>"$tmp/err"
script_samples "$tmp/script" >"$tmp/samples"
# shellcheck disable=SC2016
check "several events: --script names each sample's event, merged in time" \
	awk '{ n[$5]++ } $4 < last { bad = 1 } { last = $4 }
	     END { exit bad || NR != 470 || n["task-clock"] != 400 ||
			n["instructions"] != 50 || n["cycles"] != 20 }' \
	"$tmp/samples"
run --event cycles --folded "$tmp/events.data" >"$tmp/out" 2>"$tmp/err"
check "several events: --event cycles --folded: its 20 warm_loop stacks" \
	test "$(cat "$tmp/out")" = "pmc-burn;main;burn;warm_loop 20" -a ! -s "$tmp/err"
run --folded "$tmp/events.data" >"$tmp/out" 2>"$tmp/err"
check "several events: --folded alone shows the first, and says so" \
	sh -c "diff -q '$here/burn.folded' '$tmp/out' >/dev/null &&
	       grep -q \"has 3 events: showing 'task-clock' (choose one with --event)\" '$tmp/err'"
run --event nosuch "$tmp/events.data" >/dev/null 2>"$tmp/err"
status=$?
names="'task-clock', 'instructions', 'cycles'"
check "several events: --event of another name: status 1, the names listed" \
	test $status = 1 -a -n "$(grep "no event 'nosuch'.*$names" "$tmp/err")"
# Event 1's record says it is event 5: they must come in order.
python3 - "$tmp/events.data" "$tmp/badevent.data" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
header_size = struct.unpack_from("<I", data, 12)[0]
event_size = struct.unpack_from("<H", data, header_size + 6)[0]
struct.pack_into("<I", data, header_size + event_size + 8, 5)
open(sys.argv[2], "wb").write(data)
PY
run "$tmp/badevent.data" >/dev/null 2>"$tmp/err"
status=$?
check "several events: an event record out of order is fatal" \
	test $status = 1 -a -n "$(grep 'is event 5, not 1' "$tmp/err")"
# pmc-record refuses more events than a file describes, before opening any.
many=$(printf 'task-clock,%.0s' $(seq 64))page-faults
"$tools/pmc-record" -e "$many" -o "$tmp/x.data" -- true 2>"$tmp/err"
status=$?
check "pmc-record -e of 65 events: usage error (status 2), says the limit" \
	test $status = 2 -a -n "$(grep '65 events: at most 64' "$tmp/err")"
run "$tmp/badsource.data" >/dev/null 2>"$tmp/err"
status=$?
check "several events: a source record naming no event is fatal" \
	test $status = 1 -a -n "$(grep 'names event 5 of 3' "$tmp/err")"

# --- annotate ------------------------------------------------------------

# The addresses of the instructions of function $2 (as its symbol is
# spelt) of file $1, as objdump lists them.
insns() {
	objdump -d --no-show-raw-insn "$1" |
		awk -v f="<$2>:" '$2 == f { on = 1; next } on && !NF { exit }
				 on { sub(":", "", $1); print "0x" $1 }'
}
# --annotate's instruction lines, "percent address", of the symbol $2
# in the files under $1; then pmc-report's other arguments.
annotated() {
	local dir=$1 sym=$2

	shift 2
	"$report" --symfs "$dir" --annotate "$sym" "$@" 2>/dev/null |
		awk '$1 ~ /^[0-9.]+$/ && $2 == ":" && $3 ~ /^[0-9a-f]+:$/ {
			sub(":", "", $3); print $1, "0x" $3 }'
}
# What annotated() should print for instructions $1 of which $2 has
# 75% of the samples and $3 25% (or $2 all, if $3 is not given).
expected() {
	local a top=100.00

	[ -n "${3:-}" ] && top=75.00
	for a in $1; do
		if [ "$a" = "$2" ]; then
			echo "$top $a"
		elif [ "$a" = "${3:-}" ]; then
			echo "25.00 $a"
		else
			echo "0.00 $a"
		fi
	done
}
hot_insns=$(insns "$tools/pmc-burn" hot_loop)
hot3=$(echo "$hot_insns" | sed -n 3p) hot5=$(echo "$hot_insns" | sed -n 5p)
check "mkdata writes annotate.data: 300 samples at hot_loop's 3rd instruction, 100 at its 5th" \
	eval 'test -n "$hot5" && mkdata burn annotate "$hot3" "$hot5"'
run --annotate hot_loop "$tmp/annotate.data" >"$tmp/out" 2>"$tmp/err"
check "--annotate hot_loop: exit status 0, no warnings" \
	test $? = 0 -a ! -s "$tmp/err"
check "--annotate hot_loop: the header names the file, the event and the 400 samples" \
	grep -q "^ Percent |.*Disassembly of pmc-burn for task-clock (400 samples" \
		"$tmp/out"
check "--annotate hot_loop: each instruction, 75% at the 3rd and 25% at the 5th" \
	test "$(annotated "$tools" hot_loop "$tmp/annotate.data")" = \
	     "$(expected "$hot_insns" "$hot3" "$hot5")"
# The IP in the middle of hot_loop (which may be inside an instruction),
# the others in warm_loop: the instruction that holds it has them all.
hot_insn=
for a in $hot_insns; do
	[ $((a)) -le $((hot)) ] && hot_insn=$a
done
check "--annotate hot_loop: an IP inside an instruction counts for it, warm_loop's left out" \
	test "$(annotated "$tools" hot_loop "$tmp/burn.data")" = \
	     "$(expected "$hot_insns" "$hot_insn")"
# objdump -S's source lines, numbered: hot_loop's first instruction is
# on the line addr2line gives, and spin()'s call on its own.
hot_line=$(srcline "$hot_entry" | sed 's/.*://')
spin_line=$(grep -n 'spin(HOT_ROUNDS);' "$here/../pmc-burn.c" | cut -d: -f1)
# shellcheck disable=SC2016 # awk's own $n
check "--annotate hot_loop: source lines, numbered as addr2line numbers them" \
	awk -v first="$hot_line" -v spin="$spin_line" '
		$1 == ":" && $2 ~ /^[0-9]+$/ && !insn { last = $2 }
		$1 ~ /^[0-9.]+$/ && $2 == ":" { insn = 1 }
		$1 == ":" && $2 == spin && $3 == "spin(HOT_ROUNDS);" { s = 1 }
		END { exit !(last == first && s) }' "$tmp/out"
run --annotate nosuch "$tmp/burn.data" >/dev/null 2>"$tmp/err"
status=$?
check "--annotate nosuch: status 1, no such function" \
	test $status = 1 -a -n "$(grep "no function 'nosuch' in the files sampled" "$tmp/err")"
run --annotate main "$tmp/burn.data" >/dev/null 2>"$tmp/err"
status=$?
check "--annotate main (only in call chains): status 1, not sampled" \
	test $status = 1 -a -n "$(grep "no task-clock samples in main (pmc-burn)" "$tmp/err")"
check "--annotate with --event instructions: its 50 samples" \
	eval 'test "$(annotated "$tools" hot_loop --event instructions "$tmp/events.data")" = \
		   "$(expected "$hot_insns" "$hot_insn")" &&
	      run --annotate hot_loop --event instructions "$tmp/events.data" 2>&1 |
		grep -q "for instructions (50 samples"'
run --annotate hot_loop --event cycles "$tmp/events.data" >/dev/null 2>"$tmp/err"
status=$?
check "--annotate with --event cycles: status 1, none of its samples in hot_loop" \
	test $status = 1 -a -n "$(grep "no cycles samples in hot_loop" "$tmp/err")"
OBJDUMP=/nonexistent/objdump run --annotate hot_loop "$tmp/burn.data" \
	>/dev/null 2>"$tmp/err"
status=$?
check "--annotate with an \$OBJDUMP that does not run: status 1, says so" \
	test $status = 1 -a -n "$(grep "cannot run /nonexistent/objdump" "$tmp/err")"
run --annotate hot_loop "$tmp/events.data" >/dev/null 2>"$tmp/err"
check "--annotate of several events: the first event's, and says so" \
	grep -q "has 3 events: showing 'task-clock'" "$tmp/err"
run --annotate hot_loop --folded "$tmp/burn.data" >/dev/null 2>"$tmp/err"
status=$?
check "--annotate with --folded: usage error (status 2), saying why" \
	test $status = 2 -a -n "$(grep -e "--annotate shows one function" "$tmp/err")"
# names.c as a shared library with debug info, mapped where the dynamic
# loader would put it: its C++ method, by either name, at link addresses.
cxx=_ZNK3app6Matrix3dotERKS0_
cxx_name='app::Matrix::dot(app::Matrix const&) const'
if ${CC:-cc} -O0 -g -shared -fPIC -o "$tmp/libnames.so" "$here/names.c"; then
	lib_base=0x7f1200000000
	lib_at() {
		printf '0x%x\n' $((lib_base + $1))
	}
	lib_sym() {
		lib_at "0x$(nm "$tmp/libnames.so" | awk -v f="$1" '$3 == f { print $1 }')"
	}
	cxx_insns=$(insns "$tmp/libnames.so" $cxx)
	cxx2=$(echo "$cxx_insns" | sed -n 2p)
	check "mkdata writes lib.data: libnames.so at $lib_base, 300 samples at the C++ method's 2nd instruction" \
		eval '"$tmp/mkdata" base:$lib_base "$tmp/lib.data" "$tmp/libnames.so" \
			/usr/lib/libnames.so "$(lib_at "$cxx2")" \
			"$(lib_sym _RNvCsgStHSCytQ6I_7mycrate4main)" \
			"$(lib_sym burn)" "$(lib_sym main)"'
	check "--annotate in a shared library, by the demangled name: at its link address" \
		test "$(annotated "$tmp" "$cxx_name" "$tmp/lib.data")" = \
		     "$(expected "$cxx_insns" "$cxx2")"
	check "--annotate in a shared library, by the mangled name: the same" \
		test "$(annotated "$tmp" $cxx "$tmp/lib.data")" = \
		     "$(expected "$cxx_insns" "$cxx2")"
	run_lib() {
		"$report" --symfs "$tmp" --annotate "$cxx_name" "$tmp/lib.data"
	}
	check "--annotate in a shared library: its name and source, demangled" \
		eval 'run_lib 2>/dev/null >"$tmp/out" &&
		      grep -q "Disassembly of libnames.so for task-clock (300 samples" "$tmp/out" &&
		      grep -qF "<$cxx_name>:" "$tmp/out" &&
		      grep -q "^ *: [0-9][0-9]* *__asm__ volatile" "$tmp/out"'
else
	check "names.c builds as a shared library" false
fi

# --- filters -------------------------------------------------------------

check "--sort pid,comm: a process's two commands" \
	test "$(rows -s pid,comm "$tmp/mixed.data")" = "$(printf '%s\n' \
		"91.67% 11 100 pmc-burn" "8.33% 1 100 worker")"
check "--comm worker: its one sample, 100% of those shown" \
	test "$(rows -s comm --comm worker "$tmp/mixed.data")" = "100.00% 1 worker"
run --tid 101 "$tmp/burn.data" >"$tmp/out" 2>/dev/null
check "--tid 101: the header counts the 300 samples left out" \
	grep -q "^# 100 samples over .* (300 more left out by --tid 101;" "$tmp/out"
check "--tid 101: only warm_loop" \
	test "$(rows -s sym --tid 101 "$tmp/burn.data")" = "100.00% 100 warm_loop"
check "--pids 100,7 --tids=100: thread 100's hot_loop" \
	test "$(rows -s sym --pids 100,7 --tids=100 "$tmp/burn.data")" = \
		"100.00% 300 hot_loop"
check "--dso [kernel.kallsyms] (perf's name): the 9 kernel samples" \
	test "$(rows -s dso --dso '[kernel.kallsyms]' "$tmp/mixed.data")" = \
		"100.00% 9 [kernel]"
check "--dsos /bin/pmc-burn,[unknown] --folded: by base name, and the placeholder" \
	test "$(run --folded --dsos /bin/pmc-burn,'[unknown]' "$tmp/mixed.data" \
		2>/dev/null)" = "$(printf '%s\n' "pmc-burn;main;[unknown] 2" \
		"worker;main;burn;hot_loop 1")"
check "--comm worker --script: one sample" \
	test "$(run --script --comm worker "$tmp/mixed.data" 2>/dev/null |
		grep -c ': task-clock:$')" = 1
for bad in "--pid x" "--tid -1" "--pid 4294967296" "--comm=" "--dso a,,b"; do
	# shellcheck disable=SC2086 # the option and its value
	run $bad "$tmp/burn.data" >/dev/null 2>"$tmp/err"
	status=$?
	check "$bad: usage error (status 2) naming the option" \
		eval 'test $status = 2 && grep -q "^pmc-report: ${bad%%[ =]*}" "$tmp/err"'
done

# --- build-ids -----------------------------------------------------------

# pmc-burn's build-id as binutils reads it; mkdata records it, or
# another, for /bin/pmc-burn after the kernel's records.
burn_id=$(readelf -n "$tools/pmc-burn" | awk '/Build ID:/ { print $3 }')
check "readelf gives pmc-burn's build-id" test -n "$burn_id"
check "mkdata writes buildid.data and badid.data" \
	eval 'mkdata "buildid:$burn_id" buildid "$hot" "$warm" &&
	      mkdata buildid:00112233445566778899aabbccddeeff00112233 badid "$hot" "$warm"'
run "$tmp/buildid.data" >"$tmp/out" 2>"$tmp/err"
check "build-id recorded and found the same: no warning, hot_loop named" \
	eval 'test ! -s "$tmp/err" && grep -q "hot_loop" "$tmp/out"'
run "$tmp/badid.data" >/dev/null 2>"$tmp/err"
check "build-id recorded and found differ: a warning with both ids" \
	grep -q "pmc-burn: not the file recorded as /bin/pmc-burn (build-id $burn_id, recorded 00112233445566778899aabbccddeeff00112233)" "$tmp/err"

# The dynamic host build (TOOLS_DIR/host/pmc-report, make STATIC=0)
# fetches a file that is not under --symfs by its recorded build-id
# from the servers in $DEBUGINFOD_URLS: here a local HTTP server that
# serves pmc-burn at debuginfod's /buildid/ID/executable.
host_report=$tools/host/pmc-report
if [ -x "$host_report" ] && [ -n "$burn_id" ]; then
	mkdir -p "$tmp/empty" "$tmp/srv/buildid/$burn_id"
	cp "$tools/pmc-burn" "$tmp/srv/buildid/$burn_id/executable"
	python3 -c 'import functools, http.server, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()' "$tmp/srv" "$tmp/port" 2>"$tmp/srv.log" &
	server=$!
	for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
	hrows() {
		"$host_report" --symfs "$tmp/empty" -s sym "$tmp/buildid.data" 2>"$tmp/err" |
			awk '/^# Overhead/ { t = 1; next } t && NF { $1 = $1; print }'
	}
	check "no debuginfod: pmc-burn not found under --symfs, hot_loop not named" \
		eval 'env -u DEBUGINFOD_URLS "$host_report" --symfs "$tmp/empty" -s sym \
			"$tmp/buildid.data" 2>&1 | grep -q "/bin/pmc-burn: no symbols" &&
		      ! env -u DEBUGINFOD_URLS "$host_report" --symfs "$tmp/empty" -s sym \
			"$tmp/buildid.data" 2>/dev/null | grep -q hot_loop'
	export DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$tmp/port")"
	export DEBUGINFOD_CACHE_PATH=$tmp/cache
	check "debuginfod: pmc-burn fetched by build-id, hot_loop and warm_loop named, no warning" \
		test "$(hrows)" = "$(printf '%s\n' "75.00% 300 hot_loop" "25.00% 100 warm_loop")" \
		     -a ! -s "$tmp/err"
	check "debuginfod: the server was asked for /buildid/$burn_id/executable" \
		grep -q "GET /buildid/$burn_id/executable HTTP" "$tmp/srv.log"
	unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
else
	for what in "no debuginfod" "debuginfod: fetched" "debuginfod: asked"; do
		n=$((n + 1))
		echo "ok $n - $what # SKIP no $host_report (make STATIC=0)"
	done
fi

# --- kernel symbols ------------------------------------------------------

# mixed.data's kernel IPs are 0xffffffff81000100 and its return address
# 0xffffffff81000200, of another boot: a System.map names them.
printf '%s\n' "ffffffff81000000 T entry_fake" "ffffffff81000080 t do_fake" \
	"ffffffff81000180 T ret_fake" "ffffffff81000190 D data_fake" \
	>"$tmp/System.map"
run --folded --kallsyms "$tmp/System.map" "$tmp/mixed.data" >"$tmp/out" 2>"$tmp/err"
check "--kallsyms System.map: kernel frames named, text symbols only" \
	grep -qxF "pmc-burn;main;burn;ret_fake_[k];do_fake_[k] 6" "$tmp/out"
check "--kallsyms: no warning about another boot" \
	test ! -s "$tmp/err"
run --folded --kallsyms "$tmp/none" "$tmp/mixed.data" >"$tmp/out" 2>"$tmp/err"
check "--kallsyms of a missing file: [kernel] frames, and a warning naming it" \
	eval 'grep -qF "burn;[kernel]_[k];[kernel]_[k] 6" "$tmp/out" &&
	      grep -q "$tmp/none: No such file" "$tmp/err"'

# --vmlinux: the same names from a kernel's ELF image, its code labels
# (the kernel's asm entry points) included and its data left out.
cat >"$tmp/vmlinux.s" <<'EOF'
	.text
	.globl	entry_fake
	.type	entry_fake, @function
entry_fake:
	.skip	0x80
	.size	entry_fake, 0x80
	.type	do_fake, @function
do_fake:
	.skip	0x100
	.size	do_fake, 0x100
ret_fake:			# a label, as entry_SYSCALL_64 is
	.skip	0x80
	.data
	.globl	data_fake
data_fake:
	.quad	0
EOF
check "an ELF kernel image at 0xffffffff81000000 builds" \
	eval '${CC:-cc} -c -o "$tmp/vmlinux.o" "$tmp/vmlinux.s" &&
	      ld -Ttext=0xffffffff81000000 -e entry_fake -o "$tmp/vmlinux" "$tmp/vmlinux.o"'
run --folded --vmlinux "$tmp/vmlinux" "$tmp/mixed.data" >"$tmp/out" 2>"$tmp/err"
check "--vmlinux: kernel frames named, a label included, no warning" \
	eval 'grep -qxF "pmc-burn;main;burn;ret_fake_[k];do_fake_[k] 6" "$tmp/out" &&
	      test ! -s "$tmp/err"'
run --folded --vmlinux "$tmp/System.map" "$tmp/mixed.data" >"$tmp/out" 2>"$tmp/err"
check "--vmlinux of a file that is no ELF image: [kernel] frames, a warning" \
	eval 'grep -qF "burn;[kernel]_[k];[kernel]_[k] 6" "$tmp/out" &&
	      grep -q "System.map: .*kernel symbols not resolved" "$tmp/err"'
run --vmlinux "$tmp/vmlinux" --kallsyms "$tmp/System.map" "$tmp/mixed.data" \
	>/dev/null 2>"$tmp/err"
check "--vmlinux with --kallsyms: usage error, exit status 2" test $? = 2
check "--vmlinux with --kallsyms: says to give one" grep -q "give one" "$tmp/err"

# --- --children ----------------------------------------------------------

check "--children: callers get rows; Children, then Self, sorts them" \
	test "$(rows --children -s sym "$tmp/burn.data")" = "$(printf '%s\n' \
		"100.00% 0.00% 0 burn" "100.00% 0.00% 0 main" \
		"75.00% 75.00% 300 hot_loop" "25.00% 25.00% 100 warm_loop")"
# The 6 system call samples have two [kernel] frames: counted once each.
check "--children: a function twice in a stack counts its sample once" \
	test "$(rows --children -s sym "$tmp/mixed.data" | grep ' \[kernel\]$')" = \
		"75.00% 75.00% 9 [kernel]"
run --children -n 1 "$tmp/burn.data" >"$tmp/out" 2>/dev/null
check "--children -n 1: the rest is counted in rows, not samples" \
	grep -qx "# \.\.\. 3 more rows" "$tmp/out"
run --children "$tmp/nochain.data" >/dev/null 2>"$tmp/err"
status=$?
check "--children without call chains: refused, saying why" \
	eval 'test $status = 1 && grep -q "needs a recording made with pmc-record -g" "$tmp/err"'
run --children --folded "$tmp/burn.data" >/dev/null 2>&1
check "--children --folded: usage error (status 2)" test $? = 2
run --children --percent-limit 1 "$tmp/burn.data" >"$tmp/out" 2>/dev/null
check "--children --percent-limit 1: the thread table keeps its rows" \
	awk '$1 == 100 && $3 == 300 { a = 1 } $1 == 101 && $3 == 100 { b = 1 }
	     END { exit !(a && b) }' "$tmp/out"
# Hundreds of rows, added as the stacks are walked, under call graphs:
# the same Children as without -G.
check "--children -G with hundreds of rows: the same columns as without -G" \
	eval 'test "$(rows --children -s srcline -n 0 "$tmp/few.data" | sort)" = \
		   "$(rows --children -G caller -s srcline -n 0 "$tmp/few.data" |
		      grep "^[0-9.]*% [0-9.]*% " | sort)" &&
	      test "$(rows --children -s srcline -n 0 "$tmp/few.data" | wc -l)" -gt 256'

# --- how many rows -------------------------------------------------------

check "-n 1: the top row, and what the others add up to" \
	test "$(run -n 1 -s symbol "$tmp/burn.data" 2>/dev/null |
		grep -E "^ *[0-9.]+%|^# \.\.\.")" = "$(printf '%s\n' \
		"    75.00%       300  hot_loop" \
		"# ... 1 more rows: 100 samples (25.00%)")"
check "--percent-limit 30: only rows of 30% or more" \
	test "$(rows --percent-limit 30 -s symbol "$tmp/burn.data" |
		grep -c "^[0-9.]*% ")" = 1
check "-n 0: every row" \
	test "$(rows -n 0 -s symbol "$tmp/burn.data" | grep -c "^[0-9.]*% ")" = 2
run -n 1.5 "$tmp/burn.data" >/dev/null 2>&1
check "-n 1.5: usage error, exit status 2" test $? = 2
run --percent-limit 101 "$tmp/burn.data" >/dev/null 2>&1
check "--percent-limit 101: usage error, exit status 2" test $? = 2

# --- flame graph ---------------------------------------------------------

run --svg "$tmp/flame.svg" "$tmp/burn.data" >"$tmp/out" 2>&1
check "--svg: exit status 0" test $? = 0
check "--svg: the report still goes to stdout" \
	grep -q "hot_loop" "$tmp/out"
check "--svg: well-formed, hot_loop with 300 of 400 samples" \
	python3 - "$tmp/flame.svg" <<'EOF'
import sys
import xml.etree.ElementTree as ET

ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
titles = [t.text for t in root.iter(ns + "title")]
assert "hot_loop (300 samples, 75.00%)" in titles, titles
assert "warm_loop (100 samples, 25.00%)" in titles, titles
assert "all (400 samples, 100.00%)" in titles, titles
assert root.find(ns + "script") is not None
EOF
if command -v rsvg-convert >/dev/null; then
	check "--svg: rsvg-convert renders it" \
		rsvg-convert -o "$tmp/flame.png" "$tmp/flame.svg"
else
	n=$((n + 1))
	echo "ok $n - --svg: rsvg-convert renders it # SKIP no rsvg-convert (librsvg2-bin)"
fi
run --folded --svg "$tmp/mixed.svg" "$tmp/mixed.data" >/dev/null 2>&1
check "--svg with --folded: well-formed" \
	python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' \
	"$tmp/mixed.svg"

# --- bad input -----------------------------------------------------------

# $1: expected status; $2: expected message; then pmc-report's arguments.
fails_with() {
	local status=$1 message=$2

	shift 2
	"$report" "$@" >/dev/null 2>"$tmp/err"
	[ $? = "$status" ] && grep -q "$message" "$tmp/err"
}
check "missing file: status 1, says so" \
	fails_with 1 "No such file or directory" "$tmp/missing.data"
: >"$tmp/empty.data"
check "empty file: status 1, says so" \
	fails_with 1 "too short to be a pmc-record file" "$tmp/empty.data"
head -c 3000 "$tmp/burn.data" >"$tmp/short.data"
check "truncated file: status 1, says so" \
	fails_with 1 "truncated: .* bytes of records" "$tmp/short.data"
printf 'GARBAGE!' | cat - "$tmp/burn.data" | head -c 1000 >"$tmp/garbage.data"
check "garbage magic: status 1, says so" \
	fails_with 1 "not a pmc-record data file (bad magic)" "$tmp/garbage.data"
head -c 3016 "$tmp/unfinished.data" >"$tmp/cut.data"
check "unfinished file cut inside a record: status 1, says so" \
	fails_with 1 "truncated \(file\|record header\)" "$tmp/cut.data"
check "unknown sort key: status 2, says so" \
	fails_with 2 "unknown sort key 'bogus'" -s comm,bogus "$tmp/burn.data"
# Without FILE, pmc.data in the current directory, as perf's perf.data.
check "no FILE and no pmc.data: status 1, names pmc.data" \
	sh -c 'cd "$1" && ! "$2" >/dev/null 2>"$1/err" && grep -q "pmc.data" "$1/err"' \
	sh "$tmp" "$report"
check "two FILEs: status 2, usage" fails_with 2 "usage:" a.data b.data

# Cut a file at every 13th byte, and overwrite every 29th byte of its
# records with 0xff: pmc-report must report or refuse each, never crash.
# never_crashes FILE FROM OPTIONS...: from byte FROM on; the corrupted
# files are read with OPTIONS, the cut ones with --folded.
never_crashes() {
	local file=$1 from=$2 size off status worst=0

	shift 2
	size=$(stat -c %s "$file")
	for ((off = from; off < size; off += 13)); do
		head -c $off "$file" >"$tmp/fuzz.data"
		"$report" --folded "$tmp/fuzz.data" >/dev/null 2>&1
		status=$?
		[ $status -gt $worst ] && worst=$status
	done
	for ((off = from; off < size; off += 29)); do
		cp "$file" "$tmp/fuzz.data"
		printf '\377' | dd of="$tmp/fuzz.data" bs=1 seek=$off \
			conv=notrunc status=none
		"$report" "$@" "$tmp/fuzz.data" >/dev/null 2>&1
		status=$?
		[ $status -gt $worst ] && worst=$status
	done
	[ $worst -le 1 ] || echo "# worst exit status $worst" >&2
	[ $worst -le 1 ]
}
check "cut and corrupted files: exit status 0 or 1, no crash" \
	never_crashes "$tmp/unfinished.data" 0 -G callee -s srcline
# Mappings laid over others, build-id records, filters, --children.
check "cut and corrupted mappings and build-ids: no crash" \
	never_crashes "$tmp/overlap.data" 0 --children -G caller -s sym,pid \
		--dso a.so,b.so --comm pmc-burn
# Its last 600 bytes: the build-id record and the samples before it.
check "cut and corrupted build-id records: no crash" \
	never_crashes "$tmp/buildid.data" $(($(stat -c %s "$tmp/buildid.data") - 600)) \
		--children -s dso,sym --tids 100,101

# --- man pages -----------------------------------------------------------

# Each tool's page renders without a warning, and names every long option
# its --help lists.
man_covers_help() {
	local page=$here/../man/man1/$1.1 opt missing=

	[ -f "$page" ] || { echo "# no $page" >&2; return 1; }
	[ -z "$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)" ] ||
		{ echo "# groff warns about $page" >&2; return 1; }
	for opt in $("$tools/$1" --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		# the page's source spells a - as \-
		grep -q -- "$(printf '%s' "$opt" | sed 's/-/\\\\-/g')" "$page" ||
			missing="$missing $opt"
	done
	[ -z "$missing" ] || echo "# $1.1 lacks$missing" >&2
	[ -z "$missing" ]
}
for tool in pmc-stat pmc-record pmc-report pmc-top; do
	if [ -x "$tools/$tool" ] && command -v groff >/dev/null; then
		check "man/man1/$tool.1: renders cleanly, has every option of --help" \
			man_covers_help "$tool"
	else
		n=$((n + 1))
		echo "ok $n - man/man1/$tool.1 # SKIP no $tool built, or no groff"
	fi
done

if command -v valgrind >/dev/null; then
	# The binary is static, so valgrind cannot follow malloc: it finds
	# wild accesses, not heap overruns, and glibc's startup looks
	# uninitialised to it.
	under_valgrind() {
		valgrind -q --error-exitcode=99 --undef-value-errors=no \
			"$report" --symfs "$tools" -G caller -s srcline \
			--svg "$tmp/v.svg" "$@" >/dev/null 2>"$tmp/err"
		[ $? != 99 ] || { grep -v "^pmc-report" "$tmp/err" >&2; false; }
	}
	check "valgrind: a file cut inside a record" \
		under_valgrind "$tmp/cut.data"
	check "valgrind: the mixed file" under_valgrind "$tmp/mixed.data"
else
	n=$((n + 1))
	echo "ok $n - valgrind # SKIP no valgrind"
fi

echo "1..$n"
[ $failed = 0 ]
