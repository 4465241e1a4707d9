/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock policy import --from FORMAT [--narrow] FILE
 * airlock policy export --to FORMAT [--accept-wider] FILE
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "policy/import/doc.h"
#include "policy/import/import.h"
#include "sandbox/sandbox.h"
#include "util/buf.h"
#include "util/file.h"

static const char import_usage[] =
	"usage: airlock policy import --from srt|codex|mxc|openshell [--narrow] FILE\n"
	"       airlock policy export --to srt|mxc [--accept-wider] FILE\n"
	"\n"
	"import  convert another runtime's settings FILE into an airlock policy on\n"
	"        stdout, a comment above each entry naming the field it came from.\n"
	"        A field airlock cannot express exactly is refused (exit 2, with\n"
	"        FILE:LINE:COL and the field); --narrow accepts fields whose airlock\n"
	"        form grants strictly less than the source, listed at the top.\n"
	"export  convert the airlock policy FILE into the settings of srt or MXC\n"
	"        (JSON) on stdout; a setting the target cannot express is refused\n"
	"        with the airlock field. --accept-wider converts settings the target\n"
	"        can only express more widely, and lists each on stderr.\n";

static int usage(void)
{
	fputs(import_usage, stderr);
	return SANDBOX_EXIT_USAGE;
}

static void get_ctx(char *cwd, size_t size, struct policy_ctx *ctx)
{
	const char *home = getenv("HOME");
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		home = pw && pw->pw_dir ? pw->pw_dir : "/";
	}
	ctx->home = home;
	ctx->cwd = getcwd(cwd, size) ? cwd : "/";
}

/* The words of import and export: FILE, a format after `fmt_opt`, and the
 * flag `flag_opt`. -1 when the command goes on, else its exit code (after
 * --help, or on a usage error). */
static int parse_args(int argc, char **argv, const char *fmt_opt, const char *flag_opt,
		      const char **fmt, bool *flag, const char **file)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(import_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], fmt_opt) && i + 1 < argc) {
			*fmt = argv[++i];
		} else if (!strcmp(argv[i], flag_opt)) {
			*flag = true;
		} else if (argv[i][0] == '-' || *file) {
			return usage();
		} else {
			*file = argv[i];
		}
	}
	if (!*fmt || !*file)
		return usage();
	return -1;
}

int cli_policy_import(int argc, char **argv)
{
	const char *from = NULL, *file = NULL;
	bool narrow = false;
	enum imp_format fmt;

	int r = parse_args(argc, argv, "--from", "--narrow", &from, &narrow, &file);
	if (r >= 0)
		return r;
	if (!imp_format_from_name(from, &fmt)) {
		fprintf(stderr, "airlock policy import: unknown format '%s' (srt, codex, mxc or openshell)\n", from);
		return SANDBOX_EXIT_USAGE;
	}

	/* The name goes into messages and comments: a crafted file name must
	 * not forge lines there. */
	char shown[PATH_MAX];
	snprintf(shown, sizeof(shown), "%s", file);
	for (char *c = shown; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	struct buf in = { 0 };
	r = file_read_all(file, IMP_MAX_INPUT, &in);
	if (r < 0) {
		fprintf(stderr, "airlock: %s: %s\n", shown, r == -E2BIG ? "larger than 1 MiB" : strerror(-r));
		buf_free(&in);
		return SANDBOX_EXIT_USAGE;
	}
	struct error err = { 0 };
	char *yaml = NULL;
	r = imp_convert(fmt, shown, in.data ? in.data : "", in.len, narrow, &yaml, &err);
	buf_free(&in);
	if (r < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return SANDBOX_EXIT_USAGE;
	}
	/* What is printed must be a policy airlock accepts. */
	char cwd[PATH_MAX];
	struct policy_ctx ctx;
	_cleanup_policy_ struct policy *back = NULL;
	get_ctx(cwd, sizeof(cwd), &ctx);
	char name[PATH_MAX + 32];
	snprintf(name, sizeof(name), "(policy imported from %s)", shown);
	if (policy_load_buffer(name, NULL, yaml, strlen(yaml), &ctx, &back, &err) < 0) {
		fprintf(stderr, "airlock: the converted policy is refused, so it is not printed: %s\n", err.msg);
		free(yaml);
		return SANDBOX_EXIT_USAGE;
	}
	fputs(yaml, stdout);
	free(yaml);
	return 0;
}

int cli_policy_export(int argc, char **argv)
{
	const char *to = NULL, *file = NULL;
	bool wider = false;
	int r = parse_args(argc, argv, "--to", "--accept-wider", &to, &wider, &file);
	if (r >= 0)
		return r;

	enum imp_format fmt;
	if (!imp_format_from_name(to, &fmt) || (fmt != IMP_FORMAT_SRT && fmt != IMP_FORMAT_MXC)) {
		fprintf(stderr, "airlock policy export: cannot export to '%s' (srt or mxc)\n", to);
		return SANDBOX_EXIT_USAGE;
	}
	struct error err = { 0 };
	_cleanup_policy_ struct policy *pol = NULL;
	if (cli_load_policy(file, &pol, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return SANDBOX_EXIT_USAGE;
	}
	char cwd[PATH_MAX];
	struct policy_ctx ctx;
	get_ctx(cwd, sizeof(cwd), &ctx);
	char *json = NULL, *warnings = NULL;
	if (imp_export(fmt, pol, ctx.cwd, wider, &json, &warnings, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return SANDBOX_EXIT_USAGE;
	}
	if (warnings && *warnings)
		fputs(warnings, stderr);
	fputs(json, stdout);
	free(json);
	free(warnings);
	return 0;
}
