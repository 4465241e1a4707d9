# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The credential broker: the agent holds placeholders; the proxy swaps in
# the secret only for the destination and operation a binding names. The
# HTTPS server (servers.py) checks the real secret; git smart HTTP is git
# http-backend behind it. The servers come from t_proxy.sh.

# shellcheck source=tests/e2e/t_proxy.sh
. "$here/t_proxy.sh"

# Secrets of this test: written before the servers start (they check
# them), held by the supervisor's environment, a file and a command.
cred_setup() {
	mkdir -p "$T/srv"
	SECRET="sek-$RANDOM$RANDOM$RANDOM-api"
	printf '%s\n' "$SECRET" >"$T/srv/token"
	printf '%s\n' "$SECRET" >"$T/git-token"
	printf '%s\n' "$SECRET" >"$T/q-token"
	chmod 644 "$T/srv/token" "$T/git-token" "$T/q-token"
	export E2E_API_TOKEN=$SECRET
	start_servers
}

cred_policy() {
	cat <<YAML
version: 1
${CRED_FS:-}
network:
  log: $T/net.jsonl
  upstream_ca: $T/srv/ca.pem
  resolve: { secure.test: 127.0.0.1, other.test: 127.0.0.1, api.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$HP, 127.0.0.1:$SP]
  endpoints:
    - { host: secure.test, ports: [$SP], tls: intercept }
    - { host: other.test, ports: [$SP], tls: intercept }
    - { host: api.test, ports: [$HP] }
credentials:
  - name: api
    source: env:E2E_API_TOKEN
    env: API_TOKEN
    bindings:
      - id: api-read
        host: secure.test
        port: $SP
        header: Authorization
        template: "Bearer {secret}"
        methods: [GET]
        paths: ["/api/**"]
  - name: git
    source: file:$T/git-token
    env: GIT_TOKEN
    bindings:
      - id: git-agent-branches
        host: secure.test
        port: $SP
        basic: { username: agent }
        git:
          repos: ["/smart/project.git"]
          push: ["refs/heads/agent/**"]
  - name: q
    command: [/bin/cat, $T/q-token]
    inject: always
    bindings:
      - { id: q-param, host: secure.test, port: $SP, query: api_key, paths: ["/api/q/**"] }
${1:-}
YAML
}

cred() { # CMD...: inside the sandbox under cred_policy
	al_policy "$(cred_policy)" -- "$@"
}

test_credentials_injected_only_where_bound() {
	cred_setup
	# shellcheck disable=SC2016
	cred /bin/sh -c 'curl -sS -H "Authorization: Bearer $API_TOKEN" https://secure.test:'"$SP"'/api/whoami'
	assert_contains "$OUT" '"auth": "ok"' "the placeholder becomes the secret where the binding allows"
	cred /usr/bin/curl -sS "https://secure.test:$SP/api/whoami"
	assert_contains "$OUT" '"auth": "missing"' "no placeholder, no secret (inject: placeholder)"
	# shellcheck disable=SC2016
	cred /bin/sh -c 'curl -sS -X DELETE -H "Authorization: Bearer $API_TOKEN" https://secure.test:'"$SP"'/api/whoami'
	assert_contains "$OUT" "credential misuse" "a method the binding does not name"
	# shellcheck disable=SC2016
	cred /bin/sh -c 'curl -sS -H "Authorization: Bearer $API_TOKEN" https://other.test:'"$SP"'/api/whoami'
	assert_contains "$OUT" "credential misuse" "the placeholder sent to another allowed host"
	# shellcheck disable=SC2016
	cred /bin/sh -c 'curl -sS "https://secure.test:'"$SP"'/api/x?token=$API_TOKEN"'
	assert_contains "$OUT" "credential misuse" "the placeholder in a query the binding does not name"
	# shellcheck disable=SC2016
	cred /bin/sh -c 'curl -sS -H "Authorization: Bearer $API_TOKEN" -H "X-Copy: $API_TOKEN" https://secure.test:'"$SP"'/api/whoami'
	assert_contains "$OUT" "credential misuse" "the placeholder also in another header"
	# shellcheck disable=SC2016
	cred /bin/sh -c 'curl -sS -X POST --data "t=$API_TOKEN" https://other.test:'"$SP"'/upload'
	assert_contains "$OUT" "credential misuse" "the placeholder in a body"
	# shellcheck disable=SC2016
	cred /bin/sh -c 'curl -sS -H "Authorization: Bearer $API_TOKEN" http://api.test:'"$HP"'/api/whoami'
	assert_contains "$OUT" "credential misuse" "the placeholder over plain HTTP"
	cred /usr/bin/curl -sS "https://secure.test:$SP/api/q/data"
	assert_contains "$OUT" '"auth": "ok"' "inject: always adds the query parameter"
	cred /usr/bin/curl -sS "https://secure.test:$SP/api/other"
	assert_contains "$OUT" '"auth": "missing"' "inject: always only where a binding matches"
	local log
	log=$(cat "$T/net.jsonl")
	assert_contains "$log" '"kind":"credential_misuse"' "misuse is recorded"
	assert_contains "$log" '"credential":"api"' "by the credential's name"
	local leaked
	leaked=$(grep -rl --exclude-dir=srv --exclude=git-token --exclude=q-token -- "$SECRET" "$T" 2>/dev/null)
	assert_eq "" "$leaked" "no file the run wrote holds the secret"
}

