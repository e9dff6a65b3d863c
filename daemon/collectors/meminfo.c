// SPDX-License-Identifier: GPL-2.0
/* /proc/meminfo, sampled every sample interval so that a dip between two
 * scrapes still shows in the window's minimum. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "collector.h"
#include "config.h"
#include "core.h"
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

static const struct metric_desc desc_total = {
	"memwatch_memory_total_bytes", "Total usable RAM (MemTotal).", METRIC_GAUGE,
};
static const struct metric_desc desc_free = {
	"memwatch_memory_free_bytes", "Unused RAM (MemFree).", METRIC_GAUGE,
};
static const struct metric_desc desc_available = {
	"memwatch_memory_available_bytes",
	"Memory available for new work without swapping (MemAvailable), at the end of the window.",
	METRIC_GAUGE,
};
static const struct metric_desc desc_available_min = {
	"memwatch_memory_available_window_min_bytes",
	"Lowest MemAvailable sampled during the window.", METRIC_GAUGE,
};
static const struct metric_desc desc_available_max = {
	"memwatch_memory_available_window_max_bytes",
	"Highest MemAvailable sampled during the window.", METRIC_GAUGE,
};
static const struct metric_desc desc_available_ratio = {
	"memwatch_memory_available_ratio", "MemAvailable / MemTotal, 0 to 1.", METRIC_GAUGE,
};
static const struct metric_desc desc_cached = {
	"memwatch_memory_cached_bytes", "Page cache (Cached), excluding swap cache.", METRIC_GAUGE,
};
static const struct metric_desc desc_buffers = {
	"memwatch_memory_buffers_bytes", "Block device buffers (Buffers).", METRIC_GAUGE,
};
static const struct metric_desc desc_anon = {
	"memwatch_memory_anon_bytes", "Anonymous memory mapped into user space (AnonPages).", METRIC_GAUGE,
};
static const struct metric_desc desc_shmem = {
	"memwatch_memory_shmem_bytes", "Shared memory and tmpfs (Shmem).", METRIC_GAUGE,
};
static const struct metric_desc desc_slab_reclaimable = {
	"memwatch_memory_slab_reclaimable_bytes", "Reclaimable slab (SReclaimable).", METRIC_GAUGE,
};
static const struct metric_desc desc_dirty = {
	"memwatch_memory_dirty_bytes", "Memory waiting to be written back (Dirty).", METRIC_GAUGE,
};
static const struct metric_desc desc_swap_total = {
	"memwatch_memory_swap_total_bytes", "Total swap space (SwapTotal).", METRIC_GAUGE,
};
static const struct metric_desc desc_swap_free = {
	"memwatch_memory_swap_free_bytes", "Unused swap space (SwapFree).", METRIC_GAUGE,
};
static const struct metric_desc desc_slope = {
	"memwatch_memory_available_slope_bytes_per_second",
	"Least-squares slope of MemAvailable over the last exhaustion_horizon; negative when memory is being used up.",
	METRIC_GAUGE,
};
static const struct metric_desc desc_eta = {
	"memwatch_memory_exhaustion_eta_seconds",
	"Seconds until MemAvailable reaches zero at the current slope; +Inf when it is not falling.",
	METRIC_GAUGE,
};
static const struct metric_desc desc_samples = {
	"memwatch_memory_window_samples", "Number of /proc/meminfo samples taken in the window.", METRIC_GAUGE,
};

static void meminfo_config_defaults(void *cfg)
{
	struct meminfo_config *c = cfg;

	snprintf(c->path, sizeof(c->path), "/proc/meminfo");
	c->horizon_msec = 60000;
}

static int meminfo_configure(void *cfg, const char *key, const char *value, char *errmsg, size_t errlen)
{
	struct meminfo_config *c = cfg;

	if (strcmp(key, "exhaustion_horizon") == 0) {
		int r = config_parse_duration_msec(value, 1000, 3600000, &c->horizon_msec);

		if (r < 0)
			snprintf(errmsg, errlen, "'%s' is not a duration between 1s and 1h", value);
		return r;
	}
	if (strcmp(key, "path") != 0)
		return -ENOENT;
	return config_parse_path(value, c->path, sizeof(c->path), errmsg, errlen);
}

static int meminfo_probe(const void *cfg, struct collector_status *st)
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
	r = procfile_open(&s->file, c->path, 1 << 20);
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
		{ &desc_total, MEMINFO_HAS_TOTAL, m->total },
		{ &desc_free, MEMINFO_HAS_FREE, m->free },
		{ &desc_available, MEMINFO_HAS_AVAILABLE, m->available },
		{ &desc_cached, MEMINFO_HAS_CACHED, m->cached },
		{ &desc_buffers, MEMINFO_HAS_BUFFERS, m->buffers },
		{ &desc_anon, MEMINFO_HAS_ANON_PAGES, m->anon_pages },
		{ &desc_shmem, MEMINFO_HAS_SHMEM, m->shmem },
		{ &desc_slab_reclaimable, MEMINFO_HAS_SLAB_RECLAIMABLE, m->slab_reclaimable },
		{ &desc_dirty, MEMINFO_HAS_DIRTY, m->dirty },
		{ &desc_swap_total, MEMINFO_HAS_SWAP_TOTAL, m->swap_total },
		{ &desc_swap_free, MEMINFO_HAS_SWAP_FREE, m->swap_free },
	};
	double slope;
	size_t i;

	if (r < 0 && !s->have_last)
		return r;
	for (i = 0; i < ARRAY_SIZE(gauges); i++)
		if (m->present & gauges[i].bit)
			snapshot_add(snap, gauges[i].desc, NULL, (double)gauges[i].value);
	if ((m->present & MEMINFO_HAS_AVAILABLE) && s->window_samples) {
		snapshot_add(snap, &desc_available_min, NULL, (double)s->window_min);
		snapshot_add(snap, &desc_available_max, NULL, (double)s->window_max);
		if (m->total)
			snapshot_add(snap, &desc_available_ratio, NULL, (double)m->available / (double)m->total);
	}
	snapshot_add(snap, &desc_samples, NULL, (double)s->window_samples);
	if ((m->present & MEMINFO_HAS_AVAILABLE) && trend_slope(s, now_mono_usec(), &slope)) {
		snapshot_add(snap, &desc_slope, NULL, slope);
		snapshot_add(snap, &desc_eta, NULL, slope < 0 ? (double)m->available / -slope : INFINITY);
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
	r = procfile_open(&f, c->path, 1 << 20);
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
	.config_defaults = meminfo_config_defaults,
	.configure = meminfo_configure,
	.priv_size = sizeof(struct meminfo_state),
	.probe = meminfo_probe,
	.start = meminfo_start,
	.sample = meminfo_sample,
	.collect = meminfo_collect,
	.reload = meminfo_reload,
	.stop = meminfo_stop,
};
