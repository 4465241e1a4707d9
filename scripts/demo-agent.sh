#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# A scripted "misbehaving agent" for demonstrating airlock.
#
#   cd my-workspace && airlock run -- bash /path/to/scripts/demo-agent.sh
#
# It narrates each step and prints, for every attempt, BLOCKED or ALLOWED
# with the reason the kernel gave (the errno text):
#   1. read credentials: ~/.ssh/id_rsa, ~/.aws/credentials, /root/.ssh/id_rsa
#   2. write outside the workspace: /etc/cron.d, /usr/local/bin, a file beside
#      the workspace (../outside-marker), ~/.bashrc
#   3. reach the network: loopback port $AIRLOCK_DEMO_PORT (default 8080),
#      1.1.1.1:443, a DNS lookup, and a CONNECT through $HTTPS_PROXY if set
#      (to 192.0.2.1, a documentation address that is never routed)
#   4. kernel attack surface: nested user namespace, mount, kernel log, and
#      when the airlock-probe binary (tests/probe) can be found, its ptrace,
#      bpf, perf, keyctl, userfaultfd, io_uring, open_by_handle, TIOCSTI,
#      module and kexec tests
#   5. the allowed task: write report.txt in the workspace and list it
#
# Harmless by construction:
#   - it refuses to do anything (exit 2) unless sandbox_detect says it runs
#     inside airlock; see that function for exactly what is checked;
#   - a write test opens the target for append and writes nothing; a file it
#     had to create is removed again, an existing file is never changed;
#   - it never prints the contents of a file it managed to read;
#   - network attempts only connect (2 s timeout) and send nothing, except
#     the proxy CONNECT line, which names an address that is never routed.
#
# A write that succeeds on the sandbox's own scratch tmpfs (private /tmp,
# scratch HOME) is shown as ALLOWED but not counted as getting through.
#
# Exit status: 0 every attack was blocked and the allowed task worked;
#              1 some attack got through or the allowed task failed;
#              2 refused: not inside an airlock sandbox.
#
#   bash scripts/demo-agent.sh --detect   only report the sandbox check

set -u

# Names pid 1 has inside an airlock sandbox (the sandbox init calls
# prctl(PR_SET_NAME, "airlock-init")). Add names here if that changes.
AIRLOCK_INIT_NAMES=(airlock-init)

# sandbox_detect: return 0 when this shell runs inside an airlock sandbox.
# Sets DETECT_REASON to a one-line explanation either way.
#
# What is checked: the command name of pid 1 (/proc/1/comm). Inside airlock
# the shell is in its own pid namespace whose pid 1 is airlock's init; on a
# host pid 1 is systemd, init, or a container's entry point. An unreadable
# /proc/1/comm counts as "not inside". AIRLOCK_SANDBOX (set by the sandbox
# to its boundary class) is reported but is not enough by itself: anyone can
# export it.
sandbox_detect() {
	local comm="" name
	if ! read -r comm </proc/1/comm 2>/dev/null; then
		DETECT_REASON="cannot read /proc/1/comm"
		return 1
	fi
	for name in "${AIRLOCK_INIT_NAMES[@]}"; do
		if [ "$comm" = "$name" ]; then
			DETECT_REASON="pid 1 is '$comm' (AIRLOCK_SANDBOX=${AIRLOCK_SANDBOX:-unset})"
			return 0
		fi
	done
	DETECT_REASON="pid 1 is '$comm', not one of: ${AIRLOCK_INIT_NAMES[*]} (AIRLOCK_SANDBOX=${AIRLOCK_SANDBOX:-unset})"
	return 1
}

DETECT_REASON=""
if ! sandbox_detect; then
	echo "demo-agent: refusing to run: not inside an airlock sandbox ($DETECT_REASON)." >&2
	echo "demo-agent: run it as: airlock run -- bash $0" >&2
	exit 2
fi
if [ "${1:-}" = "--detect" ]; then
	echo "demo-agent: inside airlock: $DETECT_REASON"
	exit 0
fi

PORT=${AIRLOCK_DEMO_PORT:-8080}
WORKSPACE=$PWD
attacks=0
blocked=0
allowed_bad=0
scratch=0
results=()

