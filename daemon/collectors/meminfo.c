// SPDX-License-Identifier: GPL-2.0
/* Available memory sampled every sample interval, so that a dip between two
 * scrapes still shows in the window's minimum: by a timer in the kernel
 * (memavail_sampler.h) where its computation agrees with MemAvailable, else
 * by reading /proc/meminfo. /proc/meminfo is read at every window's end for
 * the gauges either way. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "clock.h"
#include "collector.h"
#include "config.h"
#include "fileio.h"
#include "memavail_sampler.h"
#include "meminfo.h"

#define TREND_POINTS 4096
/* Windows without a sample from the timer before the daemon samples itself. */
#define SAMPLER_STALL_WINDOWS 2

enum sampler_choice { SAMPLER_AUTO, SAMPLER_BPF, SAMPLER_PROCFS };

struct meminfo_config {
	char path[256];
	uint64_t horizon_msec;
	enum sampler_choice sampler;
	double sampler_tolerance;
};

struct trend_point {
	uint64_t t_usec;
	double available;
};

struct meminfo_state {
	struct procfile file;
	/* The window's end read, shared with other collectors (memavail);
	 * NULL: s->file is read. */
	struct vmstat_sources *sources;
	struct vmstat_source *end_source;
	char path[256];
	struct meminfo last;
	bool have_last;
	uint64_t window_min, window_max, window_last;
	uint64_t window_samples;
	uint64_t read_errors;
	uint64_t horizon_usec;
	struct trend_point trend[TREND_POINTS]; /* ring of recent samples for the exhaustion estimate */
	size_t trend_head, trend_count;

	struct memavail_sampler *sampler; /* NULL: the daemon samples /proc/meminfo itself */
	const uint64_t *sample_msec;
	uint64_t sampler_interval_msec;
	unsigned sampler_idle_windows;
	bool sampler_moved; /* its cpu-clock event moved off a silent CPU, no sample since */
	double sampler_seconds_before; /* of timers given up, so the counter never goes back */
	enum sampler_choice cfg_sampler;
	double cfg_sampler_tolerance;
	/* Whether the window may go on: the sampler measures movement from the last read. */
	bool marked;
	uint64_t quiet_limit_pages;
	uint64_t samples_seen;
	long page_size;
};

static const struct config_choice sampler_choices[] = {
	{ "auto", SAMPLER_AUTO },
	{ "bpf", SAMPLER_BPF },
	{ "procfs", SAMPLER_PROCFS },
	{ NULL, 0 },
};

_Static_assert(sizeof(enum sampler_choice) == sizeof(int), "a CONFIG_KEY_CHOICE field is an int");

