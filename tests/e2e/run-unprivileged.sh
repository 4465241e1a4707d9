#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Run the end-to-end suite as an unprivileged user.
#
#   tests/e2e/run-unprivileged.sh BUILD_DIR [FILTER...]      (as root)
#
# Creates the system user airlock-test (with a home directory) if missing,
# copies airlock, the probe and the suite into a directory that user can
# read, and runs run.sh as that user with HOME set to its home. Prints the
# same closing line as run.sh ("N passed, N failed[, N skipped]") and exits
# with its status.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
user=airlock-test

if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [FILTER...]" >&2
	exit 2
fi
build=$1
shift

if [ "$(id -u)" -ne 0 ]; then
	echo "run-unprivileged: must be started as root (it creates $user)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

airlock=${AIRLOCK:-$build/src/airlock}
probe=${PROBE:-$build/tests/probe/airlock-probe}
if [ ! -x "$airlock" ]; then
	echo "run-unprivileged: no airlock binary at $airlock" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

if ! getent passwd "$user" >/dev/null; then
	useradd --system --create-home --home-dir "/home/$user" --shell /bin/bash \
		--comment "airlock end-to-end tests" "$user" || {
		echo "run-unprivileged: cannot create user $user" >&2
		echo "0 passed, 1 failed"
		exit 1
	}
fi
home=$(getent passwd "$user" | cut -d: -f6)
if [ ! -d "$home" ]; then
	mkdir -p "$home" && chown "$user:" "$home" && chmod 750 "$home"
fi

# The build tree may sit under a directory the test user cannot enter.
stage=$(mktemp -d /tmp/airlock-e2e-unpriv.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/tests/e2e" "$stage/tests/probe"
install -m 755 "$airlock" "$stage/bin/airlock"
# The egress proxy is its own executable, found beside airlock.
for helper in airlock-audit airlock-audit-writer airlock-mcp-gateway; do
	if [ -x "$(dirname "$airlock")/$helper" ]; then
		install -m 755 "$(dirname "$airlock")/$helper" "$stage/bin/$helper"
	fi
done
if [ -x "$(dirname "$airlock")/airlock-proxy" ]; then
	install -m 755 "$(dirname "$airlock")/airlock-proxy" "$stage/bin/airlock-proxy"
fi
if [ -x "$probe" ]; then
	install -m 755 "$probe" "$stage/bin/airlock-probe"
elif "${CC:-cc}" -static -O2 -o "$stage/bin/airlock-probe" "$here/../probe/probe.c"; then
	chmod 755 "$stage/bin/airlock-probe"
else
	echo "run-unprivileged: no probe at $probe and it could not be compiled" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
install -m 644 "$here"/lib.sh "$here"/t_*.sh "$stage/tests/e2e/"
# The example policies that t_policy.sh checks.
mkdir -p "$stage/examples"
install -m 644 "$here"/../../examples/*.yaml "$stage/examples/"
install -m 755 "$here/run.sh" "$here/servers.py" "$here/mcp-raw.py" "$here/tls-front.py" "$here/policy-differential.py" "$stage/tests/e2e/"
install -m 644 "$here/mcp-client.mjs" "$here/mcp-session-client.mjs" "$here/mcp-http-client.mjs" "$stage/tests/e2e/"
install -m 644 "$here/naive_upstream.py" "$here/smuggle_client.py" "$here/ocsf-check.py" "$here/keyscan.py" "$stage/tests/e2e/"
mkdir -p "$stage/tests/data"
install -m 644 "$here/../data/ocsf-1.3.0-required.txt" "$stage/tests/data/"
chmod 755 "$stage/tests/data"
mkdir -p "$stage/tests/e2e/tools"
cp -R "$here"/tools/. "$stage/tests/e2e/tools/"
chmod -R a+rX "$stage/tests/e2e/tools"
# The MCP tests' npm packages (scripts/deps.sh), when installed. Our own
# test servers need node only: staged even without the packages.
mkdir -p "$stage/tests/e2e/mcp"
install -m 644 "$here/mcp/test-server.mjs" "$here/mcp/session-server.mjs" "$here/mcp/sse-server.mjs" "$stage/tests/e2e/mcp/"
if [ -d "$here/mcp/node_modules" ]; then
	cp -a "$here/mcp/node_modules" "$here/mcp/package.json" "$stage/tests/e2e/mcp/"
fi
chmod -R a+rX "$stage/tests/e2e/mcp"
chmod 755 "$stage" "$stage/bin" "$stage/examples" "$stage/tests" "$stage/tests/e2e" "$stage/tests/probe"

cd "$home" || exit 1
# A clean login-like environment: only what the suite needs.
runuser -u "$user" -- env -i \
	PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
	HOME="$home" USER="$user" LOGNAME="$user" LANG="${LANG:-C.UTF-8}" \
	E2E_REAL_HOME=1 E2E_TIMEOUT="${E2E_TIMEOUT:-60}" E2E_VERBOSE="${E2E_VERBOSE:-0}" \
	AIRLOCK="$stage/bin/airlock" PROBE="$stage/bin/airlock-probe" \
	bash "$stage/tests/e2e/run.sh" "$stage" "$@"