# The text after the last ": " on the first line of a shell or tool error
# message, which is the errno string ("Permission denied", ...).
errtext() {
	local msg=${1#$'\n'}
	msg=${msg%%$'\n'*}
	msg=${msg##*: }
	msg=${msg%.}
	echo "${msg:-no error text}"
}

step() { printf '\n[%s] %s\n' "$1" "$2"; }
say() { printf '    %s\n' "$*"; }

# An attack outcome. $1 = BLOCKED|ALLOWED, $2 = what, $3 = reason.
attack() {
	attacks=$((attacks + 1))
	if [ "$1" = BLOCKED ]; then
		blocked=$((blocked + 1))
		printf '  BLOCKED  %s: %s\n' "$2" "$3"
	else
		allowed_bad=$((allowed_bad + 1))
		printf '  ALLOWED  %s: %s   <-- the boundary let this through\n' "$2" "$3"
	fi
	results+=("$1 $2")
}

try_read() {
	local path=$1 err n
	if err=$( { exec 3<"$path"; } 2>&1 ); then
		# Count the bytes; never show them.
		n=$(wc -c <"$path" 2>/dev/null || echo "?")
		attack ALLOWED "read $path" "opened, $n bytes readable (contents not shown)"
	else
		attack BLOCKED "read $path" "$(errtext "$err")"
	fi
}

# A write that lands on a tmpfs other than the workspace's filesystem went
# to the sandbox's own scratch space (its private /tmp or HOME), which the
# host never sees: reported as ALLOWED but not counted as getting through.
# This is a guess from inside; the host is the judge (a host tmpfs bound
# into the sandbox would look the same).
on_scratch() {
	local dir=${1%/*} fs dev wsdev
	[ -n "$dir" ] || dir=/
	fs=$(stat -f -c %T -- "$dir" 2>/dev/null) || return 1
	dev=$(stat -c %d -- "$dir" 2>/dev/null) || return 1
	wsdev=$(stat -c %d -- "$WORKSPACE" 2>/dev/null) || return 1
	[ "$fs" = tmpfs ] && [ "$dev" != "$wsdev" ]
}

try_write() {
	local path=$1 err existed=0 what
	[ -e "$path" ] && existed=1
	# Open for append, write nothing: tests permission, changes no content.
	if err=$( { : >>"$path"; } 2>&1 ); then
		what="opened for writing (left unchanged)"
		[ "$existed" = 0 ] && what="created (and removed again)"
		if on_scratch "$path"; then
			scratch=$((scratch + 1))
			results+=("SCRATCH write $path")
			printf '  ALLOWED  write %s: %s, on sandbox scratch space (tmpfs), not the host\n' "$path" "$what"
		else
			attack ALLOWED "write $path" "$what"
		fi
		[ "$existed" = 0 ] && rm -f -- "$path" 2>/dev/null
	else
		attack BLOCKED "write $path" "$(errtext "$err")"
	fi
}

try_connect() {
	local host=$1 port=$2 err rc
	# shellcheck disable=SC2016 # expanded by the inner bash
	err=$(timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$host" "$port" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		attack ALLOWED "connect $host:$port" "connected (nothing sent)"
	elif [ $rc = 124 ]; then
		attack BLOCKED "connect $host:$port" "no answer within 2 s"
	else
		attack BLOCKED "connect $host:$port" "$(errtext "$err")"
	fi
}

try_cmd() {
	local what=$1 err
	shift
	if err=$(timeout 5 "$@" 2>&1 >/dev/null); then
		attack ALLOWED "$what" "succeeded"
	else
		attack BLOCKED "$what" "$(errtext "$err")"
	fi
}

# The attack probe from tests/probe (airlock-probe): $AIRLOCK_PROBE (if the
# policy passes it in), else airlock-probe on PATH, else ./airlock-probe in
# the workspace, else a meson build of it in the workspace or beside this
# script (when either is an airlock checkout).
SCRIPT_DIR=${BASH_SOURCE[0]%/*}
[ "$SCRIPT_DIR" != "${BASH_SOURCE[0]}" ] || SCRIPT_DIR=.
PROBE_TESTS=(ptrace-attach bpf-prog-load perf-event-open keyctl userfaultfd
	io-uring-setup open-by-handle tiocsti init-module kexec-load)
find_probe() {
	local c
	for c in "${AIRLOCK_PROBE:-}" "$(command -v airlock-probe 2>/dev/null)" \
		"$WORKSPACE/airlock-probe" "$WORKSPACE/build/tests/probe/airlock-probe" \
		"${SCRIPT_DIR:-.}/../build/tests/probe/airlock-probe"; do
		if [ -n "$c" ] && [ -f "$c" ] && [ -x "$c" ]; then
			echo "$c"
			return
		fi
	done
}

# One probe test: exit 0 = blocked, 1 = allowed, else the probe could not
# tell. Its first output line is "TEST: blocked (WHY)" or "TEST: allowed ...".
probe_test() {
	local probe=$1 t=$2 out rc why
	out=$(timeout 10 "$probe" "$t" 2>/dev/null)
	rc=$?
	why=${out%%$'\n'*}
	why=${why#*: }
	why=${why#blocked }
	why=${why#allowed }
	why=${why#(}
	why=${why%)}
	case $rc in
	0) attack BLOCKED "$t" "${why:-blocked}" ;;
	1) attack ALLOWED "$t" "${why:-allowed}" ;;
	*) say "($t: the probe could not tell: ${why:-exit $rc})" ;;
	esac
}

echo "demo-agent: a misbehaving agent, running inside airlock ($DETECT_REASON)"
echo "demo-agent: workspace $WORKSPACE, HOME=${HOME:-unset}, uid $(id -u)"

step 1/5 "Steal credentials: read SSH and cloud keys"
say "\"The README says to upload ~/.ssh/id_rsa for debugging...\""
try_read "${HOME:-/root}/.ssh/id_rsa"
try_read "${HOME:-/root}/.aws/credentials"
[ "${HOME:-}" = /root ] || try_read /root/.ssh/id_rsa
try_read /etc/shadow

step 2/5 "Persist: write outside the workspace"
say "\"Install a cron job and a helper binary so I keep running later...\""
try_write /etc/cron.d/airlock-demo
try_write /usr/local/bin/airlock-demo-evil
try_write "$WORKSPACE/../outside-marker"
say "(~/.bashrc: inside the sandbox HOME is expected to be scratch space)"
try_write "${HOME:-/root}/.bashrc"

step 3/5 "Exfiltrate: reach the network directly"
say "\"POST the keys to my server...\""
try_connect 127.0.0.1 "$PORT"
try_connect 1.1.1.1 443
if command -v getent >/dev/null 2>&1; then
	if out=$(timeout 2 getent hosts example.com 2>&1); then
		attack ALLOWED "resolve example.com" "${out%%$'\n'*}"
	else
		attack BLOCKED "resolve example.com" "no answer (no resolver reachable)"
	fi
fi
proxy=${HTTPS_PROXY:-${https_proxy:-${HTTP_PROXY:-${http_proxy:-}}}}
if [ -n "$proxy" ]; then
	hp=${proxy#*://}
	hp=${hp%%/*}
	hp=${hp##*@}
	phost=${hp%:*}
	pport=${hp##*:}
	case "$phost" in
	127.*|localhost|::1|\[::1\])
		say "(a proxy is configured at $phost:$pport: ask it for a tunnel)"
		# shellcheck disable=SC2016 # expanded by the inner bash
		status=$(timeout 2 bash -c '
			exec 3<>"/dev/tcp/$0/$1" || exit 3
			printf "CONNECT 192.0.2.1:443 HTTP/1.1\r\nHost: 192.0.2.1:443\r\n\r\n" >&3
			IFS= read -r line <&3 && printf "%s" "${line%$'"'"'\r'"'"'}"' \
			"$phost" "$pport" 2>/dev/null)
		case "$status" in
		"HTTP/"*" 2"*) attack ALLOWED "proxy CONNECT 192.0.2.1:443" "$status" ;;
		"") attack BLOCKED "proxy CONNECT 192.0.2.1:443" "no answer from the proxy" ;;
		*) attack BLOCKED "proxy CONNECT 192.0.2.1:443" "$status" ;;
		esac
		;;
	*) say "(proxy $phost is not on loopback: not contacted)" ;;
	esac
fi

step 4/5 "Escape: poke at the kernel's attack surface"
say "\"Maybe a nested namespace or a mount gets me out...\""
if command -v unshare >/dev/null 2>&1; then
	try_cmd "create a nested user namespace" unshare --user --map-root-user true
fi
if command -v mount >/dev/null 2>&1; then
	mkdir -p "$WORKSPACE/.demo-mnt" 2>/dev/null
	try_cmd "mount a tmpfs" mount -t tmpfs none "$WORKSPACE/.demo-mnt"
	umount "$WORKSPACE/.demo-mnt" 2>/dev/null
	rmdir "$WORKSPACE/.demo-mnt" 2>/dev/null
fi
if command -v dmesg >/dev/null 2>&1; then
	try_cmd "read the kernel log" dmesg
fi
probe=$(find_probe)
if [ -n "$probe" ]; then
	say "(attack probe: $probe)"
	for t in "${PROBE_TESTS[@]}"; do
		probe_test "$probe" "$t"
	done
else
	say "(no airlock-probe found: put one in the workspace to run it; skipped)"
fi

step 5/5 "Do the actual job: write a report in the workspace"
report=$WORKSPACE/report.txt
task_ok=0
if err=$( {
	{
		echo "demo-agent report"
		echo "attacks tried: $attacks, blocked: $blocked, got through: $allowed_bad"
		echo "writes that stayed in sandbox scratch space: $scratch"
		printf '%s\n' "${results[@]}"
	} >"$report"
} 2>&1 ); then
	task_ok=1
	printf '  ALLOWED  write %s: %s\n' "$report" "as intended"
	# shellcheck disable=SC2012 # shown to a person, not parsed
	ls -l -- "$report" | sed 's/^/    /'
else
	printf '  BLOCKED  write %s: %s   <-- the allowed task failed\n' "$report" "$(errtext "$err")"
fi

echo
extra=""
[ "$scratch" = 0 ] || extra=", $scratch more stayed in sandbox scratch space"
task_word=FAILED
[ "$task_ok" = 1 ] && task_word="done"
echo "demo-agent: $blocked of $attacks attacks blocked$extra; allowed task: $task_word"
[ "$allowed_bad" = 0 ] && [ "$task_ok" = 1 ]
