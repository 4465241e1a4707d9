/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Injection markers in what a server says to the model: characters a
 * person reviewing a tool cannot see but the model reads, terminal escape
 * sequences, and phrases that address the model in a tool description.
 * docs/mcp.md lists them; the list is a tripwire, not a proof of safety.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp/mcp.h"

/* Phrases that address the model rather than describe the tool,
 * lower-case; matched case-insensitively in descriptions.
 * WARNING: docs/mcp.md carries this list; keep the two in step. */
static const char *const phrases[] = {
	"ignore previous instructions",
	"ignore all previous",
	"ignore the above",
	"disregard previous",
	"disregard all prior",
	"<important>",
	"<system>",
	"do not tell the user",
	"don't tell the user",
	"without telling the user",
	"do not mention",
	"before using this tool, read",
	"you must first read",
	"~/.ssh",
	"id_rsa",
	"system prompt",
};

/* Decode one UTF-8 sequence (the reader has validated the text). */
static size_t utf8(const unsigned char *s, size_t len, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0 && len >= 2) {
		*cp = ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
		return 2;
	}
	if ((s[0] & 0xf0) == 0xe0 && len >= 3) {
		*cp = ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
		return 3;
	}
	if ((s[0] & 0xf8) == 0xf0 && len >= 4) {
		*cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
		      ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
		return 4;
	}
	*cp = 0xfffd;
	return 1;
}

/* Characters that render as nothing (or reorder what is shown). */
static const char *invisible(uint32_t c)
{
	if (c == 0x200b || c == 0x200c || c == 0x200d || c == 0x2060 || c == 0xfeff || c == 0x180e ||
	    c == 0x00ad || (c >= 0x2061 && c <= 0x2064))
		return "zero-width character";
	if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x200e || c == 0x200f ||
	    c == 0x061c)
		return "bidirectional control";
	if (c >= 0xe0000 && c <= 0xe007f)
		return "Unicode tag character";
	if (c == 0x1b || (c >= 0x80 && c <= 0x9f))
		return "terminal escape (ESC or C1 control)";
	return NULL;
}

bool mcp_scan_injection(const char *s, size_t len, bool check_phrases, char *what, size_t what_len)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8(u + i, len - i, &cp);
		const char *kind = invisible(cp);
		if (kind) {
			snprintf(what, what_len, "%s U+%04X", kind, (unsigned)cp);
			return true;
		}
		i += n;
	}
	if (!check_phrases)
		return false;
	for (size_t p = 0; p < sizeof(phrases) / sizeof(phrases[0]); p++) {
		size_t pl = strlen(phrases[p]);
		for (size_t i = 0; i + pl <= len; i++)
			if (!strncasecmp(s + i, phrases[p], pl)) {
				snprintf(what, what_len, "instruction phrase \"%s\"", phrases[p]);
				return true;
			}
	}
	return false;
}

char *mcp_strip_invisible(const char *s, size_t len)
{
	char *out = malloc(len + 1);
	size_t o = 0;
	if (!out)
		return NULL;
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8(u + i, len - i, &cp);
		if (cp == 0x1b) {
			/* An ANSI sequence: ESC, then a CSI ("[" parameters and a
			 * final byte in @..~) or one more byte. */
			i++;
			if (i < len && s[i] == '[') {
				i++;
				while (i < len && !(s[i] >= '@' && s[i] <= '~'))
					i++;
			}
			if (i < len)
				i++;
			continue;
		}
		if (!invisible(cp))
			memcpy(out + o, s + i, n), o += n;
		i += n;
	}
	out[o] = '\0';
	return out;
}
