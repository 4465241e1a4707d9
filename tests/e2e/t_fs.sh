# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The filesystem view: secrets in HOME unreachable, writes only to the
# workspace, exec only from the baseline and the workspace, private /tmp.

test_ssh_key_unreadable_workspace_readable() {
	make_fake_secret
	printf 'notes\n' >"$WS/notes.txt"
	expect_blocked read "$SECRET"
	expect_blocked stat "$SECRET"
	expect_blocked read "$E2E_HOME/.ssh"
	expect_ok read-ok "$WS/notes.txt"
	# And through a shell, as an agent would try it.
	al -- sh -c "cat '$SECRET'; echo rc=\$?"
	assert_not_contains "$OUT" "$E2E_FAKE_MARK" "the key's content"
	assert_contains "$OUT" "rc=1" "cat of the key fails"
	al -- cat "$WS/notes.txt"
	assert_rc 0 "cat of a workspace file"
	assert_eq "notes" "$OUT" "workspace file content"
}

test_home_is_empty_private_scratch() {
	make_fake_secret
	make_home_file visible-outside
	al -- sh -c 'printf "%s\n" "$HOME"; ls -A "$HOME" | wc -l'
	assert_rc 0 "listing HOME inside"
	assert_eq "$E2E_HOME" "$(printf '%s\n' "$OUT" | sed -n 1p)" "HOME inside"
	assert_eq "0" "$(printf '%s\n' "$OUT" | sed -n 2p | tr -d ' ')" "entries in HOME inside"
	expect_blocked stat "$HOME_FILE"
	# HOME is writable scratch, and what is written there stays there.
	track_probe_write "$E2E_HOME/airlock-e2e-scratch.txt"
	expect_ok write-ok "$E2E_HOME/airlock-e2e-scratch.txt"
	assert_no_file "$E2E_HOME/airlock-e2e-scratch.txt" "a file written to HOME inside, seen outside"
}

test_write_outside_workspace_fails_inside_works() {
	local f
	for f in /etc/airlock-e2e-probe /usr/airlock-e2e-probe "$E2E_HOME/../airlock-e2e-probe-sibling"; do
		track_probe_write "$f"
	done
	expect_blocked write /etc/airlock-e2e-probe
	assert_no_file /etc/airlock-e2e-probe "a file the sandbox tried to create in /etc"
	expect_blocked write /usr/airlock-e2e-probe
	assert_no_file /usr/airlock-e2e-probe "a file the sandbox tried to create in /usr"
	expect_blocked write /etc/passwd
	expect_blocked write "$E2E_HOME/../airlock-e2e-probe-sibling"
	expect_ok write-ok "$WS/created-inside.txt"
	assert_file "$WS/created-inside.txt" "a workspace file written inside"
	assert_contains "$(cat "$WS/created-inside.txt")" "airlock-probe was here" "its content"
}

test_baseline_read_only_but_readable() {
	track_probe_write /usr/bin/airlock-e2e-probe
	expect_blocked write /etc/hostname
	expect_blocked write /usr/bin/airlock-e2e-probe
	expect_ok read-ok /etc/passwd
	expect_ok read-ok /usr/bin
	expect_ok exec-ok /bin/sh -c true
}

test_exec_from_tmp_fails_from_workspace_works() {
	al -- sh -c 'cp ./airlock-probe /tmp/copied-probe && chmod 755 /tmp/copied-probe &&
		exec ./airlock-probe exec /tmp/copied-probe list'
	check_blocked exec
	al -- sh -c 'cp ./airlock-probe ./copied-probe && chmod 755 ./copied-probe &&
		exec ./airlock-probe exec-ok ./copied-probe list'
	check_allowed exec-ok
	# A script: the interpreter comes from the baseline, the file from /tmp.
	al -- sh -c 'printf "#!/bin/sh\necho ran\n" >/tmp/s.sh && chmod 755 /tmp/s.sh &&
		exec ./airlock-probe exec /tmp/s.sh'
	check_blocked exec
	# Nor from the private HOME or /dev/shm, the other writable scratch.
	al -- sh -c 'cp ./airlock-probe "$HOME/p" && chmod 755 "$HOME/p" &&
		exec ./airlock-probe exec "$HOME/p" list'
	check_blocked exec
	al -- sh -c 'cp ./airlock-probe /dev/shm/p && chmod 755 /dev/shm/p &&
		exec ./airlock-probe exec /dev/shm/p list'
	check_blocked exec
	expect_ok exec-ok /usr/bin/env true
}

