/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "policy/layer.h"

const char *cli_home(void)
{
	const char *home = getenv("HOME");
	if (home && home[0] == '/')
		return home;
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir ? pw->pw_dir : "/";
}

static int load_with(const char *file, const char *enterprise, bool layered, struct policy **out,
		     struct policy_layer_report *rep, struct error *err)
{
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return error_sys(err, errno, "cannot determine the current directory");
	struct policy_ctx ctx = { .home = cli_home(), .cwd = cwd };
	int r = file ? policy_load_file(file, &ctx, out, err) : policy_default(&ctx, out, err);
	if (r < 0 || !layered)
		return r;
	char **files = NULL;
	size_t n = 0;
	if ((r = policy_enterprise_files(enterprise, &files, &n, err)) < 0 ||
	    (r = policy_apply_enterprise(*out, files, n, &ctx, rep, err)) < 0) {
		policy_free(*out);
		*out = NULL;
	}
	policy_strv_free(files, n);
	return r;
}

int cli_load_policy(const char *file, struct policy **out, struct error *err)
{
	return load_with(file, NULL, false, out, NULL, err);
}

int cli_load_layered(const char *file, const char *enterprise, struct policy **out,
		     struct policy_layer_report *rep, struct error *err)
{
	return load_with(file, enterprise, true, out, rep, err);
}

bool cli_layer_report(const struct policy_layer_report *rep, FILE *f)
{
	for (size_t i = 0; i < rep->n_msgs; i++) {
		fputs("airlock: enterprise: ", f);
		policy_print_comment(f, rep->msgs[i]);
		fputc('\n', f);
	}
	if (rep->refuse && rep->n_msgs) {
		fprintf(f,
			"airlock: enterprise: refusing: the policy asks for more than the enterprise policy allows "
			"(on_excess: refuse at ");
		policy_print_comment(f, rep->refuse_by ? rep->refuse_by : "?");
		fputs(")\n", f);
		return true;
	}
	return false;
}

bool cli_no_audit_contradicts(const struct policy *pol, bool no_audit)
{
	if (!no_audit || !pol->audit.dir)
		return false;
	fprintf(stderr,
		"airlock: %s:%u:%u: audit.dir: the policy writes the decision log to %s; --no-audit contradicts it "
		"(drop one of them)\n",
		pol->origin.audit_dir.file ? pol->origin.audit_dir.file : pol->file, pol->origin.audit_dir.line,
		pol->origin.audit_dir.col, pol->audit.dir);
	return true;
}
