// SPDX-License-Identifier: GPL-2.0
/* /proc/meminfo, sampled every sample interval so that a dip between two
 * scrapes still shows in the window's minimum. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "clock.h"
#include "collector.h"
#include "config.h"
#include "fileio.h"
#include "meminfo.h"

#define TREND_POINTS 4096

struct meminfo_config {
	char path[256];
	uint64_t horizon_msec;
};

struct trend_point {
	uint64_t t_usec;
	double available;
};

struct meminfo_state {
	struct procfile file;
	char path[256];
	struct meminfo last;
	bool have_last;
	uint64_t window_min, window_max;
	uint64_t window_samples;
	uint64_t read_errors;
	uint64_t horizon_usec;
	struct trend_point trend[TREND_POINTS]; /* ring of recent samples for the exhaustion estimate */
	size_t trend_head, trend_count;
};

static const struct collector_key meminfo_keys[] = {
	{ CONFIG_KEY_DURATION("exhaustion_horizon", struct meminfo_config, horizon_msec, 1000, 3600000), "60s" },
	{ CONFIG_KEY_PATH("path", struct meminfo_config, path), "/proc/meminfo" },
};

static int meminfo_probe(const void *cfg, const struct collector_context *ctx, struct collector_status *st)
{
	const struct meminfo_config *c = cfg;
	struct meminfo_state s = { 0 };
	struct meminfo m;
	int r;

	snprintf(st->mode, sizeof(st->mode), "procfs");
	r = procfile_open(&s.file, c->path, 1 << 20);
	if (r < 0) {
		collector_status_set_reason(st, "cannot open %s: %s", c->path, strerror(-r));
		return r == -ENOENT ? -EOPNOTSUPP : r;
	}
	r = meminfo_read(&s.file, &m);
	procfile_close(&s.file);
	if (r < 0) {
		collector_status_set_reason(st, "cannot parse %s: %s", c->path, strerror(-r));
		return r;
	}
	if (!(m.present & MEMINFO_HAS_AVAILABLE)) {
		st->state = COLLECTOR_DEGRADED;
		collector_status_set_reason(st, "no MemAvailable in %s (kernel older than 3.14)", c->path);
	}
	return 0;
}

static void trend_add(struct meminfo_state *s, uint64_t t_usec, double available)
{
	size_t newest = (s->trend_head + TREND_POINTS - 1) % TREND_POINTS;

	/* Long horizons with short sample intervals are thinned to fit the ring. */
	if (s->trend_count && t_usec - s->trend[newest].t_usec < s->horizon_usec / TREND_POINTS)
		return;
	s->trend[s->trend_head] = (struct trend_point){ t_usec, available };
	s->trend_head = (s->trend_head + 1) % TREND_POINTS;
	if (s->trend_count < TREND_POINTS)
		s->trend_count++;
}

/* Least-squares slope (bytes/s) over the points within the horizon; false
 * with fewer than three points or no spread in time. */
static bool trend_slope(const struct meminfo_state *s, uint64_t now_usec, double *slope)
{
	double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, den;
	size_t i;

	for (i = 0; i < s->trend_count; i++) {
		const struct trend_point *p = &s->trend[(s->trend_head + TREND_POINTS - 1 - i) % TREND_POINTS];
		/* Times relative to now keep the sums well conditioned. */
		double x = -((double)(now_usec - p->t_usec) / 1e6);

		if (now_usec - p->t_usec > s->horizon_usec)
			break;
		n++;
		sx += x;
		sy += p->available;
		sxx += x * x;
		sxy += x * p->available;
	}
	den = n * sxx - sx * sx;
	if (n < 3 || den <= 0)
		return false;
	*slope = (n * sxy - sx * sy) / den;
	return true;
}

static void window_reset(struct meminfo_state *s)
{
	s->window_min = UINT64_MAX;
	s->window_max = 0;
	s->window_samples = 0;
}

static int meminfo_sample(void *priv, uint64_t now_usec)
{
	struct meminfo_state *s = priv;
	struct meminfo m;
	int r;

	r = meminfo_read(&s->file, &m);
	if (r < 0) {
		s->read_errors++;
		return r;
	}
	s->last = m;
	s->have_last = true;
	if (m.present & MEMINFO_HAS_AVAILABLE)
		trend_add(s, now_usec ? now_usec : now_mono_usec(), (double)m.available);
	if (m.present & MEMINFO_HAS_AVAILABLE) {
		if (m.available < s->window_min)
			s->window_min = m.available;
		if (m.available > s->window_max)
			s->window_max = m.available;
	}
	s->window_samples++;
	return 0;
}

static int meminfo_start(void *priv, const void *cfg, const struct collector_context *ctx,
			 struct collector_status *st)
{
	const struct meminfo_config *c = cfg;
	struct meminfo_state *s = priv;
	int r;

