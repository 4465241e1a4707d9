# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Real tools under the default policy: no policy file, or where the
# network is needed the smallest policy that adds only a network entry for
# a loopback server (servers.py, through the proxy). Each tool succeeds
# inside; the hand-off files it makes (a virtual environment, a new
# repository's config and hooks, node_modules/.bin)
# are held in the run's session, not in the workspace, while the ordinary
# files of the same run (a build's executables too) land at exit; `airlock apply SESSION --accept
# GROUP` lands each group, usable on the host, and leaves the others held.

tools_env() {
	export XDG_STATE_HOME="$T/state"
}

# HSID: the session the last run held, from its summary on stderr.
hold_session() {
	HSID=$(printf '%s\n' "$ERR" | sed -n 's/^airlock: hold mode: .* held in session \([0-9a-f-]*\) for review:$/\1/p')
	[ -n "$HSID" ] || fail "no held session announced$(e2e_last_run)"
}

need() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"
}

# The only policy a networked tool gets: a name for the loopback server
# and an endpoint for it, nothing else (the rest is the default).
tools_net_policy() { # HOST
	cat >"$T/net.yaml" <<YAML
version: 1
network:
  resolve: { $1: 127.0.0.1 }
  allow_private: [127.0.0.1:$HP]
  endpoints:
    - { host: $1, ports: [$HP] }
YAML
}

# python3 -m venv and the pip it installs; git init; a note. Accepting
# the environment lands it whole (its interpreter links into /usr
# included) and leaves the repository held.
test_tools_venv_and_git_init() {
	tools_env
	al -- /bin/sh -c '/usr/bin/python3 -m venv .venv && .venv/bin/pip --version && git init -q &&
		echo notes >notes.txt && echo done'
	assert_rc 0 "python3 -m venv, pip --version and git init in the default policy"
	assert_contains "$OUT" "pip " "pip --version inside"
	assert_contains "$OUT" "done" "every step inside"
	hold_session
	assert_contains "$ERR" ".venv/: a Python virtual environment" "the summary names the environment"
	assert_contains "$ERR" ".git/: a new repository" "the summary names the repository"
	assert_contains "$ERR" "airlock apply $HSID --accept" "and the command that accepts a group"
	assert_no_file "$WS/.venv" "the virtual environment is held"
	assert_no_file "$WS/.git" "the new repository is held"
	assert_eq notes "$(cat "$WS/notes.txt")" "the ordinary file landed at exit"

	rv apply "$HSID" --accept no-such-dir
	assert_eq 2 "$RRC" "an accept that names nothing held"
	assert_contains "$RERR" "--accept no-such-dir: nothing held there" "the error names it"
	assert_no_file "$WS/.venv" "nothing landed"

	rv apply "$HSID" --accept .venv
	assert_eq 0 "$RRC" "apply --accept .venv ($RERR)"
	"$WS/.venv/bin/python" -c 'import sys; assert sys.prefix != sys.base_prefix' ||
		fail "the accepted environment's python on the host"
	"$WS/.venv/bin/pip" --version >/dev/null || fail "the accepted environment's pip on the host"
	assert_no_file "$WS/.git" "the group not accepted is still held"
	assert_contains "$RERR" "still held in session $HSID" "apply says what is still held"

	rv apply "$HSID" --accept .git
	assert_eq 0 "$RRC" "apply --accept .git ($RERR)"
	git -C "$WS" status >/dev/null 2>&1 || fail "git status on the host in the accepted repository"
	rv review "$HSID"
	assert_eq 2 "$RRC" "the session is spent once nothing is held"
}

