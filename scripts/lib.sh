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

log() { printf '[%s] %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }
