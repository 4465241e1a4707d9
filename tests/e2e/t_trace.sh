# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# --trace-denials: blocked operations are reported at exit on stderr, one
# "airlock: denied:" line each, naming the system call and the path.

test_trace_denials_names_path_and_syscall() {
	make_fake_secret
	# shellcheck disable=SC2016
	al --trace-denials -- /bin/sh -c '
		cat "$1" >/dev/null 2>&1
		./airlock-probe ptrace-attach >/dev/null
		cp ./airlock-probe /tmp/p && ./airlock-probe exec /tmp/p list >/dev/null
		exit 0' sh "$SECRET"
	assert_rc 0 "the traced command's own status"
	assert_contains "$ERR" "airlock: denied:" "denial lines"
	assert_match "$ERR" '^airlock: denied:.*ptrace' "a line naming ptrace"
	assert_match "$ERR" '^airlock: denied:.*/tmp/p' "a line naming the exec from /tmp"
	assert_match "$ERR" '^airlock: denied:.*id_rsa' "a line naming the secret's path"
}

test_trace_denials_quiet_when_nothing_denied() {
	al --trace-denials -- /bin/sh -c 'echo fine >"$0/ok.txt"; cat "$0/ok.txt"' "$WS"
	assert_rc 0 "a run with nothing denied"
	assert_eq "fine" "$OUT" "its output"
	assert_not_contains "$ERR" "airlock: denied:" "denial lines for a clean run"
	# Without the option, a denied run says nothing either.
	al -- ./airlock-probe ptrace-attach
	check_blocked ptrace-attach
	assert_not_contains "$ERR" "airlock: denied:" "denial lines without --trace-denials"
}

# The file calls of one run, as the decision log holds them: "syscall path
# reason", sorted, one per line (a file name, which this test chooses, has
# no spaces).
file_records() {
	python3 -c '
import json, sys
out = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    a = r.get("airlock", {})
    if a.get("kind") in ("file_denied", "exec_denied"):
        out.add("%s %s %s" % (r.get("unmapped", {}).get("syscall"), r["file"]["path"], r.get("message")))
print("\n".join(sorted(out)))' "$1"
}

# With the log on and nothing asked for, only the calls that change the
# tree, and exec, come to the supervisor, as notifications it notes
# without tracing: it names the refusal from what the sandbox's mounts,
# the file's mode and the Landlock rules will answer, before the kernel
# answers it. Every
# such refusal must be in the log as the tracer of --trace-denials, which
# sees each call's real result, records it: the same call, path and
# reason. The neighbours: a write the policy allows is in neither log,
# and each refused call really failed. (filesystem.protect is off: its
# creating calls are the guard's, which performs them and knows.)
test_log_notes_refused_writes_as_the_tracer_sees_them() {
	# A directory of the host the sandbox does not show (not below /tmp,
	# which the sandbox has a private one of: a miss there is its own).
	local hd
	hd=$(mktemp -d /var/tmp/airlock-e2e-hidden.XXXXXX) || fail "mktemp"
	printf '%s\n' "$hd" >>"$T/.rm_dirs"
	printf 'version: 1\nfilesystem:\n  protect_defaults: false\n' >"$T/policy.yaml"
	# shellcheck disable=SC2016
	local script='
		touch /usr/airlock-e2e-new 2>/dev/null || echo "touch: refused"
		mkdir /etc/airlock-e2e-dir 2>/dev/null || echo "mkdir: refused"
		rm -f /etc/hostname 2>/dev/null || echo "rm: refused"
		ln -s x /usr/airlock-e2e-link 2>/dev/null || echo "ln: refused"
		mv /etc/hosts /etc/airlock-e2e-hosts 2>/dev/null || echo "mv: refused"
		echo x 2>/dev/null >/etc/hostname || echo "trunc: refused"
		echo x 2>/dev/null >/dev/airlock-e2e || echo "dev: refused"
		mkdir /dev/airlock-e2e-dir 2>/dev/null || echo "devdir: refused"
		echo x >/dev/null && echo "devnull: ran"
		/usr/bin/python3 -c "
import os
for what, call in ((\"open-rw\", lambda: os.open(\"/etc/hostname\", os.O_RDWR)),
                   (\"truncate\", lambda: os.truncate(\"/etc/hostname\", 0)),
                   (\"hidden-dir\", lambda: os.open(\"$1/new\", os.O_CREAT | os.O_WRONLY, 0o644)),
                   (\"dirfd\", lambda: os.open(\"airlock-e2e-at\", os.O_CREAT | os.O_WRONLY, 0o644,
                                               dir_fd=os.open(\"/etc\", os.O_RDONLY | os.O_DIRECTORY)))):
    try:
        call()
        print(what + \": ran\")
    except OSError as e:
        print(what + \": refused\")
" 
		ln -s /usr usr-link && { touch usr-link/airlock-e2e-via 2>/dev/null || echo "via-link: refused"; }
		cp /bin/true /tmp/t && { /tmp/t 2>/dev/null || echo "exec: refused"; }
		echo fine > allowed.txt && echo "allowed: ran"'
	mkdir -p "$T/traced" "$T/noted"
	al --trace-denials --policy "$T/policy.yaml" --audit "$T/traced" -- /bin/sh -c "$script" sh "$hd"
	assert_rc 0 "the traced run"
	local traced_out=$OUT
	al --policy "$T/policy.yaml" --audit "$T/noted" -- /bin/sh -c "$script" sh "$hd"
	assert_rc 0 "the noted run"
	assert_eq "$traced_out" "$OUT" "both runs met the same answers"
	for w in touch mkdir rm ln mv trunc dev devdir open-rw truncate hidden-dir dirfd via-link exec; do
		assert_contains "$OUT" "$w: refused" "$w"
	done
	assert_contains "$OUT" "allowed: ran" "the allowed write"
	assert_contains "$OUT" "devnull: ran" "a write to /dev/null"
	local traced noted
	traced=$(file_records "$T"/traced/*.jsonl | grep -E '^(openat|open|creat|mkdir|mkdirat|unlink|unlinkat|rmdir|rename|renameat|renameat2|link|linkat|symlink|symlinkat|truncate|execve|execveat) ')
	noted=$(file_records "$T"/noted/*.jsonl)
	# The tracer sees reads too (an openat for reading of a hidden file):
	# compare the calls that write or exec, which both see.
	for r in "openat /usr/airlock-e2e-new EROFS [read-only]" "mkdir /etc/airlock-e2e-dir EROFS [read-only]" \
		"unlinkat /etc/hostname EROFS [read-only]" "symlinkat /usr/airlock-e2e-link EROFS [read-only]" \
		"openat /etc/hostname EACCES [filesystem]" "openat /etc/hostname EROFS [read-only]" \
		"truncate /etc/hostname EACCES [filesystem]" "renameat2 /etc/hosts EROFS [read-only]" \
		"openat $hd/new ENOENT [hidden: its directory exists outside the sandbox]" \
		"execve /tmp/t EACCES [filesystem]" "openat /dev/airlock-e2e EACCES [filesystem]" \
		"mkdir /dev/airlock-e2e-dir EACCES [filesystem]" "openat airlock-e2e-at EROFS [read-only]" \
		"openat usr-link/airlock-e2e-via EROFS [read-only]"; do
		assert_contains "$traced" "$r" "the tracer's record"
		assert_contains "$noted" "$r" "the noted record"
	done
	assert_eq "$traced" "$noted" "the records of both runs"
	assert_not_contains "$noted" "allowed.txt" "the allowed write in the log"
}
