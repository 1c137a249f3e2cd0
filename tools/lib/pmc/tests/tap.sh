# SPDX-License-Identifier: GPL-2.0
# TAP for the host test scripts (source it): `check NAME COMMAND...`
# prints "ok N - NAME" or "not ok N - NAME" by COMMAND's exit status;
# $n counts the checks and $failed the failures.
n=0
failed=0
check() {
	local name=$1

	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		failed=$((failed + 1))
	fi
}
