// SPDX-License-Identifier: GPL-2.0
/* Available memory at the instant of pressure (start of direct and memcg
 * reclaim, allocation failure, OOM kill). Best first, by trying:
 *  fexit    on si_mem_available(): the kernel's own figure, recorded whenever
 *           the kernel computes it, stamped into each event; where the
 *           meminfo collector samples in the kernel (memavail_sampler.h), its
 *           computation when that is newer (the event says "counters");
 *  kprobe   the same through a kretprobe, where fexit cannot attach;
 *  counters the pressure programs compute it at the instant from the zone and
 *           node counters (bpf/memavail_counters.bpf.h), with the total reserve
 *           from /proc/zoneinfo; used only when a computation at start-up
 *           agrees with /proc/meminfo within 2% (hosts with deferred struct page
 *           init or free page reporting can disagree);
 *  procfs   /proc/meminfo read by the consumer as soon as the event arrives.
 * The figure goes into each event through a handler this collector subscribes
 * to the event channel, which also keeps the window's lowest. */
#include <linux/types.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpf_attach.h"
#include "collector.h"
#include "events.h"
#include "fileio.h"
#include "meminfo.h"
#include "parse.h"
#include "memavail.h"
#include "memavail.skel.h"
#include "zoneinfo.h"

enum method { METHOD_AUTO, METHOD_FEXIT, METHOD_KPROBE, METHOD_COUNTERS, METHOD_PROCFS };

/* How a pressure instant's available memory is known. */
enum memavail_source {
	MEMAVAIL_NONE,
	MEMAVAIL_FEXIT,   /* si_mem_available's own return, via fexit */
	MEMAVAIL_KPROBE,  /* same, via kretprobe */
	MEMAVAIL_COUNTERS, /* computed at the instant in BPF from zone and node counters */
	MEMAVAIL_PROCFS,  /* /proc/meminfo read as the event arrives */
};

#define COUNTERS_VALIDATION_TRIES 3
#define PROCFILE_MAX (256 * 1024)

struct memavail_config {
	enum method method;
	double counters_tolerance; /* a ratio: how far the counters method may be from MemAvailable at start-up */
};

struct memavail_state {
	struct collector_context ctx;
	struct memavail_bpf *skel; /* fexit or kprobe */
	struct bpf_link *link;
	enum memavail_source source;
	long page_size;

	/* The event handler, on the channel's consumer thread: its own
	 * /proc/meminfo, and the window's lowest figure under lock. */
	bool subscribed, lock_ready;
	struct procfile event_meminfo;
	pthread_mutex_t lock;
	bool window_has_min;
	double window_min;

	/* Counters method: loaded whenever it was tried, so its figure and its
	 * distance from /proc/meminfo stay visible even when it was not chosen. */
	struct bpf_attachment counters;
	bool wmark_hook;      /* kmem:mm_setup_per_zone_wmarks attached */
	char hook_why[160];   /* why not */
	uint64_t wmark_seen;  /* its count at the last look */
	bool wmark_pending;   /* changed: re-read once the count has settled for a window */
	uint64_t reserve_refreshes;
	struct zoneinfo zone;
	bool zoneinfo_boostless; /* this kernel's zoneinfo prints no boost (5.10) */
	struct procfile zoneinfo_file, meminfo_file;
	struct vmstat_source *end_meminfo; /* NULL: meminfo_file is read */
};

DEFINE_BPF_SKEL_OPS(memavail_bpf);

static const struct bpf_hook wmark_hooks[] = {
	{ "kmem", "mm_setup_per_zone_wmarks", BPF_HOOK_PROGS(memavail_bpf, wmarks_setup), true },
};

static const char *source_name(enum memavail_source s)
{
	switch (s) {
	case MEMAVAIL_FEXIT:
		return "fexit";
	case MEMAVAIL_KPROBE:
		return "kprobe";
	case MEMAVAIL_COUNTERS:
		return "counters";
	case MEMAVAIL_PROCFS:
		return "procfs";
	case MEMAVAIL_NONE:
	default:
		return "none";
	}
}

