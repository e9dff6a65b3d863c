// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "bpf_attach.h"
#include "carry.h"
#include "cgroup_hierarchy.h"
#include "cgroup_names.h"
#include "clock.h"
#include "core.h"
#include "log.h"
#include "stir.h"
#include "vmstat_source.h"

#define BACKOFF_MAX_WINDOWS 64u
/* The daemon's own series come on top of max_series, so the cap never cuts
 * the series that say it is cutting. Per collector: up, info, duration,
 * errors, series dropped; then build info, times, reloads and the event
 * channel's counters (2 + 3 per event kind), with room to spare. */
#define HEALTH_SERIES_BUDGET (64 + 8 * n_all_collectors)

int core_init(struct core *core, struct config *config, struct collector_settings *settings)
{
	size_t i;

	*core = (struct core){ .config = config, .sample_msec = config->daemon.sample_msec };
	core->collectors = calloc(n_all_collectors, sizeof(*core->collectors));
	if (!core->collectors) {
		collector_settings_free(settings);
		return -ENOMEM;
	}
	for (i = 0; i < n_all_collectors; i++) {
		core->collectors[i].ops = all_collectors[i];
		core->collectors[i].settings = settings[i];
		settings[i].cfg = NULL;
	}
	free(settings);
	core->ring = snapshot_ring_new(config->daemon.history);
	if (!core->ring || vmstat_sources_new(&core->vmstat) < 0)
		return -ENOMEM;
	/* Without it every window sets up its own compressor, and renders formats
	 * other than the text on request only: slower, still correct. */
	core->renderer = snapshot_renderer_new();
	/* Without it no cgroup paths and no auto roots: the collectors that need
	 * them degrade, the rest run. */
	(void)cgroup_hierarchy_new("/proc/self/mountinfo", cgroup_v2_has_memory, &core->cgroups);
	(void)cgroup_names_new(&core->names);
	core->start_real_usec = now_real_usec();
	core->window_start_mono_usec = now_mono_usec();
	core->window_start_real_usec = core->start_real_usec;
	return 0;
}

static struct event_settings event_settings_from(const struct daemon_config *d)
{
	return (struct event_settings){
		.gate_msec = d->event_gate_msec,
		.history = d->event_history,
		.buffer_bytes = d->event_buffer_bytes,
		.paused = d->debug_pause_events,
		.perf_buffer = d->debug_perf_buffer,
	};
}

void core_open_events(struct core *core)
{
	struct event_settings es = event_settings_from(&core->config->daemon);

	if (!core->events)
		(void)event_channel_new(&es, core->cgroups, &core->events); /* logs why not */
	if (!core->events || core->journal || event_journal_new(core->config->events.journal, &core->journal) < 0)
		return;
	/* Before the consumer starts: the kills of earlier runs go ahead of
	 * every live event, and none of this run's is read back as old. */
	(void)event_journal_restore(core->journal, core->events, core->config->daemon.event_history);
	event_channel_set_sink(core->events, event_journal_sink, core->journal);
}

int core_start_events(struct core *core)
{
	return event_channel_start(core->events);
}

static struct collector_context collector_context(struct core *core)
{
	return (struct collector_context){
		.events = core->events, .shared_maps = &core->shared_maps, .cgroups = core->cgroups,
		.names = core->names, .vmstat = core->vmstat, .sample_msec = &core->sample_msec,
		.window_lengths = &core->window_lengths,
	};
}

static void instance_stop(const struct collector_ops *ops, void *priv)
{
	if (!priv)
		return;
	if (ops->stop)
		ops->stop(priv);
	free(priv);
}

static void collector_stop(struct collector_instance *ci)
{
	if (ci->status.running)
		instance_stop(ci->ops, ci->priv);
	else
		free(ci->priv);
	ci->priv = NULL;
	ci->status.running = false;
}

/* Probes and starts one instance of ops: the private state (NULL unless it
 * runs) and start's result. Touches no collector_instance, so that a new
 * instance can start while the old one still runs. */
static int instance_start(const struct collector_ops *ops, const void *cfg, const struct collector_context *ctx,
			  struct collector_status *st, void **ret_priv)
{
	void *priv;
	int r;