# git clone of a loopback repository over HTTP (through the proxy): the
# checkout lands at exit, the clone's .git is held until accepted.
test_tools_git_clone() {
	tools_env
	start_servers
	git_served_repo repo "cloned through the proxy"
	tools_net_policy git.test
	al --policy "$T/net.yaml" -- /usr/bin/git clone -q "http://git.test:$HP/git/repo.git" clone1
	assert_rc 0 "git clone from the loopback server"
	hold_session
	assert_contains "$ERR" "clone1/.git/: a new repository with its config" "the summary names the clone"
	assert_eq "cloned through the proxy" "$(cat "$WS/clone1/README")" "the checkout landed at exit"
	assert_no_file "$WS/clone1/.git" "the clone's repository is held"
	rv apply "$HSID" --accept clone1/.git
	assert_eq 0 "$RRC" "apply --accept clone1/.git ($RERR)"
	assert_eq first "$(git -C "$WS/clone1" log -1 --format=%s)" "the accepted clone's history on the host"
	assert_eq "" "$(git -C "$WS/clone1" status --porcelain)" "and its checkout clean"
}

# npm install of a package with a command, from a registry on loopback
# (its JSON and tarball from servers.py, through the proxy).
test_tools_npm_install_with_a_bin() {
	tools_env
	need npm
	start_servers
	local reg="$T/srv/git/npm" pkg="$T/pkg/package"
	mkdir -p "$reg" "$pkg"
	printf '{"name":"hello-cli","version":"1.0.0","bin":{"hello-cli":"cli.js"}}\n' >"$pkg/package.json"
	printf '#!/usr/bin/env node\nconsole.log("hello from the cli");\n' >"$pkg/cli.js"
	chmod 755 "$pkg/cli.js"
	tar -C "$T/pkg" -czf "$reg/hello-cli-1.0.0.tgz" package
	local sha1 integrity
	sha1=$(sha1sum <"$reg/hello-cli-1.0.0.tgz" | cut -c1-40)
	integrity="sha512-$(openssl dgst -sha512 -binary <"$reg/hello-cli-1.0.0.tgz" | base64 -w0)"
	cat >"$reg/hello-cli" <<JSON
{"name":"hello-cli","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"hello-cli","version":"1.0.0",
"bin":{"hello-cli":"cli.js"},"dist":{"tarball":"http://registry.test:$HP/git/npm/hello-cli-1.0.0.tgz",
"shasum":"$sha1","integrity":"$integrity"}}}}
JSON
	tools_net_policy registry.test
	al --policy "$T/net.yaml" -- /bin/sh -c "npm install --registry http://registry.test:$HP/git/npm/ --no-audit \
--no-fund --no-update-notifier hello-cli && node_modules/.bin/hello-cli"
	assert_rc 0 "npm install of a package with a bin"
	assert_contains "$OUT" "hello from the cli" "its command inside"
	hold_session
	assert_contains "$ERR" "node_modules/.bin/: 1 link into node_modules, 1 command" "the summary names the links"
	assert_file "$WS/node_modules/hello-cli/package.json" "the package landed at exit"
	assert_file "$WS/package.json" "the project's package.json landed"
	[ -e "$WS/node_modules/.bin" ] || [ -L "$WS/node_modules/.bin/hello-cli" ] &&
		fail "node_modules/.bin landed unaccepted"
	assert_no_file "$WS/node_modules/hello-cli/cli.js" "the command it links to is held with it"
	rv apply "$HSID" --accept node_modules/.bin
	assert_eq 0 "$RRC" "apply --accept node_modules/.bin ($RERR)"
	assert_eq "hello from the cli" "$("$WS/node_modules/.bin/hello-cli")" "the accepted command on the host"
}

# A meson build: it makes no hand-off file, so the whole build tree, its
# new executables included (as in direct mode), lands at exit.
test_tools_meson_build() {
	tools_env
	need meson
	need ninja
	printf "project('hello', 'c')\nexecutable('hello', 'hello.c')\n" >"$WS/meson.build"
	printf '#include <stdio.h>\nint main(void) { puts("built"); return 0; }\n' >"$WS/hello.c"
	al -- /bin/sh -c 'meson setup b >/dev/null && ninja -C b >/dev/null && ./b/hello'
	assert_rc 0 "meson setup, ninja and the program inside"
	assert_contains "$OUT" "built" "the program ran inside"
	assert_not_contains "$ERR" "held in session" "nothing held"
	assert_file "$WS/b/build.ninja" "the build tree landed at exit"
	assert_eq built "$("$WS/b/hello")" "the program on the host"
}