test_private_tmp() {
	local hostfile name
	hostfile=$(mktemp /tmp/airlock-e2e-hostfile.XXXXXX)
	name=airlock-e2e-inside.$$.$RANDOM
	expect_blocked stat "$hostfile"
	expect_blocked stat "$T"
	expect_ok write-ok "/tmp/$name"
	assert_no_file "/tmp/$name" "a file created in the sandbox's /tmp, on the host"
	rm -f "$hostfile"
	# The sandbox's /tmp is writable scratch for its own use.
	al -- sh -c "echo hi >/tmp/$name && cat /tmp/$name"
	assert_rc 0 "use of /tmp inside"
	assert_eq "hi" "$OUT" "a /tmp file read back inside"
}

test_policy_workspace_elsewhere() {
	local other
	other=$(mktemp -d /tmp/airlock-e2e-ws2.XXXXXX)
	printf '%s\n' "$other" >>"$T/.rm_dirs"
	cp "$WS/airlock-probe" "$other/airlock-probe"
	printf 'version: 1\nsandbox:\n  workspace: %s\n' "$other" >"$T/policy.yaml"
	al --policy "$T/policy.yaml" -- "$other/airlock-probe" write-ok "$other/made.txt"
	check_allowed write-ok
	assert_file "$other/made.txt" "a file written to the policy's workspace"
	# The current directory is not the workspace any more: invisible.
	al --policy "$T/policy.yaml" -- "$other/airlock-probe" write "$WS/not-here.txt"
	check_blocked write
	assert_no_file "$WS/not-here.txt" "a file written to the current directory"
}

test_policy_deny_hides_workspace_path() {
	mkdir -p "$WS/secret-dir"
	printf 'classified\n' >"$WS/secret-dir/plan.txt"
	printf 'public\n' >"$WS/public.txt"
	printf 'version: 1\nfilesystem:\n  deny:\n    - %s/secret-dir\n' "$WS" >"$T/policy.yaml"
	al --policy "$T/policy.yaml" -- ./airlock-probe read "$WS/secret-dir/plan.txt"
	check_blocked read
	al --policy "$T/policy.yaml" -- ./airlock-probe write "$WS/secret-dir/new.txt"
	check_blocked write
	assert_no_file "$WS/secret-dir/new.txt" "a file written into a denied directory"
	al --policy "$T/policy.yaml" -- ./airlock-probe read-ok "$WS/public.txt"
	check_allowed read-ok
}

test_policy_extra_read_and_write_paths() {
	local ro rw
	ro=$(mktemp -d /var/tmp/airlock-e2e-ro.XXXXXX)
	rw=$(mktemp -d /var/tmp/airlock-e2e-rw.XXXXXX)
	printf '%s\n%s\n' "$ro" "$rw" >>"$T/.rm_dirs"
	chmod 755 "$ro" "$rw"
	printf 'reference\n' >"$ro/ref.txt"
	chmod 644 "$ro/ref.txt"
	# As root the sandbox runs as an unprivileged uid: let it write there.
	e2e_is_root && chmod 777 "$rw"
	printf 'version: 1\nfilesystem:\n  read:\n    - %s\n  write:\n    - %s\n' "$ro" "$rw" \
		>"$T/policy.yaml"
	al --policy "$T/policy.yaml" -- ./airlock-probe read-ok "$ro/ref.txt"
	check_allowed read-ok
	al --policy "$T/policy.yaml" -- ./airlock-probe write "$ro/new.txt"
	check_blocked write
	assert_no_file "$ro/new.txt" "a file written into a read-only path"
	al --policy "$T/policy.yaml" -- ./airlock-probe write-ok "$rw/out.txt"
	check_allowed write-ok
	assert_file "$rw/out.txt" "a file written into a write path"
	# Without the policy, neither is visible.
	expect_blocked read "$ro/ref.txt"
}

