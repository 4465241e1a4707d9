/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the pin a gateway sends its monitor
 * (proto/mcpgw.h's 'P'), which the monitor and, as root, its pins keeper
 * read from a gateway that may have been taken over: mcp_pin_decode on
 * any bytes.
 *
 * Besides crashes and sanitizer reports it checks:
 *  - what it accepts is a pin the pins file could hold: a tool and a
 *    definition not empty, a sha256 of 64 lower-case hex digits, the
 *    pending pair whole or absent, marked to be written;
 *  - encoding the pin it read gives back the very bytes (one spelling per
 *    pin: what the keeper writes is what the gateway sent);
 *  - a second decode of those bytes adds the same pin again.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "mcp/mcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool hex64(const char *s)
{
	if (strlen(s) != 64)
		return false;
	for (size_t i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_pins p = { 0 };
	int r = mcp_pin_decode(&p, (const char *)data, size);
	CHECK(r == 0 || r == -EINVAL || r == -ENOMEM);
	if (r != 0) {
		CHECK(p.n == 0);
		mcp_pins_free(&p);
		return 0;
	}
	CHECK(p.n == 1);
	const struct mcp_pin *pin = &p.v[0];
	CHECK(pin->dirty && pin->tool[0] && pin->definition[0] && hex64(pin->sha256));
	CHECK(pin->pending_sha256[0] ? hex64(pin->pending_sha256) && pin->pending_definition &&
					      pin->pending_definition[0]
				       : !pin->pending_definition);
	struct buf b = { 0 };
	CHECK(mcp_pin_encode(pin, &b) == 0);
	CHECK(b.len == size && memcmp(b.data, data, size) == 0);
	CHECK(mcp_pin_decode(&p, b.data, b.len) == 0 && p.n == 2);
	CHECK(!strcmp(p.v[1].tool, p.v[0].tool) && !strcmp(p.v[1].definition, p.v[0].definition) &&
	      !strcmp(p.v[1].sha256, p.v[0].sha256) && !strcmp(p.v[1].pending_sha256, p.v[0].pending_sha256));
	buf_free(&b);
	mcp_pins_free(&p);
	return 0;
}
