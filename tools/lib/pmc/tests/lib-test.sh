#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# libpmc as a distribution would ship it, on the host:
#
#	lib-test.sh OUTDIR
#
# `make install` into OUTDIR/root (DESTDIR, PREFIX=/usr); the shared
# library exports exactly the functions libpmc.h declares, each at a
# LIBPMC_ version; a program builds with `pkg-config libpmc` and links
# libpmc.so.0; the maps and error explainer pass their unit checks. It
# leaves OUTDIR/count-region, that example linked against the installed
# libpmc.so.0, for a guest to run. Compiles against $KHDR_INCLUDES if set.
# Prints a TAP line per check; exits 1 if any failed.
set -u

[ $# = 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1" && out=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$here/.." && pwd)
root=$out/root
khdr=${KHDR_INCLUDES:--isystem $lib/../../../usr/include}

. "$here/tap.sh"

rm -rf "$root" "$out/build"
make -s -C "$lib" OUTPUT="$out/build/" KHDR_INCLUDES="$khdr" \
	DESTDIR="$root" PREFIX=/usr install > "$out/install.log" 2>&1
check "make install: exit status 0 (see $out/install.log)" test $? = 0
so=$(readlink "$root/usr/lib/libpmc.so.0")
check "make install: header, archive, libpmc.so -> libpmc.so.0 -> $so, libpmc.pc" \
	test -f "$root/usr/include/libpmc.h" -a -f "$root/usr/lib/libpmc.a" \
	     -a "$(readlink "$root/usr/lib/libpmc.so")" = libpmc.so.0 \
	     -a -f "$root/usr/lib/$so" -a -f "$root/usr/lib/pkgconfig/libpmc.pc"
check "libpmc.so.0's soname is libpmc.so.0" \
	grep -q "SONAME.*\[libpmc.so.0\]" <(readelf -d "$root/usr/lib/$so")

# The header's functions (not its static inlines) against the exports.
declared=$(sed -n '/^static /!s/^[a-z_].*[ *]\(pmc_[a-z0-9_]*\)(.*/\1/p' \
	   "$root/usr/include/libpmc.h" | sort -u)
exported=$(nm -D --defined-only "$root/usr/lib/$so" |
	   awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u)
check "libpmc.so exports exactly the $(echo "$declared" | wc -l) functions libpmc.h declares" \
	diff <(echo "$declared") <(echo "$exported")
check "every export carries a LIBPMC_ version (libpmc.map)" \
	test -z "$(objdump -T "$root/usr/lib/$so" |
		   awk '/ DF .*\.text/ && $(NF - 1) !~ /^LIBPMC_/')"

# A program built the way its users would: pkg-config, then -lpmc.
pc() {
	PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/lib/pkgconfig \
		pkg-config "$@" libpmc
}
check "pkg-config: libpmc $(pc --modversion 2>/dev/null), -lpmc" \
	grep -q -- "-lpmc" <(pc --libs)
# shellcheck disable=SC2046 # pkg-config's words
gcc -O2 -Wall -Werror $khdr $(pc --cflags) -o "$out/count-region" \
	"$lib/examples/count-region.c" $(pc --libs) \
	-Wl,-rpath,"$root/usr/lib" 2> "$out/count-region.err"
check "count-region builds with pkg-config's flags (see $out/count-region.err)" \
	test $? = 0
check "count-region links libpmc.so.0, its calls at LIBPMC_0.1" \
	test -n "$(readelf -d "$out/count-region" | grep "NEEDED.*\[libpmc.so.0\]")" \
	     -a -n "$(objdump -T "$out/count-region" | grep "(LIBPMC_0.1) *pmc_evlist_open$")"
check "ldd finds the installed libpmc.so.0" \
	grep -q "libpmc.so.0 => $root/usr/lib/libpmc.so.0" <(ldd "$out/count-region")

# shellcheck disable=SC2046
gcc -O2 -Wall -Werror $khdr $(pc --cflags) -o "$out/unit" "$here/unit.c" \
	$(pc --libs) -lpthread -Wl,-rpath,"$root/usr/lib" 2> "$out/unit.err"
check "unit.c builds (see $out/unit.err)" test $? = 0
"$out/unit" | sed 's/^\(\(not \)\?ok\) [0-9]* - /\1 - unit: /' > "$out/unit.out"
while read -r line; do
	check "${line#* - }" test "${line%% - *}" = ok
done < "$out/unit.out"
check "unit: every check ran (18)" test "$(wc -l < "$out/unit.out")" = 18

echo "lib-test: $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
