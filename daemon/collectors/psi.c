// SPDX-License-Identifier: GPL-2.0
/* Pressure stall information for memory: /proc/pressure/memory. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "collector.h"
#include "config.h"
#include "fileio.h"
#include "psi.h"

struct psi_config {
	char path[256];
};

struct psi_state {
	struct procfile file;
	char path[256];
};

static const enum metric_id avg_ids[2][3] = {
	{ MW_PRESSURE_MEMORY_SOME_AVG10_RATIO, MW_PRESSURE_MEMORY_SOME_AVG60_RATIO, MW_PRESSURE_MEMORY_SOME_AVG300_RATIO },
	{ MW_PRESSURE_MEMORY_FULL_AVG10_RATIO, MW_PRESSURE_MEMORY_FULL_AVG60_RATIO, MW_PRESSURE_MEMORY_FULL_AVG300_RATIO },
};

static const struct collector_key psi_keys[] = {
	{ CONFIG_KEY_PATH("path", struct psi_config, path), "/proc/pressure/memory" },
};

static int psi_read(struct psi_state *s, struct psi_stats *out)
{
	const char *data;
	size_t len;
	int r;

	r = procfile_read(&s->file, &data, &len);
	if (r < 0)
		return r;
	return psi_parse(data, len, out);
}

static int psi_open(struct psi_state *s, const char *path, struct collector_status *st)
{
	struct psi_stats stats;
	int r;

	snprintf(st->mode, sizeof(st->mode), "procfs");
	r = procfile_open_whole(&s->file, path, 64 * 1024); /* psi_show: one seq_file record */
	if (r == -ENOENT) {
		if (strcmp(path, "/proc/pressure/memory") == 0)
			collector_status_set_reason(st, "%s does not exist (kernel built without CONFIG_PSI)", path);
		else
			collector_status_set_reason(st, "%s does not exist", path);
		return -EOPNOTSUPP;
	}
	if (r < 0) {
		collector_status_set_reason(st, "cannot open %s: %s", path, strerror(-r));
		return r;
	}
	r = psi_read(s, &stats);
	if (r == -EOPNOTSUPP) {
		/* The file exists but the kernel was booted with psi=0. */
		collector_status_set_reason(st, "PSI is disabled in this kernel (psi=0 on the command line)");
		procfile_close(&s->file);
		return -EOPNOTSUPP;
	}
	if (r < 0) {
		collector_status_set_reason(st, "cannot parse %s: %s", path, strerror(-r));
		procfile_close(&s->file);
		return r;
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	return 0;
}

static int psi_probe(const void *cfg, const struct collector_context *ctx, struct collector_status *st)
{
	const struct psi_config *c = cfg;
	struct psi_state s;
	int r;

	r = psi_open(&s, c->path, st);
	if (r == 0)
		procfile_close(&s.file);
	return r;
}

static int psi_start(void *priv, const void *cfg, const struct collector_context *ctx,
		     struct collector_status *st)
{
	const struct psi_config *c = cfg;

	return psi_open(priv, c->path, st);
}

static void put_line(struct snapshot *snap, const struct metric_desc *total,
		     const enum metric_id avg[3], const struct psi_line *l)
{
	snapshot_add(snap, total, NULL, (double)l->total_usec / 1e6);
	snapshot_add(snap, METRIC(avg[0]), NULL, l->avg10 / 100.0);
	snapshot_add(snap, METRIC(avg[1]), NULL, l->avg60 / 100.0);
	snapshot_add(snap, METRIC(avg[2]), NULL, l->avg300 / 100.0);
}

static int psi_collect(void *priv, struct snapshot *snap)
{
	struct psi_stats stats;
	int r;

	r = psi_read(priv, &stats);
	if (r < 0)
		return r;
	if (stats.has_some)
		put_line(snap, METRIC(MW_PRESSURE_MEMORY_SOME_SECONDS_TOTAL), avg_ids[0], &stats.some);
	if (stats.has_full)
		put_line(snap, METRIC(MW_PRESSURE_MEMORY_FULL_SECONDS_TOTAL), avg_ids[1], &stats.full);
	return 0;
}

static int psi_reload(void *priv, const void *cfg)
{
	const struct psi_config *c = cfg;
	struct psi_state *s = priv, n;
	struct collector_status st = { 0 };
	int r;

	if (strcmp(c->path, s->path) == 0)
		return 0;
	r = psi_open(&n, c->path, &st);
	if (r < 0)
		return r;
	procfile_close(&s->file);
	*s = n;
	return 0;
}

static void psi_stop(void *priv)
{
	struct psi_state *s = priv;

	procfile_close(&s->file);
}

const struct collector_ops psi_collector = {
	.name = "psi",
	.summary = "memory pressure stall information from /proc/pressure/memory",
	.default_enabled = true,
	.config_size = sizeof(struct psi_config),
	.keys = psi_keys,
	.n_keys = ARRAY_SIZE(psi_keys),
	.priv_size = sizeof(struct psi_state),
	.probe = psi_probe,
	.start = psi_start,
	.collect = psi_collect,
	.reload = psi_reload,
	.stop = psi_stop,
};
