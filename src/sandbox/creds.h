/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_CREDS_H
#define AIRLOCK_SANDBOX_CREDS_H

/*
 * The supervisor's side of the credential broker: it alone reads the
 * secrets (from its environment, a file, or a command it runs), makes a
 * placeholder per credential for the sandbox's environment, and hands
 * secret and placeholder to the egress proxy over its control socket.
 * Nothing of a secret is ever written to the sandbox's filesystem,
 * environment or command line; the supervisor wipes its copies as soon
 * as the proxy has them.
 */

#include "policy/policy.h"
#include "sandbox/internal.h"
#include "util/error.h"

/* Read every credential's secret, put its placeholder in the plan's
 * environment (when the credential names a variable), and send both to
 * the proxy on control as one 'K' message per credential. Returns 0, or a
 * negative errno with err naming the credential and what failed (never
 * the secret). */
int creds_hand_over(const struct policy *pol, struct sandbox_plan *plan, int control, struct error *err) WUR;

/* The secret-looking variables of airlock's own environment (a name with
 * TOKEN, SECRET, PASSWORD, API_KEY... and a value of 8 to
 * CREDS_ENV_VALUE_MAX bytes), but those process.env.pass hands the
 * sandbox: sent to the proxy on control as one 'V' message each (name,
 * cut to CREDS_ENV_NAME_MAX bytes, NUL, value) for its leak scanner. The
 * proxy's own environment is cleared: this is the only way they reach
 * it. After creds_hand_over. Returns 0 or a negative errno with err set
 * (never naming a value). */
int creds_env_hand_over(const struct policy *pol, int control, struct error *err) WUR;

#define CREDS_ENV_NAME_MAX 100
#define CREDS_ENV_VALUE_MAX 65536
#define CREDS_ENV_MSG_MAX (1 + CREDS_ENV_NAME_MAX + 1 + CREDS_ENV_VALUE_MAX)

#endif