static const struct config_choice method_choices[] = {
	{ "auto", METHOD_AUTO },
	{ "fexit", METHOD_FEXIT },
	{ "kprobe", METHOD_KPROBE },
	{ "counters", METHOD_COUNTERS },
	{ "procfs", METHOD_PROCFS },
	{ NULL, 0 },
};

_Static_assert(sizeof(enum method) == sizeof(int), "a CONFIG_KEY_CHOICE field is an int");

static const struct collector_key memavail_keys[] = {
	{ CONFIG_KEY_PERCENT("counters_tolerance", struct memavail_config, counters_tolerance), "2%" },
	{ CONFIG_KEY_CHOICE("method", struct memavail_config, method, method_choices), "auto" },
};

static int try_program(struct memavail_state *s, bool fexit)
{
	struct bpf_program *prog;
	int r;

	s->skel = memavail_bpf__open();
	if (!s->skel)
		return -errno;
	prog = fexit ? s->skel->progs.si_mem_available_exit : s->skel->progs.si_mem_available_ret;
	bpf_program__set_autoload(prog, true);
	r = bpf_shared_map_reuse(s->ctx.shared_maps, s->skel->maps.memavail);
	if (r == 0)
		r = memavail_bpf__load(s->skel);
	if (r == 0) {
		s->link = bpf_program__attach(prog);
		if (!s->link)
			r = -errno;
	}
	if (r < 0) {
		memavail_bpf__destroy(s->skel);
		s->skel = NULL;
	}
	return r;
}


/* vm.min_free_kbytes in pages, 0 when unreadable: the boost of zones on
 * kernels whose zoneinfo does not print it (lib/zoneinfo.h). */
static uint64_t min_free_pages(void)
{
	_cleanup_free_ char *text = NULL;
	const char *p, *end;
	uint64_t kib;
	size_t len;

	if (read_full_file("/proc/sys/vm/min_free_kbytes", 64, &text, &len) < 0)
		return 0;
	p = text;
	end = text + len;
	if (parse_u64_prefix(&p, end, &kib) < 0)
		return 0;
	return kib / ((uint64_t)sysconf(_SC_PAGESIZE) / 1024);
}

static int read_zoneinfo(struct memavail_state *s, struct zoneinfo *z)
{
	const char *data;
	size_t len;
	int r;

	r = procfile_read(&s->zoneinfo_file, &data, &len);
	if (r < 0)
		return r;
	/* vm.min_free_kbytes is read only where zoneinfo has no boost line. */
	r = zoneinfo_parse_boosted(data, len, s->zoneinfo_boostless ? min_free_pages() : 0, z);
	if (r < 0 || z->prints_boost || s->zoneinfo_boostless)
		return r;
	s->zoneinfo_boostless = true;
	return zoneinfo_parse_boosted(data, len, min_free_pages(), z);
}

/* What the pressure programs read: whether to compute, and the reserve. */
static int counters_write_params(struct memavail_state *s, bool compute)
{
	struct memavail_latest m = {
		.compute = compute,
		.totalreserve_pages = s->zone.totalreserve_pages,
		.wmark_low_pages = s->zone.wmark_low_pages,
	};
	struct memavail_bpf *skel = s->counters.skel;
	__u32 zero = 0;

	/* The map every pressure program reads (bpf_shared_map_reuse). */
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.memavail), &zero, &m, BPF_ANY) < 0)
		return -errno;
	return 0;
}

static const char *calc_error_name(int e)
{
	switch (e) {
	case MEMAVAIL_CALC_NO_NODE:
		return "no node reachable through the task's memory cgroup";
	case MEMAVAIL_CALC_TOO_MANY:
		return "more nodes or zones than the program walks";
	case MEMAVAIL_CALC_NO_LAYOUT:
		return "the kernel lacks a field or counter it reads";
	default:
		return "unknown";
	}
}