	snprintf(st->mode, sizeof(st->mode), "procfs");
	snprintf(s->path, sizeof(s->path), "%s", c->path);
	s->horizon_usec = c->horizon_msec * USEC_PER_MSEC;
	/* meminfo_proc_show: one seq_file record. */
	r = procfile_open_whole(&s->file, c->path, 1 << 20);
	if (r < 0) {
		collector_status_set_reason(st, "cannot open %s: %s", c->path, strerror(-r));
		return r == -ENOENT ? -EOPNOTSUPP : r;
	}
	window_reset(s);
	return meminfo_sample(s, 0);
}

static int meminfo_collect(void *priv, struct snapshot *snap)
{
	struct meminfo_state *s = priv;
	const struct meminfo *m = &s->last;
	/* The window ends now: take one last sample so "last" is the end value,
	 * before the gauges below copy it (they were a sample behind the ETA). */
	int r = meminfo_sample(s, 0);
	const struct {
		const struct metric_desc *desc;
		unsigned bit;
		uint64_t value;
	} gauges[] = {
		{ METRIC(MW_MEMORY_TOTAL_BYTES), MEMINFO_HAS_TOTAL, m->total },
		{ METRIC(MW_MEMORY_FREE_BYTES), MEMINFO_HAS_FREE, m->free },
		{ METRIC(MW_MEMORY_AVAILABLE_BYTES), MEMINFO_HAS_AVAILABLE, m->available },
		{ METRIC(MW_MEMORY_CACHED_BYTES), MEMINFO_HAS_CACHED, m->cached },
		{ METRIC(MW_MEMORY_BUFFERS_BYTES), MEMINFO_HAS_BUFFERS, m->buffers },
		{ METRIC(MW_MEMORY_ANON_BYTES), MEMINFO_HAS_ANON_PAGES, m->anon_pages },
		{ METRIC(MW_MEMORY_SHMEM_BYTES), MEMINFO_HAS_SHMEM, m->shmem },
		{ METRIC(MW_MEMORY_SLAB_RECLAIMABLE_BYTES), MEMINFO_HAS_SLAB_RECLAIMABLE, m->slab_reclaimable },
		{ METRIC(MW_MEMORY_DIRTY_BYTES), MEMINFO_HAS_DIRTY, m->dirty },
		{ METRIC(MW_MEMORY_SWAP_TOTAL_BYTES), MEMINFO_HAS_SWAP_TOTAL, m->swap_total },
		{ METRIC(MW_MEMORY_SWAP_FREE_BYTES), MEMINFO_HAS_SWAP_FREE, m->swap_free },
	};
	double slope;
	size_t i;

	if (r < 0 && !s->have_last)
		return r;
	for (i = 0; i < ARRAY_SIZE(gauges); i++)
		if (m->present & gauges[i].bit)
			snapshot_add(snap, gauges[i].desc, NULL, (double)gauges[i].value);
	if ((m->present & MEMINFO_HAS_AVAILABLE) && s->window_samples) {
		snapshot_add(snap, METRIC(MW_MEMORY_AVAILABLE_WINDOW_MIN_BYTES), NULL, (double)s->window_min);
		snapshot_add(snap, METRIC(MW_MEMORY_AVAILABLE_WINDOW_MAX_BYTES), NULL, (double)s->window_max);
		if (m->total)
			snapshot_add(snap, METRIC(MW_MEMORY_AVAILABLE_RATIO), NULL, (double)m->available / (double)m->total);
	}
	snapshot_add(snap, METRIC(MW_MEMORY_WINDOW_SAMPLES), NULL, (double)s->window_samples);
	if ((m->present & MEMINFO_HAS_AVAILABLE) && trend_slope(s, now_mono_usec(), &slope)) {
		snapshot_add(snap, METRIC(MW_MEMORY_AVAILABLE_SLOPE_BYTES_PER_SECOND), NULL, slope);
		snapshot_add(snap, METRIC(MW_MEMORY_EXHAUSTION_ETA_SECONDS), NULL, slope < 0 ? (double)m->available / -slope : INFINITY);
	}
	window_reset(s);
	return r;
}

static int meminfo_reload(void *priv, const void *cfg)
{
	const struct meminfo_config *c = cfg;
	struct meminfo_state *s = priv;
	struct procfile f;
	int r;

	s->horizon_usec = c->horizon_msec * USEC_PER_MSEC;
	if (strcmp(c->path, s->path) == 0)
		return 0;
	r = procfile_open_whole(&f, c->path, 1 << 20);
	if (r < 0)
		return r;
	procfile_close(&s->file);
	s->file = f;
	snprintf(s->path, sizeof(s->path), "%s", c->path);
	return 0;
}

static void meminfo_stop(void *priv)
{
	struct meminfo_state *s = priv;

	procfile_close(&s->file);
}

const struct collector_ops meminfo_collector = {
	.name = "meminfo",
	.summary = "/proc/meminfo sampled every sample interval: last, min and max available memory per window",
	.default_enabled = true,
	.config_size = sizeof(struct meminfo_config),
	.keys = meminfo_keys,
	.n_keys = ARRAY_SIZE(meminfo_keys),
	.priv_size = sizeof(struct meminfo_state),
	.probe = meminfo_probe,
	.start = meminfo_start,
	.sample = meminfo_sample,
	.collect = meminfo_collect,
	.reload = meminfo_reload,
	.stop = meminfo_stop,
};