# A brokered request is let through changed, with a secret the agent
# never held: the decision log says `modify` and names the credential,
# never the secret; the same request without a credential is `allow`.
test_credentials_brokered_request_recorded_as_modify() {
	cred_setup
	mkdir -p "$T/audit"
	printf '%s\n' "$(cred_policy)" >"$T/policy.yaml"
	# shellcheck disable=SC2016
	al --policy "$T/policy.yaml" --audit "$T/audit" -- /bin/sh -c \
		'curl -sS -H "Authorization: Bearer $API_TOKEN" https://secure.test:'"$SP"'/api/whoami; echo; curl -sS https://secure.test:'"$SP"'/api/other'
	assert_contains "$OUT" '"auth": "ok"' "the credential was injected"
	local log
	log=$(ls "$T"/audit/*.jsonl)
	assert_match "$(cat "$log")" '"disposition_id":99,"disposition":"Modified","action_id":1,"status_id":1[^\n]*"decision":"modify","enforced":true,"kind":"tunnel-request","rule":"[^"]*","credential":"api"' \
		"the brokered request is recorded modify, with the credential's name"
	assert_match "$(grep '/api/other' "$log")" '"decision":"allow"' "a request without a credential is allow"
	assert_not_contains "$(cat "$log")" "$SECRET" "the log never holds the secret"
	assert_match "$("$AIRLOCK" audit show "$log" --decision modify)" "modify +tunnel-request +GET secure.test:$SP/api/whoami with credential api" \
		"audit show names the credential"
	"$AIRLOCK" audit verify "$log" >/dev/null 2>&1 || fail "the log verifies"
}

test_credentials_never_enter_the_sandbox() {
	cred_setup
	cat >"$WS/look.sh" <<'SH'
env
cat /proc/self/environ /proc/1/environ /proc/1/cmdline 2>/dev/null | tr '\0' '\n'
for p in /proc/[0-9]*; do cat "$p/environ" "$p/cmdline" 2>/dev/null; done | tr '\0' '\n'
grep -rs . /run /tmp "$HOME" . 2>/dev/null
SH
	cred /bin/sh ./look.sh
	assert_contains "$OUT" "API_TOKEN=airlock_ph_" "the agent sees a placeholder"
	assert_contains "$OUT" "GIT_TOKEN=airlock_ph_" "one per credential with a variable"
	assert_not_contains "$OUT" "$SECRET" "the secret is nowhere the agent can look"
	assert_not_contains "$OUT" "E2E_API_TOKEN" "the source variable is not passed in"
	local a b
	a=$(printf '%s\n' "$OUT" | grep -m1 '^API_TOKEN=')
	cred /bin/sh -c 'env | grep ^API_TOKEN='
	b=$OUT
	assert_ne "$a" "$b" "placeholders differ per session"
	# A source that is missing fails the run before it starts.
	E2E_API_TOKEN='' al_policy "$(cred_policy)" -- /bin/true
	assert_ne 0 "$RC" "a credential whose source is unset"
	assert_contains "$ERR" "E2E_API_TOKEN is not set" "the error names the source"
}

test_credentials_git_push_only_to_bound_refs() {
	cred_setup
	local bare="$T/srv/smart/project.git"
	mkdir -p "$T/srv/smart"
	git init -q --bare "$bare"
	git -C "$bare" config http.receivepack true
	git -C "$T" -c init.defaultBranch=main init -q seed
	echo one >"$T/seed/f"
	git -C "$T/seed" add f
	git -C "$T/seed" -c user.name=t -c user.email=t@t commit -qm one
	git -C "$T/seed" push -q "$bare" HEAD:main
	git -C "$bare" symbolic-ref HEAD refs/heads/main
	local main_before
	main_before=$(git -C "$bare" rev-parse main)
	cat >"$WS/git.sh" <<SH
set -e
url="https://agent:\$GIT_TOKEN@secure.test:$SP/smart/project.git"
for v in 0 1 2; do
	git -c protocol.version=\$v clone -q "\$url" repo\$v && echo "clone-v\$v: ok"
done
git clone -q "\$url" repo
cd repo
git -c user.name=a -c user.email=a@a commit -q --allow-empty -m agent
echo "push-branch: \$(git push -q origin HEAD:refs/heads/agent/work 2>&1 && echo ok)"
echo "push-main: \$(git push -q origin HEAD:main 2>&1 && echo ok)"
echo "delete: \$(git push -q origin :refs/heads/agent/work 2>&1 && echo ok)"
git tag v1
echo "tag: \$(git push -q origin v1 2>&1 && echo ok)"
# Larger than network.leak_scan.max_body: git probes with 0000, then sends
# the pack chunked; the proxy decides on the commands and streams the pack.
head -c 3000000 /dev/urandom >big
git add big
git -c user.name=a -c user.email=a@a commit -q -m big
echo "push-big: \$(git push -q origin HEAD:refs/heads/agent/big 2>&1 && echo ok)"
echo "push-big-main: \$(git push -q origin HEAD:main 2>&1 && echo ok)"
SH
	# git clone creates a repository (its .git/config and hooks) in the
	# workspace, which direct mode's protected paths refuse (t_protect.sh)
	# and hold mode holds (t_tools.sh); the host reads the clone here.
	CRED_FS=$'sandbox:\n  workspace_mode: direct\nfilesystem:\n  protect_defaults: false' cred /bin/sh -c '/bin/sh ./git.sh 2>&1; true'
	assert_file "$WS/repo/f" "clone through the broker"
	local v
	for v in 0 1 2; do
		assert_contains "$OUT" "clone-v$v: ok" "clone with git protocol version $v"
		assert_file "$WS/repo$v/f" "the file of the protocol v$v clone"
	done
	assert_match "$OUT" 'push-branch: ok' "a push to a branch the binding allows"
	assert_eq "$(git -C "$WS/repo" rev-parse HEAD~1)" "$(git -C "$bare" rev-parse refs/heads/agent/work)" \
		"the allowed push landed"
	assert_no_match "$OUT" 'push-main: ok' "a push to main"
	assert_eq "$main_before" "$(git -C "$bare" rev-parse main)" "main is unchanged"
	assert_no_match "$OUT" 'delete: ok' "deleting a ref"
	assert_eq 0 "$(git -C "$bare" show-ref -q refs/heads/agent/work; echo $?)" "the branch is still there"
	assert_no_match "$OUT" 'tag: ok' "pushing a tag"
	assert_match "$OUT" 'push-big: ok' "a push larger than max_body to an allowed branch"
	assert_eq "$(git -C "$WS/repo" rev-parse HEAD)" "$(git -C "$bare" rev-parse refs/heads/agent/big)" \
		"the large push landed whole"
	assert_eq "$(git -C "$WS/repo" rev-parse HEAD:big)" "$(git -C "$bare" rev-parse agent/big:big)" \
		"the large file arrived intact"
	assert_no_match "$OUT" 'push-big-main: ok' "a large push to main"
	assert_eq "$main_before" "$(git -C "$bare" rev-parse main)" "main is still unchanged"
	assert_ne 0 "$(git -C "$bare" show-ref -q refs/tags/v1; echo $?)" "no tag arrived"
	local log
	log=$(cat "$T/net.jsonl")
	assert_contains "$log" 'refs/heads/main' "the refused push is recorded with its ref"
	assert_not_contains "$log" "$SECRET" "the log never holds the secret"
	assert_not_contains "$OUT$ERR" "$SECRET" "nor does anything the agent saw"
}