	*ret_priv = NULL;
	*st = (struct collector_status){ .state = COLLECTOR_ACTIVE };
	r = ops->probe ? ops->probe(cfg, ctx, st) : 0;
	if (r < 0)
		return r;
	priv = calloc(1, ops->priv_size ? ops->priv_size : 1);
	if (!priv)
		return -ENOMEM;
	{
		/* Start may only refine what probe said. */
		enum collector_state probed = st->state;

		r = ops->start(priv, cfg, ctx, st);
		if (r == 0 && probed == COLLECTOR_DEGRADED)
			st->state = COLLECTOR_DEGRADED;
	}
	if (r < 0) {
		instance_stop(ops, priv);
		return r;
	}
	*ret_priv = priv;
	return 0;
}

/* Takes over an instance's start result: state, logs. */
static void collector_started(struct collector_instance *ci, int r, void *priv, const struct collector_status *st)
{
	ci->status = *st;
	ci->priv = priv;
	ci->consecutive_failures = 0;
	ci->skip_windows = 0;
	if (r == -EOPNOTSUPP || r == -ENOENT) {
		ci->status.state = COLLECTOR_DEGRADED;
		ci->status.running = false;
		log_warning("Collector %s is degraded and not running: %s", ci->ops->name, ci->status.reason);
		return;
	}
	if (r < 0) {
		ci->status.state = COLLECTOR_FAILED;
		ci->status.running = false;
		if (!ci->status.reason[0])
			collector_status_set_reason(&ci->status, "%s", strerror(-r));
		log_error("Collector %s failed to start: %s", ci->ops->name, ci->status.reason);
		return;
	}
	ci->status.running = true;
	if (ci->status.state == COLLECTOR_DEGRADED)
		log_warning("Collector %s started (%s), degraded: %s", ci->ops->name, ci->status.mode,
			    ci->status.reason);
	else
		log_info("Collector %s started (%s)", ci->ops->name, ci->status.mode);
}

static void collector_start(struct core *core, struct collector_instance *ci)
{
	struct collector_status st = { .state = COLLECTOR_DISABLED };
	struct collector_context ctx = collector_context(core);
	void *priv = NULL;
	int r;

	collector_stop(ci);
	if (!ci->settings.enabled) {
		/* Switched off: its series end here, and start from zero when it is back. */
		carry_free(ci->carry);
		ci->carry = NULL;
		ci->status = st;
		ci->consecutive_failures = 0;
		ci->skip_windows = 0;
		return;
	}
	r = instance_start(ci->ops, ci->settings.cfg, &ctx, &st, &priv);
	collector_started(ci, r, priv, &st);
	ci->counting_since_real_usec = now_real_usec();
}

void core_start_collectors(struct core *core)
{
	size_t i;

	if (!core->stir)
		core->stir = stir_new(&core->shared_maps);
	for (i = 0; i < n_all_collectors; i++)
		collector_start(core, &core->collectors[i]);
	bpf_attach_release_caches();
}

void core_stop_collectors(struct core *core)
{
	size_t i;

	for (i = 0; i < n_all_collectors; i++)
		collector_stop(&core->collectors[i]);
}

void core_done(struct core *core)
{
	size_t i;

	if (core->collectors) {
		core_stop_collectors(core);
		for (i = 0; i < n_all_collectors; i++) {
			free(core->collectors[i].settings.cfg);
			carry_free(core->collectors[i].carry);
		}
		free(core->collectors);
	}
	/* After the collectors: they are its sources and subscribers. */
	event_channel_free(core->events);
	/* After the channel: its consumer calls the sink to the end. */
	event_journal_free(core->journal);
	/* After the channel and the collectors: each holds tables in it. */
	cgroup_hierarchy_free(core->cgroups);
	cgroup_names_free(core->names);
	vmstat_sources_free(core->vmstat);
	stir_free(core->stir);
	bpf_shared_maps_close(&core->shared_maps);
	snapshot_ring_free(core->ring);
	snapshot_renderer_unref(core->renderer);
	config_free(core->config);
	*core = (struct core){ 0 };
}

static bool instance_samples(const struct collector_instance *ci)
{
	if (!ci->status.running || !ci->ops->sample || ci->skip_windows)
		return false;
	return !ci->ops->wants_samples || ci->ops->wants_samples(ci->priv);
}

bool core_wants_samples(const struct core *core)
{
	size_t i;

	for (i = 0; i < n_all_collectors; i++)
		if (instance_samples(&core->collectors[i]))
			return true;
	return false;
}

static int instance_wake_fd(const struct collector_instance *ci)
{
	if (!ci->status.running || !ci->ops->sample || !ci->ops->wake_fd)
		return -1;
	return ci->ops->wake_fd(ci->priv);
}

