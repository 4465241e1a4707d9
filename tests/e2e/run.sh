#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# End-to-end tests of the real airlock binary.
#
#   tests/e2e/run.sh BUILD_DIR [FILTER...]
#
# BUILD_DIR is a meson build directory: airlock is BUILD_DIR/src/airlock and
# the probe BUILD_DIR/tests/probe/airlock-probe. AIRLOCK and PROBE in the
# environment override both (run-unprivileged.sh uses that). Without a built
# probe, one is compiled from tests/probe/probe.c with ${CC:-cc} -static.
# FILTER arguments keep only the tests whose function or file name contains
# one of them; E2E_EXCLUDE (words separated by spaces) leaves out those whose
# name contains one of its words.
#
# Runs every test_* function of every tests/e2e/t_*.sh, as whoever calls it
# (root or not), and ends with the line "N passed, N failed[, N skipped]".
# Exit status: 0 when nothing failed.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [FILTER...]" >&2
	exit 2
fi
build=$1
shift
filters=("$@")

AIRLOCK=${AIRLOCK:-$build/src/airlock}
PROBE=${PROBE:-$build/tests/probe/airlock-probe}

# shellcheck source=tests/e2e/lib.sh
. "$here/lib.sh"

if [ ! -x "$AIRLOCK" ]; then
	echo "e2e: no airlock binary at $AIRLOCK (build with ninja -C $build)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
AIRLOCK=$(cd "$(dirname "$AIRLOCK")" && pwd)/$(basename "$AIRLOCK")

probe_tmp=
if [ ! -x "$PROBE" ]; then
	probe_tmp=$(mktemp -d /tmp/airlock-e2e-probe.XXXXXX)
	trap 'rm -rf "$probe_tmp"' EXIT
	if ! "${CC:-cc}" -static -O2 -o "$probe_tmp/airlock-probe" "$here/../probe/probe.c"; then
		echo "e2e: no probe at $PROBE and it could not be compiled" >&2
		echo "0 passed, 1 failed"
		exit 1
	fi
	PROBE=$probe_tmp/airlock-probe
fi
PROBE=$(cd "$(dirname "$PROBE")" && pwd)/$(basename "$PROBE")
export AIRLOCK PROBE

wanted() { # FILE FUNCTION
	local f
	for f in ${E2E_EXCLUDE:-}; do
		case "$1/$2" in *"$f"*) return 1 ;; esac
	done
	[ ${#filters[@]} -eq 0 ] && return 0
	for f in "${filters[@]}"; do
		case "$1/$2" in *"$f"*) return 0 ;; esac
	done
	return 1
}

echo "airlock e2e: uid $(id -u) ($(id -un)), airlock=$AIRLOCK, probe=$PROBE"

for file in "$here"/t_*.sh; do
	# Each file's functions only: forget the previous file's.
	for fn in $(declare -F | awk '$3 ~ /^test_/ { print $3 }'); do
		unset -f "$fn"
	done
	# shellcheck source=/dev/null
	. "$file"
	echo "# $(basename "$file")"
	for fn in $(grep -o '^test_[A-Za-z0-9_]*' "$file"); do
		wanted "$(basename "$file")" "$fn" || continue
		e2e_run_test "$fn"
	done
done

e2e_summary
