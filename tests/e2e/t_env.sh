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
