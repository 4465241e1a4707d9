# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The environment: only a safe list passes by default; process.env.pass
# passes more by name, process.env.set sets values.

test_environment_scrubbed() {
	AIRLOCK_CANARY=secret-canary-$$ AWS_SECRET_ACCESS_KEY=fake-aws-$$ \
		LANG=C.UTF-8 al -- env
	assert_rc 0 "env inside"
	assert_not_contains "$OUT" "AIRLOCK_CANARY" "an arbitrary variable from outside"
	assert_not_contains "$OUT" "secret-canary-$$" "the canary's value"
	assert_not_contains "$OUT" "fake-aws-$$" "a cloud credential from outside"
	# Neighbour: the basics a command needs are there.
	assert_match "$OUT" '^PATH=' "PATH inside"
	assert_match "$OUT" "^HOME=$E2E_HOME\$" "HOME inside"
	assert_match "$OUT" '^LANG=C.UTF-8$' "LANG (on the safe list) passed through"
}

test_environment_pass_and_set() {
	printf 'version: 1\nprocess:\n  env:\n    pass:\n      - AIRLOCK_CANARY\n    set:\n      E2E_SET: from-policy\n' \
		>"$T/policy.yaml"
	AIRLOCK_CANARY=passed-$$ AIRLOCK_OTHER=other-$$ al --policy "$T/policy.yaml" -- env
	assert_rc 0 "env inside"
	assert_match "$OUT" "^AIRLOCK_CANARY=passed-$$\$" "a variable named in env.pass"
	assert_match "$OUT" '^E2E_SET=from-policy$' "a variable from env.set"
	assert_not_contains "$OUT" "AIRLOCK_OTHER" "a variable not named in env.pass"
}

# process.git_identity: host: the host's git user.name and user.email
# reach the agent (its private home has no gitconfig, and `git commit`
# stops without them). A value that would end git's author line (a
# newline: forged headers in the agent's commits) refuses the run.
# shellcheck disable=SC2016 # the variables expand inside the sandbox
test_environment_git_identity_from_host() {
	command -v git >/dev/null || skip "git is not installed"
	printf '[user]\n\tname = Host Person\n\temail = host@example.test\n' >"$T/gitconfig"
	local commit='cd /tmp && git init -q r && cd r && git commit -q --allow-empty -m x && git log -1 --format="%an <%ae> / %cn <%ce>"'
	printf 'version: 1\n' >"$T/plain.yaml"
	GIT_CONFIG_GLOBAL="$T/gitconfig" al --policy "$T/plain.yaml" -- /bin/sh -c "$commit"
	assert_ne 0 "$RC" "without the field git has no identity"
	assert_contains "$ERR" "Please tell me who you are" "git says why"
	printf 'version: 1\nprocess:\n  git_identity: host\n' >"$T/gitid.yaml"
	GIT_CONFIG_GLOBAL="$T/gitconfig" al --policy "$T/gitid.yaml" -- /bin/sh -c "$commit"
	assert_rc 0 "git commit with the host's identity: $ERR"
	assert_eq "Host Person <host@example.test> / Host Person <host@example.test>" "$OUT" "author and committer"
	# The workspace's own .git/config is the agent's to write: it is not
	# where the identity comes from.
	mkdir -p "$WS/.git" && printf '[user]\n\tname = Agent Chosen\n' >"$WS/.git/config"
	GIT_CONFIG_GLOBAL="$T/gitconfig" al --policy "$T/gitid.yaml" -- /bin/sh -c 'echo "$GIT_AUTHOR_NAME"'
	assert_eq "Host Person" "$OUT" "the host's global value, not the workspace's"
	rm -rf "$WS/.git"
	# process.env.set names a variable on purpose: it wins.
	printf 'version: 1\nprocess:\n  git_identity: host\n  env:\n    set: {GIT_AUTHOR_NAME: "Set Here"}\n' >"$T/gitid-set.yaml"
	GIT_CONFIG_GLOBAL="$T/gitconfig" al --policy "$T/gitid-set.yaml" -- /bin/sh -c 'echo "$GIT_AUTHOR_NAME/$GIT_COMMITTER_NAME"'
	assert_eq "Set Here/Host Person" "$OUT" "env.set wins over the host's value"
	# Values that would break out of the author line or the address.
	local bad
	for bad in '"Host\nGpgsig: forged"' '"Host\tPerson"' 'Host <evil@x> Person'; do
		printf '[user]\n\tname = %s\n\temail = host@example.test\n' "$bad" >"$T/gitconfig-bad"
		GIT_CONFIG_GLOBAL="$T/gitconfig-bad" al --policy "$T/gitid.yaml" -- /bin/sh -c ": >$WS/ran"
		assert_rc 125 "a host user.name $bad refuses the run"
		assert_contains "$ERR" "process.git_identity: host: the host's git user.name holds a control character or angle bracket" \
			"the refusal names the field and the value's fault"
		assert_no_file "$WS/ran" "the refused run's command"
	done
	# A gitconfig git cannot read: the run does not start without it.
	printf '[user\n' >"$T/gitconfig-bad"
	GIT_CONFIG_GLOBAL="$T/gitconfig-bad" al --policy "$T/gitid.yaml" -- /bin/sh -c ": >$WS/ran"
	assert_rc 125 "an unreadable gitconfig refuses the run"
	assert_contains "$ERR" "cannot read the host's git user.name" "the refusal says what it could not read"
	assert_no_file "$WS/ran" "the refused run's command"
	# A ceiling that writes none cuts host; policy diff sees it widen.
	printf 'version: 1\nprocess:\n  git_identity: none\n' >"$T/ent.yaml"
	GIT_CONFIG_GLOBAL="$T/gitconfig" al --policy "$T/gitid.yaml" --enterprise "$T/ent.yaml" -- /bin/sh -c 'echo "[$GIT_AUTHOR_NAME]"'
	assert_eq "[]" "$OUT" "the enterprise's none cuts host"
	assert_contains "$ERR" "process.git_identity: host cut to none" "the cut is said"
	# shellcheck disable=SC2034 # e2e_last_run prints it
	LAST_CMD="airlock policy diff plain gitid"
	OUT=$("$AIRLOCK" policy diff "$T/plain.yaml" "$T/gitid.yaml" 2>&1)
	RC=$?
	assert_rc 1 "host where OLD has none is wider"
	assert_contains "$OUT" "process.git_identity" "the witness names the field"
}