/* Runs the computation once, now, in the kernel (BPF_PROG_TEST_RUN). */
static int counters_compute(struct memavail_state *s, struct memavail_calc *c)
{
	struct memavail_bpf *skel = s->counters.skel;
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.memavail_compute_now), &opts) < 0)
		return -errno;
	*c = skel->bss->calc_now;
	return c->error ? -ENODATA : 0;
}

static int counters_configure(void *skel_any, void *userdata)
{
	struct memavail_bpf *skel = skel_any;
	const struct memavail_state *s = userdata;

	bpf_program__set_autoload(skel->progs.memavail_compute_now, true);
	return bpf_shared_map_reuse(s->ctx.shared_maps, skel->maps.memavail);
}

/* Loads the computation, and the watermark hook where the kernel has it.
 * Without the hook the reserve is re-read every window instead. */
static int counters_load(struct memavail_state *s, char *why, size_t whylen)
{
	struct collector_status hook_st = { 0 };
	int r;

	r = bpf_attach_hooks(&s->counters, &memavail_bpf_skel_ops, wmark_hooks, ARRAY_SIZE(wmark_hooks), -1,
			     counters_configure, s, &hook_st);
	if (r == 0) {
		s->wmark_hook = true;
		return 0;
	}
	snprintf(s->hook_why, sizeof(s->hook_why), "%.150s", hook_st.reason[0] ? hook_st.reason : strerror(-r));
	log_debug("memavail: no watermark hook (%s): /proc/zoneinfo is re-read every window", s->hook_why);
	s->counters = (struct bpf_attachment){ .ops = &memavail_bpf_skel_ops };
	s->counters.skel = memavail_bpf__open();
	if (!s->counters.skel) {
		r = -errno;
		snprintf(why, whylen, "cannot open the BPF object: %s", strerror(-r));
		return r;
	}
	r = counters_configure(s->counters.skel, s);
	if (r == 0)
		r = memavail_bpf__load(s->counters.skel);
	if (r < 0) {
		snprintf(why, whylen, "the counters program did not load: %s", strerror(-r));
		bpf_attachment_destroy(&s->counters);
	}
	return r;
}

/* Start-up check: the computation against /proc/meminfo, read right before
 * and right after it; the closest of a few tries, as memory moves meanwhile.
 * Returns 0 when within tolerance (a ratio); otherwise why is filled in. */
static int counters_validate(struct memavail_state *s, double tolerance, char *why, size_t whylen)
{
	double best = INFINITY, best_calc = 0, best_meminfo = 0;
	struct memavail_calc c = { 0 };
	int r = 0, i;

	for (i = 0; i < COUNTERS_VALIDATION_TRIES; i++) {
		double before = 0, after = 0, meminfo, computed, error;

		r = meminfo_read_available(&s->meminfo_file, &before);
		if (r == 0)
			r = counters_compute(s, &c);
		if (r == 0)
			r = meminfo_read_available(&s->meminfo_file, &after);
		if (r < 0)
			break;
		meminfo = (before + after) / 2;
		computed = (double)c.available_pages * (double)s->page_size;
		error = meminfo > 0 ? fabs(computed - meminfo) / meminfo : INFINITY;
		if (error < best)
			best = error, best_calc = computed, best_meminfo = meminfo;
	}
	if (r == -ENODATA && c.error) {
		snprintf(why, whylen, "cannot compute from the counters: %s", calc_error_name(c.error));
		return -EOPNOTSUPP;
	}
	if (r < 0) {
		snprintf(why, whylen, "cannot compute from the counters: %s", strerror(-r));
		return r;
	}
	if (c.kernel_reserve_pages && c.kernel_reserve_pages != s->zone.totalreserve_pages)
		log_info("memavail: total reserve from /proc/zoneinfo %llu pages, the nodes' own %llu",
			 (unsigned long long)s->zone.totalreserve_pages, (unsigned long long)c.kernel_reserve_pages);
	log_info("memavail: counters method: %.1f MiB computed, %.1f MiB in /proc/meminfo (%.3g%% apart; "
		 "%u nodes, %u zones)", best_calc / 1048576, best_meminfo / 1048576, best * 100, c.nodes, c.zones);
	if (best > tolerance) {
		snprintf(why, whylen,
			 "computed from zone and node counters %.0f MiB, /proc/meminfo MemAvailable %.0f MiB: "
			 "%.3g%% apart (over %g%%)",
			 best_calc / 1048576, best_meminfo / 1048576, best * 100, tolerance * 100);
		return -ERANGE;
	}
	return 0;
}