# A read path beneath a directory only its owner may enter (a 0700 home:
# `read: [~/.gitconfig]` as root) is shown, and read with the file's own
# modes; its neighbours stay out of sight, and a write to it fails.
test_policy_read_path_under_a_private_directory() {
	local d
	d=$(mktemp -d /var/tmp/airlock-e2e-priv.XXXXXX)
	printf '%s\n' "$d" >>"$T/.rm_dirs"
	chmod 700 "$d"
	printf '[user]\n\tname = e2e\n' >"$d/.gitconfig"
	printf 'own eyes only\n' >"$d/secret"
	chmod 644 "$d/.gitconfig" "$d/secret"
	printf 'version: 1\nfilesystem:\n  read:\n    - %s/.gitconfig\n' "$d" >"$T/policy.yaml"
	al --policy "$T/policy.yaml" -- cat "$d/.gitconfig"
	assert_rc 0 "the run starts and reads the path: $OUT"
	assert_contains "$OUT" "name = e2e" "the file's contents"
	al --policy "$T/policy.yaml" -- ./airlock-probe read "$d/secret"
	check_blocked read
	al --policy "$T/policy.yaml" -- ./airlock-probe write "$d/.gitconfig"
	check_blocked write
	assert_eq "$(printf '[user]\n\tname = e2e')" "$(cat "$d/.gitconfig")" "the file is unchanged"
}

test_policy_exec_allow_list() {
	# /usr only: on merged-/usr systems /bin is a symlink into it.
	printf 'version: 1\nprocess:\n  exec:\n    - /usr\n' >"$T/policy.yaml"
	al --policy "$T/policy.yaml" -- /usr/bin/sh -c './airlock-probe list >/dev/null; echo rc=$?'
	assert_contains "$OUT" "rc=126" "exec of a workspace binary outside the exec list"
	al --policy "$T/policy.yaml" -- /usr/bin/sh -c '/usr/bin/env true; echo rc=$?'
	assert_contains "$OUT" "rc=0" "exec of a binary under an allowed path"
}

# Without the baseline, a listed path reached through a symlink (/bin ->
# usr/bin on a merged-/usr system) keeps its link, so the path as written
# and the loader's own paths resolve; a link that is not listed is not
# made.
test_policy_no_baseline_keeps_listed_links() {
	local links="" l
	for l in /bin /lib /lib64; do
		[ -L "$l" ] && links="$links $l"
	done
	[ -n "$links" ] || skip "no top-level symlinks on this system"
	al_policy "version: 1
filesystem:
  baseline: false
  read: [/usr, /lib, /lib64, /bin]
process:
  exec: [/usr]" -- /bin/sh -c 'echo hi'
	assert_rc 0 "/bin/sh through the listed /bin link"
	assert_eq "hi" "$OUT" "output of /bin/sh"
	if [ -L /bin ]; then
		al_policy "version: 1
filesystem:
  baseline: false
  read: [/usr, /lib, /lib64]
process:
  exec: [/usr]" -- /bin/sh -c 'echo hi'
		assert_ne 0 "$RC" "/bin/sh when /bin is not listed"
		assert_not_contains "$OUT" "hi" "output without the link"
	fi
}

# ---- noexec: Landlock's execute right binds execve alone ----------------

