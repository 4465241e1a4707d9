/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for enterprise layering (policy/layer.c): the input is
 * a developer policy, a line "---8<---", and an enterprise file.
 *
 * Besides crashes and sanitizer reports it checks that layering never
 * widens: when the enterprise file locks nothing, every path of the
 * effective read, write and exec lists lies beneath one of the
 * developer's, every endpoint's host is covered by one of the
 * developer's, its ports are the developer's, and no limit is larger.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/internal.h"
#include "policy/layer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct policy_ctx ctx = { .home = "/home/fuzz", .cwd = "/work/fuzz" };

static bool beneath_one(const char *path, const struct policy_paths *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		if (policy_path_is_under(path, ps->v[i].path))
			return true;
	return false;
}

static void check_paths(const struct policy_paths *eff, const struct policy_paths *dev, const char *what)
{
	for (size_t i = 0; i < eff->n; i++)
		if (!beneath_one(eff->v[i].path, dev)) {
			fprintf(stderr, "%s widened: %s\n", what, eff->v[i].path);
			abort();
		}
}

static bool limit_wider(uint64_t eff, uint64_t dev)
{
	return dev != 0 && (eff == 0 || eff > dev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char sep[] = "\n---8<---\n";
	const char *text = (const char *)data;
	const char *cut = memmem(text, size, sep, sizeof(sep) - 1);
	struct policy *dev = NULL, *eff = NULL;
	struct policy_layer_report rep = { 0 };
	struct error err = { 0 };
	char path[] = "/tmp/fuzz-layer-XXXXXX";

	if (!cut)
		return 0;
	size_t dlen = (size_t)(cut - text);
	const char *ent = cut + sizeof(sep) - 1;
	size_t elen = size - dlen - (sizeof(sep) - 1);
	if (policy_load_buffer("dev.yaml", "/work/fuzz", text, dlen, &ctx, &dev, &err) < 0 ||
	    policy_load_buffer("dev.yaml", "/work/fuzz", text, dlen, &ctx, &eff, &err) < 0)
		goto out;
	int fd = mkstemp(path);
	if (fd < 0)
		goto out;
	bool ok = write(fd, ent, elen) == (ssize_t)elen;
	close(fd);
	char *files[1] = { path };
	if (ok && policy_apply_enterprise(eff, files, 1, &ctx, &rep, &err) == 0 && !memmem(ent, elen, "lock", 4)) {
		check_paths(&eff->filesystem.read, &dev->filesystem.read, "filesystem.read");
		check_paths(&eff->filesystem.write, &dev->filesystem.write, "filesystem.write");
		if (dev->process.exec_set)
			check_paths(&eff->process.exec, &dev->process.exec, "process.exec");
		for (size_t i = 0; i < eff->network.n_endpoints; i++) {
			const struct policy_endpoint *e = &eff->network.endpoints[i];
			bool covered = false;
			for (size_t j = 0; j < dev->network.n_endpoints && !covered; j++) {
				const struct policy_endpoint *d = &dev->network.endpoints[j];
				bool ports = true;
				for (size_t k = 0; k < e->n_ports && ports; k++) {
					ports = false;
					for (size_t m = 0; m < d->n_ports; m++)
						ports = ports || d->ports[m] == e->ports[k];
				}
				covered = ports && policy_host_covers(d->host, e->host);
			}
			if (!covered) {
				fprintf(stderr, "endpoint widened: %s\n", e->host);
				abort();
			}
		}
		if (dev->network.mode == POLICY_NET_NONE && eff->network.mode != POLICY_NET_NONE)
			abort();
		const struct policy_limits *a = &eff->sandbox.limits, *b = &dev->sandbox.limits;
		if (limit_wider(a->memory_bytes, b->memory_bytes) || limit_wider(a->pids, b->pids) ||
		    limit_wider(a->open_files, b->open_files) || limit_wider(a->cpu_seconds, b->cpu_seconds) ||
		    limit_wider(a->wall_seconds, b->wall_seconds))
			abort();
		if (eff->sandbox.boundary < dev->sandbox.boundary || (dev->audit.enabled && !eff->audit.enabled))
			abort();
		if (eff->sandbox.mode == POLICY_MODE_OBSERVE && dev->sandbox.mode != POLICY_MODE_OBSERVE)
			abort();
	}
	unlink(path);
out:
	policy_layer_report_free(&rep);
	policy_free(dev);
	policy_free(eff);
	return 0;
}