/* Returns 0 when the counters method is in force; otherwise why says why not. */
static int counters_start(struct memavail_state *s, double tolerance, char *why, size_t whylen)
{
	int r;

	r = procfile_open(&s->zoneinfo_file, "/proc/zoneinfo", PROCFILE_MAX);
	if (r == 0)
		r = procfile_open_whole(&s->meminfo_file, "/proc/meminfo", PROCFILE_MAX);
	if (r == 0)
		r = read_zoneinfo(s, &s->zone);
	if (r == 0 && !s->end_meminfo)
		(void)meminfo_source_open(s->ctx.vmstat, "/proc/meminfo", &s->end_meminfo);
	if (r < 0) {
		snprintf(why, whylen, "cannot read /proc/zoneinfo or /proc/meminfo: %s", strerror(-r));
		return r;
	}
	r = counters_load(s, why, whylen);
	if (r < 0)
		return r;
	if (s->wmark_hook)
		s->wmark_seen = s->counters.skel ? ((struct memavail_bpf *)s->counters.skel)->bss->wmark_setups : 0;
	r = counters_write_params(s, false);
	if (r < 0) {
		snprintf(why, whylen, "cannot write the shared memavail map: %s", strerror(-r));
		return r;
	}
	r = counters_validate(s, tolerance, why, whylen);
	if (r < 0)
		return r;
	r = counters_write_params(s, true);
	if (r < 0)
		snprintf(why, whylen, "cannot write the shared memavail map: %s", strerror(-r));
	return r;
}

/* The reserve changes when the kernel sets up its watermarks again; the
 * tracepoint fires per zone before the reserve is recomputed, so re-read
 * once the count has not moved for a window. */
static void counters_refresh_reserve(struct memavail_state *s)
{
	struct zoneinfo z;

	if (s->wmark_hook) {
		uint64_t now = ((struct memavail_bpf *)s->counters.skel)->bss->wmark_setups;

		if (now != s->wmark_seen) {
			s->wmark_seen = now;
			s->wmark_pending = true;
			return;
		}
		if (!s->wmark_pending)
			return;
	}
	if (read_zoneinfo(s, &z) < 0)
		return; /* keep the last good one */
	if (s->wmark_pending)
		s->reserve_refreshes++;
	s->wmark_pending = false;
	if (z.totalreserve_pages == s->zone.totalreserve_pages && z.wmark_low_pages == s->zone.wmark_low_pages)
		return;
	s->zone = z;
	counters_write_params(s, s->source == MEMAVAIL_COUNTERS);
}

/* MemAvailable at the window's end: the read the meminfo collector makes
 * anyway, where there is one. */
static int window_end_available(struct memavail_state *s, double *bytes)
{
	const struct meminfo *m;

	if (!s->end_meminfo)
		return meminfo_read_available(&s->meminfo_file, bytes);
	if (meminfo_source_get(s->end_meminfo, &m) < 0 || !(m->present & MEMINFO_HAS_AVAILABLE))
		return -ENODATA;
	*bytes = (double)m->available;
	return 0;
}

static void counters_collect(struct memavail_state *s, struct snapshot *snap)
{
	struct memavail_calc c = { 0 };
	double meminfo, computed;

	counters_refresh_reserve(s);
	snapshot_add(snap, METRIC(MW_MEMAVAIL_TOTAL_RESERVE_BYTES), NULL, (double)s->zone.totalreserve_pages * (double)s->page_size);
	if (s->wmark_hook)
		snapshot_add(snap, METRIC(MW_MEMAVAIL_RESERVE_REFRESHES_TOTAL), NULL, (double)s->reserve_refreshes);
	if (counters_compute(s, &c) < 0)
		return;
	computed = (double)c.available_pages * (double)s->page_size;
	snapshot_add(snap, METRIC(MW_MEMORY_AVAILABLE_COMPUTED_BYTES), NULL, computed);
	if (window_end_available(s, &meminfo) == 0 && meminfo > 0)
		snapshot_add(snap, METRIC(MW_MEMAVAIL_COUNTERS_ERROR_RATIO), NULL, fabs(computed - meminfo) / meminfo);
}