# The dynamic loader, which runs any file it can read and map.
e2e_loader() {
	local f
	for f in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 /lib/ld-linux-armhf.so.3 /lib/ld-linux.so.2; do
		[ -e "$f" ] && printf '%s\n' "$f" && return 0
	done
	return 1
}

# The agent's three ways to run a file F: execve, the loader, and a
# PROT_EXEC mapping (what the loader does, and what python's mmap or
# ctypes let any process do). One line each: "TAG direct|ldso|mmap:
# ran|refused". The loader, its argument 1 ($1), runs a copy of echo.
# shellcheck disable=SC2016
FS_RUN3='
run3() {
	tag=$1 f=$2
	if [ "$("$f" RAN-MARK 2>/dev/null)" = RAN-MARK ]; then echo "$tag direct: ran"; else echo "$tag direct: refused"; fi
	if [ "$("$LDSO" "$f" RAN-MARK 2>/dev/null)" = RAN-MARK ]; then echo "$tag ldso: ran"; else echo "$tag ldso: refused"; fi
	if /usr/bin/python3 -c "import mmap, sys
f = open(sys.argv[1], \"rb\")
mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ | mmap.PROT_EXEC)" "$f" 2>/dev/null; then
		echo "$tag mmap: ran"; else echo "$tag mmap: refused"; fi
}
'

# A copy of echo in every writable scratch place and in a policy read
# path and write path: execve, the loader and a PROT_EXEC mapping are all
# refused there (noexec mounts). The neighbours: the same copy in the
# workspace runs all three ways, a script made executable there runs, a
# script in /tmp runs through its interpreter (reading is not executing),
# and a python venv in /tmp and in the workspace both work.
test_noexec_outside_the_exec_set() {
	local ldso ro rw
	ldso=$(e2e_loader) || skip "no dynamic loader known on this system"
	command -v python3 >/dev/null || skip "no python3"
	ro=$(mktemp -d /var/tmp/airlock-e2e-ro.XXXXXX)
	rw=$(mktemp -d /var/tmp/airlock-e2e-rw.XXXXXX)
	printf '%s\n%s\n' "$ro" "$rw" >>"$T/.rm_dirs"
	chmod 755 "$ro" "$rw"
	e2e_is_root && chmod 777 "$rw"
	cp /bin/echo "$ro/e" && chmod 755 "$ro/e" || fail "cp"
	# shellcheck disable=SC2016
	al_policy "version: 1
filesystem:
  read: [$ro]
  write: [$rw]" -- /bin/sh -c "$FS_RUN3"'
		LDSO=$1 RO=$2 RW=$3
		for d in /tmp "$HOME" /dev/shm "$RW"; do
			cp /bin/echo "$d/e" && chmod 755 "$d/e" || echo "copy to $d: failed"
		done
		for d in /tmp "$HOME" /dev/shm "$RW" "$RO"; do run3 "$d" "$d/e"; done
		cp /bin/echo ./e && chmod 755 ./e && run3 workspace ./e
		printf "#!/bin/sh\necho script-ran\n" > s.sh && chmod +x s.sh && ./s.sh
		printf "echo tmp-script-ran\n" > /tmp/x.sh && sh /tmp/x.sh
		/usr/bin/python3 -m venv --without-pip /tmp/venv >/dev/null 2>&1 &&
			/tmp/venv/bin/python -c "print(\"tmp-venv-ran\")"
		/usr/bin/python3 -m venv --without-pip pyvenv >/dev/null 2>&1 &&
			pyvenv/bin/python -c "print(\"ws-venv-ran\")"
		true' sh "$ldso" "$ro" "$rw"
	assert_rc 0 "the run"
	assert_not_contains "$OUT" "failed" "copying the program"
	local d m
	for d in /tmp "$E2E_HOME" /dev/shm "$rw" "$ro"; do
		for m in direct ldso mmap; do
			assert_contains "$OUT" "$d $m: refused" "$m of a program in $d"
		done
	done
	for m in direct ldso mmap; do
		assert_contains "$OUT" "workspace $m: ran" "$m of a program in the workspace"
	done
	for m in script-ran tmp-script-ran tmp-venv-ran ws-venv-ran; do
		assert_contains "$OUT" "$m" "$m"
	done
}

