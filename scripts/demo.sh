#!/usr/bin/env bash
# The airlock demo: build, then run a scripted misbehaving agent under the
# built-in default policy and show what airlock blocked.
#
#   ./scripts/demo.sh
#
# The agent tries to read SSH and cloud credentials from a home directory,
# write outside its workspace, reach a service on the host's loopback and the
# internet, and poke the kernel; then it does its allowed task (writes a
# report in the workspace). Its home is a throwaway directory with fake
# secrets, so nothing real is involved.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
"$root/scripts/build.sh" build
airlock=$root/build/src/airlock
probe=$root/build/tests/probe/airlock-probe

demo=$(mktemp -d /tmp/airlock-demo.XXXXXX)
listener=
cleanup() {
	[ -n "$listener" ] && kill "$listener" 2>/dev/null
	rm -rf "$demo"
}
trap cleanup EXIT

# A fake home with secrets in the usual places.
mkdir -p "$demo/home/.ssh" "$demo/home/.aws" "$demo/workspace"
echo "-----BEGIN OPENSSH PRIVATE KEY----- (demo, not a real key)" >"$demo/home/.ssh/id_rsa"
printf '[default]\naws_secret_access_key = DEMO-NOT-REAL\n' >"$demo/home/.aws/credentials"
chmod 700 "$demo/home/.ssh" && chmod 600 "$demo/home/.ssh/id_rsa"
cp "$root/scripts/demo-agent.sh" "$demo/workspace/agent.sh"
[ -x "$probe" ] && cp "$probe" "$demo/workspace/airlock-probe"
if [ "$(id -u)" -eq 0 ]; then
	# Started as root, the agent runs as an unprivileged uid: let it into
	# the demo directory the way a user's own project would be.
	chmod 755 "$demo"
fi

# A service on the host's loopback that the agent must not reach.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 "$port" >/dev/null 2>&1 &
listener=$!

echo "== airlock demo: the built-in default policy ($(airlock_v() { "$airlock" version; }; airlock_v))"
echo "== workspace: $demo/workspace (read-write); home: $demo/home (hidden); host service: 127.0.0.1:$port"
echo
set +e
# The default policy clears the environment, so the agent's settings go on
# its command line.
(cd "$demo/workspace" && HOME="$demo/home" "$airlock" run --trace-denials -- \
	env AIRLOCK_DEMO_PORT="$port" AIRLOCK_PROBE=./airlock-probe bash ./agent.sh)
status=$?
set -e
echo
echo "== after the run, on the host:"
if [ -f "$demo/workspace/report.txt" ]; then
	echo "   the allowed task's report is in the workspace: $(wc -c <"$demo/workspace/report.txt") bytes"
fi
if [ -e "$demo/outside-marker" ]; then
	echo "   FAIL: the agent wrote beside its workspace"
	exit 1
fi
echo "   nothing was written outside the workspace; the fake secrets were never visible"
echo "== demo agent exit status: $status (0 = every attack blocked, the allowed task done)"
exit "$status"