# Accepting a group does not take along what needs naming each: a set-ID
# file, or a link leaving the workspace for other than /usr; named, they
# land. A link into /usr goes with the group; a plain new executable lands
# at exit. (The sandbox cannot make a set-ID file: the bit is set in the
# held layer, as whatever could make one would leave it.)
test_tools_group_accept_names_setid_and_links() {
	tools_env
	al -- /bin/sh -c 'mkdir tools && echo "echo hi" >tools/.envrc &&
		printf "#!/bin/sh\necho ran\n" >tools/run && chmod 755 tools/run && ln -s /etc/passwd tools/pw &&
		ln -s /usr/bin/env tools/env'
	assert_rc 0 "the run"
	hold_session
	assert_eq ran "$("$WS/tools/run")" "the new executable landed at exit"
	assert_no_file "$WS/tools/.envrc" "the hand-off file is held"
	[ -L "$WS/tools/pw" ] && fail "the escaping link landed"
	chmod 4755 "$XDG_STATE_HOME/airlock/review/$HSID/layer/upper/tools/.envrc" || fail "cannot set the bit in the layer"
	rv apply "$HSID" --accept tools
	assert_eq 1 "$RRC" "a group holding a set-ID file and an escaping link"
	assert_contains "$RERR" "tools/.envrc (" "the set-ID file named"
	assert_contains "$RERR" "tools/pw (" "the escaping link named"
	assert_not_contains "$RERR" "tools/env (" "not the link into /usr"
	assert_no_file "$WS/tools/.envrc" "nothing landed"
	rv apply "$HSID" --accept tools --accept tools/.envrc --accept tools/pw
	assert_eq 0 "$RRC" "each named ($RERR)"
	assert_file "$WS/tools/.envrc" "the named set-ID file landed"
	[ -L "$WS/tools/pw" ] || fail "the named link landed"
	[ -L "$WS/tools/env" ] || fail "the link into /usr landed with the group"
}

# A session is not applied, reviewed or discarded from another terminal
# while its sandbox runs: it would read a layer the agent is still
# writing (judge one file, copy another). At exit the run lands its work.
test_tools_live_session_is_locked() {
	tools_env
	mkfifo "$T/go"
	(cd "$WS" && HOME="$E2E_HOME" timeout -k 5 "$E2E_TIMEOUT" "$AIRLOCK" run --no-audit -- \
		/bin/sh -c 'echo first >a.txt && echo started && read -r x && echo second >b.txt' \
		<"$T/go" >"$T/bg.out" 2>"$T/bg.err") &
	local pid=$! id="" i
	exec 7>"$T/go"
	for i in $(seq 300); do
		grep -q started "$T/bg.out" 2>/dev/null && break
		sleep 0.1
	done
	grep -q started "$T/bg.out" || fail "the run did not start: $(cat "$T/bg.err")"
	id=$(HOME="$E2E_HOME" "$AIRLOCK" review --list | awk '{ print $1 }')
	[ -n "$id" ] || fail "the live session is not listed"
	rv apply "$id"
	assert_eq 1 "$RRC" "apply of a live session (refused, as a conflict is)"
	assert_contains "$RERR" "in use" "the refusal says why"
	rv discard "$id"
	assert_eq 2 "$RRC" "discard of a live session"
	assert_no_file "$WS/a.txt" "nothing landed before exit"
	echo go >&7
	exec 7>&-
	wait "$pid"
	assert_eq 0 "$?" "the run: $(cat "$T/bg.err")"
	assert_eq first "$(cat "$WS/a.txt")" "landed at exit"
	assert_eq second "$(cat "$WS/b.txt")" "landed at exit"
}
