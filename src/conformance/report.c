/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The suite's report: a table for people, JSON for tools, JUnit XML for CI.
 */
#include <stdio.h>
#include <string.h>

#include "conformance/conformance.h"

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void xml_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			/* XML 1.0 has no other control characters. */
			fputc(c < 0x20 && c != '\t' && c != '\n' ? '?' : c, f);
		}
	}
}

static void counts(const struct conf_opts *o, const struct conf_result *res, size_t *held, size_t *failed,
		   size_t *na, size_t *failed_in_profile)
{
	*held = *failed = *na = *failed_in_profile = 0;
	for (size_t i = 0; i < conf_nreqs; i++) {
		switch (res[i].verdict) {
		case CONF_HELD:
			(*held)++;
			break;
		case CONF_FAILED:
			(*failed)++;
			*failed_in_profile += conf_in_profile(&conf_reqs[i], o->strict);
			break;
		case CONF_NA:
			(*na)++;
			break;
		}
	}
}

void conf_report(FILE *f, enum conf_format fmt, const struct conf_opts *o, const struct conf_info *info,
		 const struct conf_result *res)
{
	size_t held, failed, na, fip;
	const char *profile = o->strict ? "strict" : "baseline";

	counts(o, res, &held, &failed, &na, &fip);
	if (fmt == CONF_JSON) {
		fputs("{\"runtime\":", f);
		json_str(f, o->runtime);
		fprintf(f, ",\"profile\":\"%s\",\"network_namespace\":", profile);
		json_str(f, info->netns);
		fputs(",\"host_vsock\":", f);
		json_str(f, info->vsock);
		fputs(",\"runtime_status\":", f);
		json_str(f, info->runtime_status);
		fputs(",\"requirements\":[", f);
		for (size_t i = 0; i < conf_nreqs; i++) {
			const struct conf_req *q = &conf_reqs[i];
			fprintf(f, "%s{\"id\":\"%s\",\"group\":\"%s\",\"level\":\"%s\",\"in_profile\":%s,\"aicm\":[",
				i ? "," : "", q->id, conf_group_name(q->group), conf_level_name(q->level),
				conf_in_profile(q, o->strict) ? "true" : "false");
			char aicm[64];
			snprintf(aicm, sizeof(aicm), "%s", q->aicm);
			int first = 1;
			for (char *save = NULL, *t = strtok_r(aicm, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				fprintf(f, "%s\"%s\"", first ? "" : ",", t);
				first = 0;
			}
			fputs("],\"rationale\":", f);
			json_str(f, q->rationale);
			for (int nb = 0; nb < 2; nb++) {
				const char *const *pl = nb ? q->neighbours : q->attacks;
				fprintf(f, ",\"%s\":[", nb ? "neighbours" : "attacks");
				for (size_t k = 0; k < CONF_MAX_PROBES && pl[k]; k++) {
					if (k)
						fputc(',', f);
					json_str(f, pl[k]);
				}
				fputc(']', f);
			}
			fprintf(f, ",\"verdict\":\"%s\",\"evidence\":",
				res[i].verdict == CONF_HELD ? "held" : res[i].verdict == CONF_FAILED ? "failed" : "not_applicable");
			json_str(f, res[i].evidence);
			fputc('}', f);
		}
		fprintf(f, "],\"summary\":{\"held\":%zu,\"failed\":%zu,\"not_applicable\":%zu,\"failed_in_profile\":%zu}}\n",
			held, failed, na, fip);
		return;
	}
	if (fmt == CONF_JUNIT) {
		fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
		fprintf(f, "<testsuite name=\"airlock-conformance\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
			conf_nreqs, fip, conf_nreqs - held - fip);
		fputs("<properties><property name=\"runtime\" value=\"", f);
		xml_str(f, o->runtime);
		fprintf(f, "\"/><property name=\"profile\" value=\"%s\"/><property name=\"network_namespace\" value=\"", profile);
		xml_str(f, info->netns);
		fputs("\"/><property name=\"host_vsock\" value=\"", f);
		xml_str(f, info->vsock);
		fputs("\"/></properties>\n", f);
		for (size_t i = 0; i < conf_nreqs; i++) {
			const struct conf_req *q = &conf_reqs[i];
			bool inp = conf_in_profile(q, o->strict);
			fprintf(f, "<testcase classname=\"%s\" name=\"%s\">", conf_group_name(q->group), q->id);
			if (res[i].verdict == CONF_FAILED && inp) {
				fputs("<failure message=\"", f);
				xml_str(f, q->rationale);
				fputs("\">", f);
				xml_str(f, res[i].evidence);
				fputs("</failure>", f);
			} else if (res[i].verdict != CONF_HELD) {
				fputs("<skipped message=\"", f);
				if (!inp)
					fprintf(f, "%s: not in the %s profile; ",
						res[i].verdict == CONF_FAILED ? "failed" : "not applicable", profile);
				xml_str(f, res[i].evidence);
				fputs("\"/>", f);
			}
			fputs("<system-out>", f);
			fprintf(f, "AICM %s. ", q->aicm);
			xml_str(f, res[i].evidence);
			fputs("</system-out></testcase>\n", f);
		}
		fputs("</testsuite>\n</testsuites>\n", f);
		return;
	}
	fprintf(f, "runtime: %s\nprofile: %s\nnetwork namespace: %s\nhost vsock: %s\nruntime's own status: %s\n\n",
		o->runtime, profile, info->netns, info->vsock, info->runtime_status);
	fprintf(f, "%-26s %-11s %-7s %-14s %s\n", "REQUIREMENT", "GROUP", "VERDICT", "AICM", "EVIDENCE");
	for (size_t i = 0; i < conf_nreqs; i++) {
		const struct conf_req *q = &conf_reqs[i];
		fprintf(f, "%-26s %-11s %-7s %-14s %s%s\n", q->id, conf_group_name(q->group),
			conf_verdict_name(res[i].verdict), q->aicm, conf_in_profile(q, o->strict) ? "" : "[strict only] ",
			res[i].evidence);
	}
	fprintf(f, "\n%zu held, %zu failed, %zu not applicable; %zu failed in the %s profile\n", held, failed, na, fip,
		profile);
}