# Shared libraries load only from exec mounts: ctypes (dlopen) of a copy
# of libc in /tmp fails, the same copy in the workspace loads.
test_noexec_refuses_libraries_outside_the_exec_set() {
	command -v python3 >/dev/null || skip "no python3"
	command -v ldd >/dev/null || skip "no ldd"
	local libc
	libc=$(ldd /bin/echo | awk '/libc\.so/ { print $3 }')
	[ -f "$libc" ] || skip "no libc found"
	# shellcheck disable=SC2016
	al -- /bin/sh -c '
		cp "$1" /tmp/lib.so && cp "$1" ./lib.so || echo "copy: failed"
		for f in /tmp/lib.so "$PWD/lib.so"; do
			if /usr/bin/python3 -c "import ctypes, sys; ctypes.CDLL(sys.argv[1])" "$f" 2>/dev/null; then
				echo "$f: loaded"; else echo "$f: refused"; fi
		done' sh "$libc"
	assert_rc 0 "the run"
	assert_not_contains "$OUT" "copy: failed" "copying libc"
	assert_contains "$OUT" "/tmp/lib.so: refused" "a library in /tmp"
	assert_contains "$OUT" "$WS/lib.so: loaded" "a library in the workspace"
}

# process.exec narrows the exec mounts too: listing /usr alone leaves the
# workspace noexec (the loader and mmap refused there as execve is),
# while /usr's programs run. Within an exec mount the loader still runs
# any readable file (docs/sandbox.md says so): ld.so of /usr's echo runs
# although process.exec names only /usr/bin/env and the shell.
test_noexec_follows_process_exec() {
	local ldso sh
	ldso=$(e2e_loader) || skip "no dynamic loader known on this system"
	command -v python3 >/dev/null || skip "no python3"
	sh=$(readlink -f /bin/sh)
	cp /bin/echo "$WS/e" && chmod 755 "$WS/e" || fail "cp"
	al_policy 'version: 1
process:
  exec: [/usr]' -- /usr/bin/sh -c "$FS_RUN3"'
		LDSO=$1
		run3 workspace ./e
		run3 usr /usr/bin/echo' sh "$ldso"
	assert_rc 0 "the run with process.exec: [/usr]"
	for m in direct ldso mmap; do
		assert_contains "$OUT" "workspace $m: refused" "$m of a workspace program outside process.exec"
		assert_contains "$OUT" "usr $m: ran" "$m of a program under process.exec"
	done
	al_policy "version: 1
process:
  exec: [/usr/bin/env, $sh]" -- "$sh" -c '"$1" /usr/bin/echo RAN-MARK; /usr/bin/env >/dev/null && echo env-ran' sh "$ldso"
	assert_rc 0 "the run with process.exec: [/usr/bin/env, $sh]"
	assert_contains "$OUT" "RAN-MARK" "the loader on a readable file of an exec mount (documented)"
	assert_contains "$OUT" "env-ran" "a listed program"
}

# Review mode's overlay is as exec as the workspace beneath it: a program
# there runs all three ways, one in /tmp none.
test_noexec_in_review_mode() {
	local ldso
	ldso=$(e2e_loader) || skip "no dynamic loader known on this system"
	command -v python3 >/dev/null || skip "no python3"
	# shellcheck disable=SC2016
	al_policy 'version: 1
sandbox:
  workspace_mode: review' -- /bin/sh -c "$FS_RUN3"'
		LDSO=$1
		cp /bin/echo ./e && cp /bin/echo /tmp/e && chmod 755 ./e /tmp/e
		run3 workspace ./e
		run3 tmp /tmp/e' sh "$ldso"
	assert_rc 0 "the review-mode run"
	for m in direct ldso mmap; do
		assert_contains "$OUT" "workspace $m: ran" "$m of a program in the reviewed workspace"
		assert_contains "$OUT" "tmp $m: refused" "$m of a program in /tmp in review mode"
	done
}

