# SPDX-License-Identifier: GPL-2.0
# Common settings for the events-lite build scripts (sourced, not run).

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$TOP/build
BASE=$BUILD/base		# pristine base tree, one git commit "base"
STAGE=$BUILD/stage		# where the series is generated and git am'ed
SRC=$BUILD/src			# patched tree the kernels are built from
PKG_DIR=$BUILD/pkg		# the Debian linux-source tarball and its version
BASE_TARBALL=${BASE_TARBALL:-$PKG_DIR/linux-source.tar.xz}

# Deterministic git: no user config, fixed identity and dates.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="events-lite developers" GIT_AUTHOR_EMAIL="events-lite@example.org"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
export GIT_AUTHOR_DATE="2026-11-21T00:00:00+0000" GIT_COMMITTER_DATE="2026-11-21T00:00:00+0000"
export TZ=UTC LC_ALL=C

# ccache for the kernel builds (CC="ccache gcc"). Depend mode: on a miss
# ccache learns the included files from the compiler's own -MMD output
# instead of running the preprocessor once more, and a new machine's
# empty cache costs no more than building without ccache (arm64 kernel/
# and mm/, 239 objects on 2 CPUs: 155 s without ccache, 242 s with its
# default mode, 145 s in depend mode; 12 s once cached).
export CCACHE_DEPEND=${CCACHE_DEPEND:-1}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}

log() { printf '[%s] %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The leak checks count the pmc slab caches in /proc/slabinfo. Since 7.x
# SLUB keeps freed objects in per-CPU sheaves that count as active, and
# shrinking does not always empty them; slab_debug on the two caches
# turns their sheaves off (and poisons and red-zones the objects). The
# boot arguments of a guest that runs them.
LEAK_ARGS="slab_debug=FZPU,pmc_counter,pmc_context"

# The series' patches, in the order they apply, without the cover letters.
patch_files() {
	ls "$TOP"/patches/*/*.patch | grep -v 0000-cover-letter
}

# tap_totals LOG: add up the kselftest "# Totals:" lines of a guest log.
# Prints: passed failed skipped parts (errors count as failures).
tap_totals() {
	awk '
		/# Totals: pass:/ {
			for (i = 1; i <= NF; i++) {
				split($i, kv, ":")
				if (kv[1] == "pass") p += kv[2]
				if (kv[1] == "fail" || kv[1] == "error") f += kv[2]
				if (kv[1] == "skip") s += kv[2]
			}
			n++
		}
		END { print p + 0, f + 0, s + 0, n + 0 }' "$1"
}

# fresh_for_headers OUT HDR: the programs in OUT depend on the UAPI
# headers in HDR, which make cannot see: empty OUT when they changed.
fresh_for_headers() {
	local out=$1 hdr=$2 sum
	sum=$(cat "$hdr"/linux/pmc.h "$hdr"/asm/unistd*.h 2>/dev/null | sha1sum | cut -d' ' -f1)
	[ "$(cat "$out/.headers" 2>/dev/null)" = "$sum" ] || rm -rf "$out"
	mkdir -p "$out"
	echo "$sum" > "$out/.headers"
}

# configure_kernel NAME SRC OBJ FRAGMENT...: (re)generate OBJ/.config as
# tinyconfig plus the fragments, only when a fragment changed, and fail
# if an option did not stick. The caller defines kmake (make for OBJ).
configure_kernel() {
	local name=$1 src=$2 obj=$3 sum opt
	shift 3
	sum=$(cat "$@" | sha1sum | cut -d' ' -f1)
	if [ "$(cat "$obj/.fragments" 2>/dev/null)" != "$sum" ] || [ ! -f "$obj/.config" ]; then
		log "configuring $name kernel"
		kmake tinyconfig >/dev/null
		KCONFIG_CONFIG="$obj/.config" "$src/scripts/kconfig/merge_config.sh" \
			-m -O "$obj" "$obj/.config" "$@" >/dev/null
		kmake olddefconfig >/dev/null
		for opt in $(grep -ho '^CONFIG_[A-Z0-9_]*=[ym]' "$@"); do
			grep -qx "$opt" "$obj/.config" ||
				die "$name config: $opt did not stick (missing dependency?)"
		done
		echo "$sum" > "$obj/.fragments"
	fi
}