static const struct collector_key meminfo_keys[] = {
	{ CONFIG_KEY_DURATION("exhaustion_horizon", struct meminfo_config, horizon_msec, 1000, 3600000), "60s" },
	{ CONFIG_KEY_PATH("path", struct meminfo_config, path), "/proc/meminfo" },
	{ CONFIG_KEY_CHOICE("sampler", struct meminfo_config, sampler, sampler_choices), "auto" },
	{ CONFIG_KEY_PERCENT("sampler_tolerance", struct meminfo_config, sampler_tolerance), "2%" },
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

static void add_available(struct meminfo_state *s, uint64_t t_usec, uint64_t available)
{
	trend_add(s, t_usec, (double)available);
	if (available < s->window_min)
		s->window_min = available;
	if (available > s->window_max)
		s->window_max = available;
	s->window_last = available;
	s->window_samples++;
}

static void add_kernel_sample(void *userdata, uint64_t t_usec, double bytes)
{
	add_available(userdata, t_usec, (uint64_t)bytes);
}

static void take_reading(struct meminfo_state *s, const struct meminfo *m, uint64_t now_usec)
{
	s->last = *m;
	s->have_last = true;
	if (m->present & MEMINFO_HAS_AVAILABLE)
		add_available(s, now_usec ? now_usec : now_mono_usec(), m->available);
	else
		s->window_samples++;
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
	take_reading(s, &m, now_usec);
	return 0;
}

static bool meminfo_wants_samples(void *priv)
{
	return !((struct meminfo_state *)priv)->sampler;
}

static void sampler_stop(struct meminfo_state *s)
{
	if (!s->sampler)
		return;
	s->sampler_seconds_before += (double)memavail_sampler_callback_ns(s->sampler) / 1e9;
	memavail_sampler_free(s->sampler);
	s->sampler = NULL;
	s->marked = false;
}

/* Starts the kernel's sampling: auto falls back to /proc/meminfo and says why. */
static int sampler_start(struct meminfo_state *s, const struct meminfo_config *c, const struct collector_context *ctx,
			 struct collector_status *st)
{
	char why[200] = "";
	int r;

	s->sample_msec = ctx->sample_msec;
	/* The kernel computes the machine's figure: another path is a test's file. */
	if (c->sampler == SAMPLER_PROCFS || !ctx->sample_msec ||
	    (c->sampler == SAMPLER_AUTO && strcmp(c->path, "/proc/meminfo") != 0))
		return 0;
	s->sampler_interval_msec = *ctx->sample_msec;
	r = memavail_sampler_start(&s->sampler, ctx->shared_maps, s->sampler_interval_msec, c->sampler_tolerance,
				   &s->file, why, sizeof(why));
	if (r == 0) {
		const char *refused, *method;
		int cpu;

		method = memavail_sampler_method(s->sampler, &refused, &cpu);
		snprintf(st->mode, sizeof(st->mode), "%s", method);
		if (refused)
			log_info("Collector meminfo: the in-kernel sampler runs from a bpf_timer, refused %s", refused);
		else
			log_info("Collector meminfo: the in-kernel sampler runs from a cpu-clock perf event on CPU %d", cpu);
		return 0;
	}
	if (c->sampler == SAMPLER_BPF) {
		collector_status_set_reason(st, "sampler = bpf: %s", why);
		return r == -EOPNOTSUPP ? r : -EOPNOTSUPP;
	}
	log_info("Collector meminfo: sampling /proc/meminfo from user space: %s", why);
	return 0;
}

/* The sampler's samples since the last window; where it stopped sampling, the
 * daemon takes over (the log says so). */
static void sampler_drain(struct meminfo_state *s)
{
	if (!s->sampler)
		return;
	if (s->sample_msec && *s->sample_msec != s->sampler_interval_msec) {
		s->sampler_interval_msec = *s->sample_msec;
		memavail_sampler_set_interval(s->sampler, s->sampler_interval_msec);
	}
	if (memavail_sampler_drain(s->sampler, add_kernel_sample, s) > 0) {
		s->sampler_idle_windows = 0;
		s->sampler_moved = false;
		return;
	}
	if (++s->sampler_idle_windows < SAMPLER_STALL_WINDOWS)
		return;
	/* A CPU taken offline stops its perf events for good: move once, and
	 * again only after samples came from the new CPU. */
	if (!s->sampler_moved) {
		int from = -1, to = -1, r = memavail_sampler_move_clock(s->sampler, s->sampler_interval_msec, &from, &to);

		s->sampler_moved = true;
		if (r == 0) {
			log_warning("Collector meminfo: the in-kernel sampler took no sample in %u windows on CPU %d "
				    "(taken offline?): its cpu-clock event now runs on CPU %d",
				    s->sampler_idle_windows, from, to);
			s->sampler_idle_windows = 0;
			return;
		}
		if (r != -EOPNOTSUPP)
			log_warning("Collector meminfo: cannot move the in-kernel sampler's cpu-clock event off CPU %d: %s",
				    from, strerror(-r));
	}
	log_warning("Collector meminfo: the in-kernel sampler took no sample in %u windows (last error %d); "
		    "sampling /proc/meminfo from user space",
		    s->sampler_idle_windows, memavail_sampler_last_error(s->sampler));
	sampler_stop(s);
}

static int meminfo_start(void *priv, const void *cfg, const struct collector_context *ctx,
			 struct collector_status *st)
{
	const struct meminfo_config *c = cfg;
	struct meminfo_state *s = priv;
	int r;

	snprintf(st->mode, sizeof(st->mode), "procfs");
	snprintf(s->path, sizeof(s->path), "%s", c->path);
	s->page_size = sysconf(_SC_PAGESIZE);
	s->horizon_usec = c->horizon_msec * USEC_PER_MSEC;
	s->cfg_sampler = c->sampler;
	s->cfg_sampler_tolerance = c->sampler_tolerance;
	/* meminfo_proc_show: one seq_file record. */
	r = procfile_open_whole(&s->file, c->path, 1 << 20);
	if (r < 0) {
		collector_status_set_reason(st, "cannot open %s: %s", c->path, strerror(-r));
		return r == -ENOENT ? -EOPNOTSUPP : r;
	}
	window_reset(s);
	r = meminfo_sample(s, 0);
	if (r < 0)
		return r;
	/* Unopened: the window's end reads s->file. */
	s->sources = ctx->vmstat;
	(void)meminfo_source_open(s->sources, c->path, &s->end_source);
	return sampler_start(s, c, ctx, st);
}

/* Memory that moved by more than this since the last read ends the window
 * at its length: a thousandth of the machine, and at least a MiB. */
static uint64_t quiet_limit_pages(const struct meminfo *m, long page_size)
{
	uint64_t pages = m->total / (uint64_t)page_size / 1024, floor = (1u << 20) / (uint64_t)page_size;

	return pages > floor ? pages : floor;
}

static void mark_reading(struct meminfo_state *s, const struct meminfo *m)
{
	const unsigned needed = MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE | MEMINFO_HAS_ACTIVE_FILE |
				MEMINFO_HAS_INACTIVE_FILE | MEMINFO_HAS_DIRTY;
	const uint64_t page = (uint64_t)s->page_size;

	if (!s->sampler || (m->present & needed) != needed) {
		s->marked = false;
		return;
	}
	memavail_sampler_note_memtotal(s->sampler, m->total);
	memavail_sampler_mark(s->sampler, m->free / page, (m->active_file + m->inactive_file) / page, m->dirty / page);
	s->quiet_limit_pages = quiet_limit_pages(m, s->page_size);
	s->marked = true;
}

/* Quiet: the timer sampled since the last call, and free, file and dirty
 * pages stayed within the limit of the last read at every sample (and
 * available memory of the first sample since). */
static bool meminfo_quiet(void *priv)
{
	struct meminfo_state *s = priv;
	uint64_t taken;

	if (!s->sampler || !s->marked)
		return false;
	taken = memavail_sampler_samples_taken(s->sampler);
	if (taken == s->samples_seen)
		return false;
	s->samples_seen = taken;
	return memavail_sampler_moved_pages(s->sampler) <= s->quiet_limit_pages;
}

static bool meminfo_watch(void *priv, bool on)
{
	struct meminfo_state *s = priv;

	if (!s->sampler || !s->marked)
		return false;
	return memavail_sampler_stir_above(s->sampler, on ? s->quiet_limit_pages : 0);
}

/* The window ends now: the timer's samples, then one last read so "last" is
 * the end value, before the gauges copy it (they were a sample behind the ETA). */
static int window_end_samples(struct meminfo_state *s)
{
	const struct meminfo *m;
	int r;

	sampler_drain(s);
	if (!s->end_source)
		return meminfo_sample(s, 0);
	r = meminfo_source_get(s->end_source, &m);
	if (r < 0) {
		s->read_errors++;
		return r;
	}
	take_reading(s, m, 0);
	mark_reading(s, m);
	return 0;
}

static int meminfo_collect(void *priv, struct snapshot *snap)
{
	struct meminfo_state *s = priv;
	const struct meminfo *m = &s->last;
	int r = window_end_samples(s);
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
	if (s->sampler || s->sampler_seconds_before > 0)
		snapshot_add(snap, METRIC(MW_MEMORY_SAMPLER_SECONDS_TOTAL), NULL,
			     s->sampler_seconds_before +
				     (s->sampler ? (double)memavail_sampler_callback_ns(s->sampler) / 1e9 : 0));
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

	if (c->sampler != s->cfg_sampler || c->sampler_tolerance != s->cfg_sampler_tolerance)
		return -EAGAIN;
	s->horizon_usec = c->horizon_msec * USEC_PER_MSEC;
	if (strcmp(c->path, s->path) == 0)
		return 0;
	/* The kernel samples the machine's figure, which another path may not be. */
	if (s->sampler)
		return -EAGAIN;
	r = procfile_open_whole(&f, c->path, 1 << 20);
	if (r < 0)
		return r;
	procfile_close(&s->file);
	s->file = f;
	vmstat_source_unref(s->end_source);
	s->end_source = NULL;
	(void)meminfo_source_open(s->sources, c->path, &s->end_source);
	snprintf(s->path, sizeof(s->path), "%s", c->path);
	return 0;
}

static void meminfo_stop(void *priv)
{
	struct meminfo_state *s = priv;

	sampler_stop(s);
	vmstat_source_unref(s->end_source);
	procfile_close(&s->file);
}

const struct collector_ops meminfo_collector = {
	.name = "meminfo",
	.summary = "available memory every sample interval (in-kernel timer, or /proc/meminfo): last, min and max per window; /proc/meminfo gauges",
	.default_enabled = true,
	.config_size = sizeof(struct meminfo_config),
	.keys = meminfo_keys,
	.n_keys = ARRAY_SIZE(meminfo_keys),
	.priv_size = sizeof(struct meminfo_state),
	.probe = meminfo_probe,
	.start = meminfo_start,
	.sample = meminfo_sample,
	.wants_samples = meminfo_wants_samples,
	.quiet = meminfo_quiet,
	.watch = meminfo_watch,
	.collect = meminfo_collect,
	.reload = meminfo_reload,
	.stop = meminfo_stop,
};