# Observe mode judges an exec as enforce mode's mounts would answer it: a
# program in a read path (a noexec mount in enforce mode) runs, and is
# recorded as refused by noexec; a workspace program runs unrecorded. The
# same program under the same policy in enforce mode fails.
test_noexec_judged_in_observe_mode() {
	local ro log
	ro=$(mktemp -d /var/tmp/airlock-e2e-ro.XXXXXX)
	printf '%s\n' "$ro" >>"$T/.rm_dirs"
	chmod 755 "$ro"
	cp /bin/echo "$ro/e" && chmod 755 "$ro/e" || fail "cp"
	printf 'version: 1\nsandbox:\n  mode: observe\nfilesystem:\n  read: [%s]\n' "$ro" >"$T/observe.yaml"
	mkdir -p "$T/audit"
	al --policy "$T/observe.yaml" --audit "$T/audit" -- /bin/sh -c \
		'"$1" RO-RAN; cp /bin/echo ./e2 && ./e2 WS-RAN' sh "$ro/e"
	assert_rc 0 "the observed run"
	assert_contains "$OUT" "RO-RAN" "observe: the program in the read path ran"
	assert_contains "$OUT" "WS-RAN" "observe: the workspace program ran"
	log=$(ls "$T"/audit/*.jsonl) || fail "no audit log"
	grep -F '"kind":"exec_denied"' "$log" | grep -F "\"path\":\"$ro/e\"" |
		grep -qF 'EACCES [noexec mount]' || fail "no exec_denied record naming noexec: $(cat "$log")"
	assert_not_contains "$(cat "$log")" "$WS/e2" "the workspace program in the log"
	al_policy "version: 1
filesystem:
  read: [$ro]" -- /bin/sh -c '"$1" RO-RAN; echo rc=$?' sh "$ro/e"
	assert_not_contains "$OUT" "RO-RAN" "enforce: the program in the read path"
	assert_contains "$OUT" "rc=126" "enforce: its exec refused"
}

# A rename or link across directories (apt's lists, pip's and Python's
# os.rename, git's objects) works in every writable place, in the default
# workspace mode and in direct mode without protected paths (where no
# guard makes the call for the program); one onto a read-only mount is
# still refused.
test_fs_rename_and_link_across_directories() {
	local pol
	printf 'version: 1\nsandbox:\n  workspace_mode: direct\nfilesystem:\n  protect_defaults: false\n' >"$T/noprot.yaml"
	for pol in "" "$T/noprot.yaml"; do
		al ${pol:+--policy "$pol"} -- /usr/bin/python3 -c '
import os
for d in ("/tmp", "/dev/shm", "."):
    os.makedirs(d + "/rn/p", exist_ok=True)
    open(d + "/rn/p/f", "w").close()
    os.rename(d + "/rn/p/f", d + "/rn/f")
    os.link(d + "/rn/f", d + "/rn/p/l")
    os.rename(d + "/rn/p", d + "/rn2")
    print(d, "moved")
try:
    os.rename("/tmp/rn/f", "/usr/f")
except OSError as e:
    print("to /usr:", e.errno)
'
		assert_rc 0 "the renames ran (${pol:-default}): $ERR"
		assert_contains "$OUT" "/tmp moved" "across directories in /tmp (${pol:-default})"
		assert_contains "$OUT" "/dev/shm moved" "in /dev/shm (${pol:-default})"
		assert_contains "$OUT" ". moved" "in the workspace (${pol:-default})"
		assert_contains "$OUT" "to /usr: 18" "onto the read-only /usr: refused (${pol:-default})"
		rm -rf "$WS/rn" "$WS/rn2"
	done
}