/* On the event channel's consumer thread, for every pressure instant and OOM
 * kill: the kernel's own figure, if it was computed close to the event; or the
 * one computed at the event. Without either (counters that could not be read
 * this time), /proc/meminfo now is the next best. */
static void on_event(void *userdata, const struct memwatch_event *e, struct event_record *rec)
{
	struct memavail_state *s = userdata;
	double bytes;

	/* The in-kernel sampler, on another CPU, can stamp its figure just after
	 * the event took its time: as fresh, so taken too. */
	if (s->source != MEMAVAIL_PROCFS && e->avail_ts_ns &&
	    (e->ts_ns >= e->avail_ts_ns ? e->ts_ns - e->avail_ts_ns : e->avail_ts_ns - e->ts_ns) <= 2 * NSEC_PER_SEC) {
		rec->avail_bytes = (double)e->avail_pages * (double)s->page_size;
		rec->avail_source = source_name(e->flags & EVENT_AVAIL_SAMPLED ? MEMAVAIL_COUNTERS : s->source);
	} else if (s->event_meminfo.fd >= 0 && meminfo_read_available(&s->event_meminfo, &bytes) == 0) {
		rec->avail_bytes = bytes;
		rec->avail_source = source_name(MEMAVAIL_PROCFS);
	} else {
		return;
	}
	if (rec->kind == EVENT_OOM_KILL)
		return;
	pthread_mutex_lock(&s->lock);
	if (!s->window_has_min || rec->avail_bytes < s->window_min) {
		s->window_min = rec->avail_bytes;
		s->window_has_min = true;
	}
	pthread_mutex_unlock(&s->lock);
}

static int memavail_start(void *priv, const void *cfg, const struct collector_context *ctx,
			  struct collector_status *st)
{
	const struct memavail_config *config = cfg;
	enum method method = config->method;
	struct memavail_state *s = priv;
	int r, r_fexit = -EOPNOTSUPP, r_kprobe = -EOPNOTSUPP, r_counters = -EOPNOTSUPP;
	char counters_why[200] = "";

	s->ctx = *ctx;
	s->page_size = sysconf(_SC_PAGESIZE);
	s->zoneinfo_file.fd = s->meminfo_file.fd = s->event_meminfo.fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	s->lock_ready = true;
	log_set_libbpf_quiet(true);
	if (method == METHOD_AUTO || method == METHOD_FEXIT)
		r_fexit = try_program(s, true);
	if (!s->skel && (method == METHOD_AUTO || method == METHOD_KPROBE))
		r_kprobe = try_program(s, false);
	log_set_libbpf_quiet(false);
	/* libbpf was quiet: without these lines a fallback would not say why. */
	if (method == METHOD_AUTO && r_fexit < 0)
		log_info("memavail: fexit on si_mem_available: %s%s", strerror(-r_fexit),
			 s->skel ? ": taking the kretprobe" : "");
	if (method == METHOD_AUTO && !s->skel)
		log_info("memavail: kretprobe on si_mem_available: %s", strerror(-r_kprobe));

