/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Chunked transfer coding (RFC 9112 §7.1), decoded or followed byte by
 * byte so that a body the proxy forwards is framed the same way by the
 * proxy and by the server, whatever the bytes' split into reads.
 */
#include "net/http.h"
#include "net/http_chars.h"
#include "util/hex.h"

#include <errno.h>
#include <string.h>

/* ---- chunked bodies ---- */

#define CHUNK_LINE_MAX 4096    /* chunk-size and extensions, CRLF excluded */
#define CHUNK_TRAILER_MAX 8192 /* all trailer lines, their CRLFs included */
#define CHUNK_DIGITS_MAX 16    /* 16 hex digits fill a uint64_t: no overflow */

enum chunk_state {
	CH_SIZE = 0,     /* chunk-size digits (a zeroed struct starts here) */
	CH_EXT,          /* chunk-ext after ';' */
	CH_EXT_QUOTED,   /* inside a quoted-string */
	CH_EXT_ESCAPE,   /* after '\\' in a quoted-string */
	CH_SIZE_LF,      /* CR seen at the end of the size line */
	CH_DATA,
	CH_DATA_CR,
	CH_DATA_LF,
	CH_TRAILER,      /* start of a trailer line, or of the final empty line */
	CH_TRAILER_NAME,
	CH_TRAILER_VALUE,
	CH_TRAILER_LF,
	CH_END_LF,
	CH_DONE,
	CH_ERROR,
};

/* Malformed framing at buf[at]: the decoder stays failed. */
static int chunk_fail(struct http_chunked *c, size_t *used, size_t at, int code)
{
	c->state = CH_ERROR;
	*used = at;
	return -code;
}

/* Extension characters outside quotes: tokens, '=', ';' and BWS. */
static bool is_ext_char(unsigned char c)
{
	return is_tchar(c) || c == '=' || c == ';' || c == ' ' || c == '\t';
}

/* qdtext (RFC 9110 §5.6.4) */
static bool is_qdtext(unsigned char c)
{
	return c == '\t' || c == ' ' || c == 0x21 || (c >= 0x23 && c <= 0x5b) ||
	       (c >= 0x5d && c <= 0x7e) || c >= 0x80;
}

/* Every state refuses a CR or LF it does not expect: a bare LF after the
 * size or the data, or a CR inside an extension's quoted-string, is where
 * chunked parsers have disagreed (and smuggled). */
int http_chunked_decode(struct http_chunked *c, const char *buf, size_t len, size_t *used, struct buf *out)
{
	size_t i = 0;

	*used = 0;
	while (i < len) {
		unsigned char ch = (unsigned char)buf[i];
		int v;

		switch ((enum chunk_state)c->state) {
		case CH_SIZE:
			v = hex_digit_value((unsigned char)ch);
			if (v >= 0) {
				if (c->line_len == CHUNK_DIGITS_MAX)
					return chunk_fail(c, used, i, EOVERFLOW);
				c->remaining = c->remaining << 4 | (uint64_t)v;
				c->line_len++;
				break;
			}
			/* BWS before ';' is refused as well: no client needs it
			 * and not every server takes it. */
			if (c->line_len == 0 || (ch != ';' && ch != '\r'))
				return chunk_fail(c, used, i, EINVAL);
			if (ch == ';') {
				c->line_len++;
				c->state = CH_EXT;
			} else {
				c->state = CH_SIZE_LF;
			}
			break;
		case CH_EXT:
			if (ch == '\r') {
				c->state = CH_SIZE_LF;
				break;
			}
			if (ch == '"')
				c->state = CH_EXT_QUOTED;
			else if (!is_ext_char(ch))
				return chunk_fail(c, used, i, EINVAL);
			goto ext_byte;
		case CH_EXT_QUOTED:
			if (ch == '"')
				c->state = CH_EXT;
			else if (ch == '\\')
				c->state = CH_EXT_ESCAPE;
			else if (!is_qdtext(ch))
				return chunk_fail(c, used, i, EINVAL);
			goto ext_byte;
		case CH_EXT_ESCAPE:
			/* quoted-pair: HTAB, SP, VCHAR, obs-text */
			if (ch != '\t' && ch != ' ' && (ch < 0x21 || ch == 0x7f))
				return chunk_fail(c, used, i, EINVAL);
			c->state = CH_EXT_QUOTED;
		ext_byte:
			if (++c->line_len > CHUNK_LINE_MAX)
				return chunk_fail(c, used, i, EMSGSIZE);
			break;
		case CH_SIZE_LF:
			if (ch != '\n')
				return chunk_fail(c, used, i, EINVAL);
			c->line_len = 0;
			/* last-chunk: trailers follow; remaining now counts
			 * their bytes. */
			c->state = c->remaining ? CH_DATA : CH_TRAILER;
			break;
		case CH_DATA: {
			size_t n = len - i;
			if ((uint64_t)n > c->remaining)
				n = (size_t)c->remaining;
			if (out && buf_append(out, buf + i, n) < 0) {
				*used = i;
				return -ENOMEM;
			}
			c->remaining -= n;
			i += n;
			if (c->remaining == 0)
				c->state = CH_DATA_CR;
			continue;
		}
		case CH_DATA_CR:
			if (ch != '\r')
				return chunk_fail(c, used, i, EINVAL);
			c->state = CH_DATA_LF;
			break;
		case CH_DATA_LF:
			if (ch != '\n')
				return chunk_fail(c, used, i, EINVAL);
			c->state = CH_SIZE;
			c->remaining = 0;
			c->line_len = 0;
			break;
		case CH_TRAILER:
			if (ch == '\r') {
				c->state = CH_END_LF;
				break;
			}
			/* a trailer field line, as strict as a header line */
			if (!is_tchar(ch))
				return chunk_fail(c, used, i, EINVAL);
			c->trailers = true;
			c->state = CH_TRAILER_NAME;
			goto count;
		case CH_TRAILER_NAME:
			if (ch == ':')
				c->state = CH_TRAILER_VALUE;
			else if (!is_tchar(ch))
				return chunk_fail(c, used, i, EINVAL);
			goto count;
		case CH_TRAILER_VALUE:
			if (ch == '\r')
				c->state = CH_TRAILER_LF;
			else if (!is_field_char(ch))
				return chunk_fail(c, used, i, EINVAL);
			goto count;
		case CH_TRAILER_LF:
			if (ch != '\n')
				return chunk_fail(c, used, i, EINVAL);
			c->state = CH_TRAILER;
			goto count;
		count:
			if (++c->remaining > CHUNK_TRAILER_MAX)
				return chunk_fail(c, used, i, EMSGSIZE);
			break;
		case CH_END_LF:
			if (ch != '\n')
				return chunk_fail(c, used, i, EINVAL);
			c->state = CH_DONE;
			*used = i + 1;
			return 1;
		case CH_DONE:
			*used = 0;
			return 1;
		case CH_ERROR:
			*used = 0;
			return -EINVAL;
		}
		i++;
	}
	*used = len;
	if (c->state == CH_DONE) {
		*used = 0;
		return 1;
	}
	return c->state == CH_ERROR ? -EINVAL : 0;
}

int http_chunked_feed(struct http_chunked *c, const char *buf, size_t len, size_t *used)
{
	return http_chunked_decode(c, buf, len, used, NULL);
}