size_t core_wake_fds(const struct core *core, struct pollfd *fds, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < n_all_collectors && n < max; i++) {
		int fd = instance_wake_fd(&core->collectors[i]);

		if (fd >= 0)
			fds[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	return n;
}

void core_wake(struct core *core, const struct pollfd *fds, size_t n, uint64_t now_mono)
{
	size_t i, j;

	for (i = 0; i < n_all_collectors; i++) {
		struct collector_instance *ci = &core->collectors[i];
		int fd = instance_wake_fd(ci);

		for (j = 0; fd >= 0 && j < n; j++)
			if (fds[j].fd == fd && (fds[j].revents & POLLIN)) {
				(void)ci->ops->sample(ci->priv, now_mono);
				break;
			}
	}
}

void core_sample(struct core *core, uint64_t now_mono)
{
	size_t i;

	for (i = 0; i < n_all_collectors; i++) {
		struct collector_instance *ci = &core->collectors[i];
		uint64_t t0;
		int r;

		if (!instance_samples(ci))
			continue;
		t0 = now_mono_usec();
		r = ci->ops->sample(ci->priv, now_mono);
		ci->busy_usec += now_mono_usec() - t0;
		if (r < 0) {
			ci->errors_total++;
			log_debug_errno(r, "Collector %s: sample failed: %m", ci->ops->name);
		}
	}
}

/* True when the collector wrote its batch (or part of it: max_series). */
static bool collect_one(struct collector_instance *ci, struct snapshot *snap)
{
	uint64_t t0;
	int r;

	if (!ci->status.running)
		return false;
	if (ci->skip_windows) {
		ci->skip_windows--;
		return false;
	}
	t0 = now_mono_usec();
	r = ci->ops->collect(ci->priv, snap);
	ci->busy_usec += now_mono_usec() - t0;
	if (r < 0 && r != -ENOSPC) {
		unsigned backoff;

		ci->errors_total++;
		ci->consecutive_failures++;
		backoff = ci->consecutive_failures >= 7 ? BACKOFF_MAX_WINDOWS : 1u << (ci->consecutive_failures - 1);
		ci->skip_windows = backoff - 1;
		/* Log the first failure and then only each doubling, not every window. */
		if ((ci->consecutive_failures & (ci->consecutive_failures - 1)) == 0)
			log_warning_errno(r, "Collector %s: collect failed (%u in a row), retrying in %u window(s): %m",
					  ci->ops->name, ci->consecutive_failures, backoff);
		return false;
	}
	if (ci->consecutive_failures)
		log_info("Collector %s: collecting again after %u failure(s)", ci->ops->name,
			 ci->consecutive_failures);
	ci->consecutive_failures = 0;
	return true;
}

static void add_meta(struct core *core, struct snapshot *snap, uint64_t now_real)
{
	const struct daemon_config *d = &core->config->daemon;
	size_t i;

	snapshot_add(snap, METRIC(MW_BUILD_INFO), (const char *const[]){ MEMWATCHD_VERSION }, 1);
	for (i = 0; i < n_all_collectors; i++) {
		struct collector_instance *ci = &core->collectors[i];
		const char *name = ci->ops->name;
		bool up = ci->status.running && ci->consecutive_failures == 0;

		snapshot_add(snap, METRIC(MW_COLLECTOR_UP), (const char *const[]){ name }, up);
		snapshot_add(snap, METRIC(MW_COLLECTOR_INFO),
			     (const char *const[]){ name, collector_state_name(ci->status.state),
						    ci->status.mode, ci->status.reason },
			     1);
		snapshot_add(snap, METRIC(MW_SERIES_DROPPED_TOTAL), (const char *const[]){ name },
			     (double)ci->series_dropped_total);
		if (ci->status.running) {
			ci->last_duration = (double)ci->busy_usec / 1e6;
			snapshot_add(snap, METRIC(MW_COLLECTOR_DURATION_SECONDS), (const char *const[]){ name },
				     ci->last_duration);
			snapshot_add(snap, METRIC(MW_COLLECTOR_ERRORS_TOTAL), (const char *const[]){ name },
				     (double)ci->errors_total);
		}
		ci->busy_usec = 0;
	}
	snapshot_add(snap, METRIC(MW_WINDOW_SECONDS), NULL, d->window_msec / 1000.0);
	snapshot_add(snap, METRIC(MW_SAMPLE_INTERVAL_SECONDS), NULL, d->sample_msec / 1000.0);
	snapshot_add(snap, METRIC(MW_WINDOW_END_TIMESTAMP_SECONDS), NULL, (double)now_real / 1e6);
	snapshot_add(snap, METRIC(MW_START_TIME_SECONDS), NULL, (double)core->start_real_usec / 1e6);
	snapshot_add(snap, METRIC(MW_CONFIG_RELOADS_TOTAL), (const char *const[]){ "success" },
		     (double)(core->reloads_total - core->reload_failures_total));
	snapshot_add(snap, METRIC(MW_CONFIG_RELOADS_TOTAL), (const char *const[]){ "failure" }, (double)core->reload_failures_total);
	snapshot_add(snap, METRIC(MW_QUIET_WINDOWS_TOTAL), NULL, (double)core->quiet_windows_total);
	snapshot_add(snap, METRIC(MW_WINDOW_LENGTH_SECONDS), NULL,
		     (double)(snapshot_window(snap)->end_mono_usec - snapshot_window(snap)->start_mono_usec) / 1e6);
	event_channel_collect(core->events, snap);
}

/* Each family has one producer, the module the catalogue names as its owner:
 * one written by another module is a bug, logged once per producer. */
static void check_owners(const struct snapshot *snap, size_t mark, const char *producer, bool *logged)
{
	const struct metric_desc *d;

	for (size_t i = mark; !*logged && (d = snapshot_family_desc(snap, i)); i++)
		if (strcmp(d->owner, producer) != 0) {
			*logged = true;
			log_error("%s emitted %s, which the catalogue gives to %s", producer, d->name, d->owner);
		}
}

static uint64_t window_lengths(const struct snapshot_window *w, uint32_t window_msec)
{
	uint64_t length = (uint64_t)window_msec * USEC_PER_MSEC;
	uint64_t n = (w->end_mono_usec - w->start_mono_usec + length / 2) / length;

	return n ? n : 1;
}

void core_end_window(struct core *core, uint64_t now_mono, uint64_t now_real)
{
	struct snapshot_window w = {
		.seq = ++core->seq,
		.start_mono_usec = core->window_start_mono_usec,
		.end_mono_usec = now_mono,
		.start_real_usec = core->window_start_real_usec,
		.end_real_usec = now_real,
	};
	_cleanup_(snapshot_unrefp) struct snapshot *snap = NULL;
	size_t i, dropped, health_mark;

	/* The next window starts here, whether this one is published or not. */
	core->window_lengths = window_lengths(&w, core->config->daemon.window_msec);
	if (core->window_went_on)
		core->quiet_windows_total += core->window_lengths - 1;
	core->window_went_on = false;
	if (core->watching)
		core_unwatch(core);
	core->window_start_mono_usec = now_mono;
	core->window_start_real_usec = now_real;
	core->instants_at_start = event_channel_instants_total(core->events);
	core->reloaded = false;
	vmstat_sources_next_window(core->vmstat);
	snap = snapshot_new(&w, core->config->daemon.max_series);
	if (!snap) {
		log_error("Out of memory building window %" PRIu64 ", skipped", w.seq);
		return;
	}
	{
		_cleanup_(snapshot_unrefp) struct snapshot *before = snapshot_ring_latest(core->ring);

		snapshot_size_like(snap, before);
	}
	for (i = 0; i < n_all_collectors; i++) {
		struct collector_instance *ci = &core->collectors[i];
		size_t cut = snapshot_dropped_series(snap), mark = snapshot_mark(snap);

		if (collect_one(ci, snap) && ci->carry && carry_apply(ci->carry, snap, mark, now_mono) < 0)
			log_warning("Collector %s: out of memory carrying its counters over the last restart",
				    ci->ops->name);
		check_owners(snap, mark, ci->ops->name, &ci->foreign_family_logged);
		if (ci->ops->counts_from_start)
			snapshot_set_created(snap, mark, (double)ci->counting_since_real_usec / 1e6);
		ci->series_dropped_total += snapshot_dropped_series(snap) - cut;
	}
	/* Our own series have a budget of their own: the cap never hides that it cuts. */
	dropped = snapshot_dropped_series(snap);
	snapshot_set_max_series(snap, snapshot_series(snap) + HEALTH_SERIES_BUDGET);
	health_mark = snapshot_mark(snap);
	add_meta(core, snap, now_real);
	check_owners(snap, health_mark, "daemon", &core->foreign_family_logged);
	/* The daemon's own counters and the event channel's count from its start. */
	snapshot_set_created(snap, health_mark, (double)core->start_real_usec / 1e6);
	if (snapshot_dropped_series(snap) > dropped && core->health_dropped_total++ == 0)
		log_error("Window %" PRIu64 ": %zu of the daemon's own series did not fit in their budget of %zu",
			  w.seq, snapshot_dropped_series(snap) - dropped, (size_t)HEALTH_SERIES_BUDGET);
	if (snapshot_seal_with(snap, core->renderer) < 0) {
		log_error("Out of memory rendering window %" PRIu64 ", skipped", w.seq);
		return;
	}
	snapshot_ring_publish(core->ring, TAKE_PTR(snap));
}

static bool settings_equal(const struct collector_ops *ops, const struct collector_settings *a,
			   const struct collector_settings *b)
{
	return a->enabled == b->enabled && memcmp(a->cfg, b->cfg, ops->config_size ? ops->config_size : 1) == 0;
}

/* One collect of an instance into a snapshot of its own, outside any window. */
static struct snapshot *scratch_collect(const struct collector_ops *ops, void *priv, size_t max_series)
{
	struct snapshot *snap = snapshot_new(NULL, max_series);

	if (snap && ops->collect(priv, snap) < 0)
		log_debug("Collector %s: a collect at the restart failed; carrying what it wrote", ops->name);
	return snap;
}

/* What the old instance exported last (its own values plus what it carried
 * itself), to continue from. NULL without memory: the counters then start
 * again from zero, as after a daemon restart. */
static struct carry *carry_from(struct collector_instance *ci, void *old_priv, size_t max_series, uint64_t now)
{
	_cleanup_(snapshot_unrefp) struct snapshot *last = NULL;
	_cleanup_(carry_freep) struct carry *next = carry_new();
	uint64_t hold = ci->ops->series_hold_msec ? ci->ops->series_hold_msec(ci->settings.cfg) : 0;

	if (ci->ops->read_fresh)
		ci->ops->read_fresh(old_priv);
	last = scratch_collect(ci->ops, old_priv, max_series);
	if (!last || !next)
		return NULL;
	if (ci->carry)
		(void)carry_apply(ci->carry, last, 0, now);
	if (carry_record(next, last, 0, hold ? now + hold * USEC_PER_MSEC : 0) < 0 ||
	    carry_keep_held(next, ci->carry, now) < 0)
		return NULL;
	{
		struct carry *ret = next;

		next = NULL;
		return ret;
	}
}

/* The new instance's first values, read right after the switch, fix the offsets. */
static void carry_splice_new(struct collector_instance *ci, size_t max_series)
{
	_cleanup_(snapshot_unrefp) struct snapshot *first = NULL;

	if (!ci->carry || !ci->status.running)
		return;
	first = scratch_collect(ci->ops, ci->priv, max_series);
	if (first)
		carry_splice(ci->carry, first, 0);
}

static void carry_replace(struct collector_instance *ci, struct carry *next)
{
	if (!next)
		log_warning("Collector %s: out of memory carrying its counters over the restart; they start again "
			    "from zero", ci->ops->name);
	carry_free(ci->carry);
	ci->carry = next;
}

/* A running collector whose change needs a new instance. The new one starts
 * before the old one stops (unless restart_stop_first), the old one's last
 * values are read, and the new one's first: nothing happens unseen between,
 * and every counter continues from what was exported. */
static void collector_restart(struct core *core, struct collector_instance *ci, size_t max_series)
{
	struct collector_context ctx = collector_context(core);
	struct collector_status st;
	uint64_t now = now_mono_usec();
	void *priv = NULL;
	int r;

	if (!ci->ops->restart_stop_first) {
		r = instance_start(ci->ops, ci->settings.cfg, &ctx, &st, &priv);
		if (r == 0) {
			_cleanup_(snapshot_unrefp) struct snapshot *first = NULL;
			struct carry *next;

			if (ci->ops->takeover && ci->status.running)
				ci->ops->takeover(priv, ci->priv);
			/* The new one's first values before the old one's last: an event
			 * between the two reads may count twice (none, for a collector that
			 * quiesces the old one), none goes unseen. */
			first = scratch_collect(ci->ops, priv, max_series);
			if (ci->ops->quiesce && ci->status.running)
				ci->ops->quiesce(ci->priv);
			next = carry_from(ci, ci->priv, max_series, now);

			collector_stop(ci);
			carry_replace(ci, next);
			collector_started(ci, 0, priv, &st);
			if (first && ci->carry)
				carry_splice(ci->carry, first, 0);
			return;
		}
		log_debug_errno(r, "Collector %s: a second instance did not start beside the running one (%m); "
			       "stopping it first", ci->ops->name);
	}
	carry_replace(ci, carry_from(ci, ci->priv, max_series, now));
	collector_stop(ci);
	r = instance_start(ci->ops, ci->settings.cfg, &ctx, &st, &priv);
	collector_started(ci, r, priv, &st);
	carry_splice_new(ci, max_series);
}

int core_reload(struct core *core, struct config *config, struct collector_settings *settings)
{
	int r;
	size_t i;

	if (config->daemon.history != core->config->daemon.history) {
		r = snapshot_ring_resize(core->ring, config->daemon.history);
		if (r < 0) {
			collector_settings_free(settings);
			config_free(config);
			return r;
		}
	}
	core->sample_msec = config->daemon.sample_msec;
	/* Once for every collector: a remount since start shows from here on. */
	if (core->cgroups)
		(void)cgroup_hierarchy_refresh(core->cgroups);
	{
		struct event_settings es = event_settings_from(&config->daemon);

		event_channel_apply(core->events, &es);
		event_journal_apply(core->journal, config->events.journal);
	}
	for (i = 0; i < n_all_collectors; i++) {
		struct collector_instance *ci = &core->collectors[i];
		struct collector_settings old = ci->settings;
		bool same = settings_equal(ci->ops, &old, &settings[i]);

		ci->settings = settings[i];
		settings[i].cfg = old.cfg; /* freed with the array below */
		if (same && (ci->status.running || !ci->settings.enabled))
			continue;
		if (!ci->status.running || !ci->settings.enabled) {
			/* Switched on or off, or a retry: a reload is the operator's way to retry. */
			collector_start(core, ci);
			continue;
		}
		if (ci->ops->reload) {
			r = ci->ops->reload(ci->priv, ci->settings.cfg);
			if (r == 0) {
				log_info("Collector %s: configuration reloaded in place", ci->ops->name);
				continue;
			}
			if (r == -EAGAIN)
				log_info("Collector %s: the change needs a new instance; restarting, counters carried over",
					 ci->ops->name);
			else
				log_warning_errno(r, "Collector %s: in-place reload failed, restarting: %m", ci->ops->name);
		}
		collector_restart(core, ci, config->daemon.max_series);
	}
	core->reloaded = true;
	bpf_attach_release_caches(); /* the kernel's BTF, parsed again by a restart */
	collector_settings_free(settings);
	config_free(core->config);
	core->config = config;
	return 0;
}

void core_status_line(const struct core *core, char *buf, size_t len)
{
	size_t i, enabled = 0, active = 0, off;
	bool first = true;

	for (i = 0; i < n_all_collectors; i++) {
		const struct collector_instance *ci = &core->collectors[i];

		if (ci->status.state == COLLECTOR_DISABLED)
			continue;
		enabled++;
		if (ci->status.state == COLLECTOR_ACTIVE)
			active++;
	}
	off = (size_t)snprintf(buf, len, "%zu/%zu collectors active", active, enabled);
	for (i = 0; i < n_all_collectors && off < len; i++) {
		const struct collector_instance *ci = &core->collectors[i];

		if (ci->status.state != COLLECTOR_DEGRADED && ci->status.state != COLLECTOR_FAILED)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s %s %s (%s)", first ? ";" : ",",
					collector_state_name(ci->status.state), ci->ops->name, ci->status.reason);
		first = false;
	}
}

uint64_t core_capabilities_wanted(const struct core *core)
{
	uint64_t caps = 0;

	for (size_t i = 0; i < n_all_collectors; i++) {
		const struct collector_instance *ci = &core->collectors[i];

		if (ci->settings.enabled && ci->ops->capabilities)
			caps |= ci->ops->capabilities(ci->settings.cfg);
	}
	return caps;
}

bool core_all_healthy(const struct core *core)
{
	size_t i;

	for (i = 0; i < n_all_collectors; i++) {
		const struct collector_status *st = &core->collectors[i].status;

		/* Degraded counts as healthy only for what the kernel lacks. */
		if (st->state == COLLECTOR_FAILED || (st->state == COLLECTOR_DEGRADED && st->unprivileged))
			return false;
	}
	return true;
}