	if (s->skel) {
		s->source = r_fexit == 0 ? MEMAVAIL_FEXIT : MEMAVAIL_KPROBE;
	} else if (method == METHOD_FEXIT || method == METHOD_KPROBE) {
		collector_status_set_reason(st, "method = %s: cannot attach to si_mem_available (%s)",
					    method == METHOD_FEXIT ? "fexit" : "kprobe",
					    strerror(-(method == METHOD_FEXIT ? r_fexit : r_kprobe)));
		return -EOPNOTSUPP;
	} else if (method != METHOD_PROCFS &&
		   (r_counters = counters_start(s, config->counters_tolerance, counters_why, sizeof(counters_why))) == 0) {
		s->source = MEMAVAIL_COUNTERS;
		if (!s->wmark_hook) {
			st->state = COLLECTOR_DEGRADED;
			collector_status_set_reason(st, "kmem:mm_setup_per_zone_wmarks: %.150s: "
						    "/proc/zoneinfo is re-read every window", s->hook_why);
		}
	} else {
		s->source = MEMAVAIL_PROCFS;
		if (method == METHOD_AUTO) {
			st->state = COLLECTOR_DEGRADED;
			collector_status_set_reason(st,
						    "fexit (%s) and kretprobe (%s) on si_mem_available unavailable, "
						    "%s: reading /proc/meminfo as each event arrives",
						    strerror(-r_fexit), strerror(-r_kprobe), counters_why);
		} else if (method == METHOD_COUNTERS) {
			st->state = COLLECTOR_DEGRADED;
			collector_status_set_reason(st, "method = counters: %s: reading /proc/meminfo as each event arrives",
						    counters_why);
		}
	}
	if (st->state == COLLECTOR_DEGRADED) {
		collector_status_note_bpf_error(st, r_fexit);
		collector_status_note_bpf_error(st, r_kprobe);
		collector_status_note_bpf_error(st, r_counters);
	}
	snprintf(st->mode, sizeof(st->mode), "%s", source_name(s->source));
	/* Without it, events that carry no figure go without one. */
	(void)procfile_open_whole(&s->event_meminfo, "/proc/meminfo", PROCFILE_MAX);
	r = event_channel_subscribe(s->ctx.events, EVENT_KINDS_ALL, on_event, s);
	if (r < 0)
		return r;
	s->subscribed = true;
	return 0;
}

static int memavail_collect(void *priv, struct snapshot *snap)
{
	struct memavail_state *s = priv;
	bool has_min;
	double min;

	pthread_mutex_lock(&s->lock);
	has_min = s->window_has_min;
	min = s->window_min;
	s->window_has_min = false;
	pthread_mutex_unlock(&s->lock);
	if (has_min)
		snapshot_add(snap, METRIC(MW_MEMORY_AVAILABLE_AT_PRESSURE_BYTES), NULL, min);
	if (s->skel) {
		struct memavail_latest latest;
		__u32 zero = 0;

		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.memavail), &zero, &latest) == 0 && latest.ts_ns)
			snapshot_add(snap, METRIC(MW_MEMORY_AVAILABLE_KERNEL_BYTES), NULL, (double)latest.pages * (double)s->page_size);
	}
	if (s->counters.skel)
		counters_collect(s, snap);
	return 0;
}

static void memavail_stop(void *priv)
{
	struct memavail_state *s = priv;

	if (s->subscribed)
		event_channel_unsubscribe(s->ctx.events, on_event, s);
	/* The shared map outlives us: stop the other programs computing for nobody. */
	if (s->counters.skel && s->source == MEMAVAIL_COUNTERS)
		(void)counters_write_params(s, false);
	bpf_link__destroy(s->link);
	memavail_bpf__destroy(s->skel);
	bpf_attachment_destroy(&s->counters);
	procfile_close(&s->zoneinfo_file);
	procfile_close(&s->meminfo_file);
	vmstat_source_unref(s->end_meminfo);
	procfile_close(&s->event_meminfo);
	if (s->lock_ready)
		pthread_mutex_destroy(&s->lock);
}

const struct collector_ops memavail_collector = {
	.name = "memavail",
	.summary = "available memory at pressure instants (fexit/kretprobe on si_mem_available, zone counters, or /proc/meminfo)",
	.default_enabled = true,
	.config_size = sizeof(struct memavail_config),
	.keys = memavail_keys,
	.n_keys = ARRAY_SIZE(memavail_keys),
	.priv_size = sizeof(struct memavail_state),
	.start = memavail_start,
	.collect = memavail_collect,
	.stop = memavail_stop,
	/* The memavail map is shared: one instance at a time. */
	.restart_stop_first = true,
};
