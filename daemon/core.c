// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "bpf_attach.h"
#include "core.h"
#include "event_channel.h"
#include "log.h"

#define BACKOFF_MAX_WINDOWS 64u

static const struct metric_desc desc_build_info = {
	"memwatch_build_info", "memwatchd build; always 1.", METRIC_GAUGE, 1, { "version" },
};
static const struct metric_desc desc_collector_up = {
	"memwatch_collector_up", "1 when the collector produced data in this window, else 0.",
	METRIC_GAUGE, 1, { "collector" },
};
static const struct metric_desc desc_collector_info = {
	"memwatch_collector_info",
	"Collector state: mode is the attach flavour, or the source or method used without one; "
	"reason is empty unless degraded or failed.",
	METRIC_GAUGE, 4, { "collector", "state", "mode", "reason" },
};
static const struct metric_desc desc_collector_duration = {
	"memwatch_collector_duration_seconds",
	"Time the collector spent sampling and collecting in the last window.", METRIC_GAUGE, 1, { "collector" },
};
static const struct metric_desc desc_collector_errors = {
	"memwatch_collector_errors_total", "Failed sample or collect calls.", METRIC_COUNTER, 1, { "collector" },
};
static const struct metric_desc desc_window_seconds = {
	"memwatch_window_seconds", "Configured window length.", METRIC_GAUGE,
};
static const struct metric_desc desc_sample_interval = {
	"memwatch_sample_interval_seconds", "Configured sample interval of the fast samplers.", METRIC_GAUGE,
};
static const struct metric_desc desc_window_end = {
	"memwatch_window_end_timestamp_seconds", "Wall-clock time at which this window ended.", METRIC_GAUGE,
};
static const struct metric_desc desc_start_time = {
	"memwatch_start_time_seconds", "Wall-clock time at which the daemon started.", METRIC_GAUGE,
};
static const struct metric_desc desc_series_dropped = {
	"memwatch_series_dropped_total", "Series left out because a window reached daemon.max_series.",
	METRIC_COUNTER,
};
static const struct metric_desc desc_reloads = {
	"memwatch_config_reloads_total", "Configuration reloads, by result.", METRIC_COUNTER, 1, { "result" },
};

uint64_t now_mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t now_real_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static const struct collector_ops *collector_by_name(const char *name, size_t *index)
{
	size_t i;

	for (i = 0; i < n_all_collectors; i++)
		if (strcmp(all_collectors[i]->name, name) == 0) {
			*index = i;
			return all_collectors[i];
		}
	return NULL;
}

void collector_settings_free(struct collector_settings *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < n_all_collectors; i++)
		free(s[i].cfg);
	free(s);
}

int collector_settings_build(const struct config *c, struct collector_settings **ret,
			     struct config_error *err)
{
	struct collector_settings *s;
	size_t i, idx = 0;
	int r;

	s = calloc(n_all_collectors, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < n_all_collectors; i++) {
		const struct collector_ops *ops = all_collectors[i];

		s[i].enabled = ops->default_enabled;
		s[i].cfg = calloc(1, ops->config_size ? ops->config_size : 1);
		if (!s[i].cfg) {
			r = -ENOMEM;
			goto fail;
		}
		if (ops->config_defaults)
			ops->config_defaults(s[i].cfg);
	}
	for (i = 0; i < c->n_collectors; i++) {
		if (!collector_by_name(c->collectors[i], &idx)) {
			char section[160];

			snprintf(section, sizeof(section), "collector.%s", c->collectors[i]);
			config_error_set(err, c->path, c->collector_lines[i], section, NULL,
					 "unknown collector '%s'", c->collectors[i]);
			r = -EINVAL;
			goto fail;
		}
	}
	for (i = 0; i < c->n_entries; i++) {
		const struct config_entry *e = &c->entries[i];
		const struct collector_ops *ops = collector_by_name(e->collector, &idx);
		char section[160], msg[256] = "";

		snprintf(section, sizeof(section), "collector.%s", e->collector);
		if (strcmp(e->key, "enabled") == 0) {
			if (config_parse_bool(e->value, &s[idx].enabled) < 0) {
				config_error_set(err, c->path, e->line, section, e->key,
						 "'%s' is not a boolean (yes/no, true/false, on/off, 1/0)", e->value);
				r = -EINVAL;
				goto fail;
			}
			continue;
		}
		r = ops->configure ? ops->configure(s[idx].cfg, e->key, e->value, msg, sizeof(msg)) : -ENOENT;
		if (r == -ENOENT) {
			config_error_set(err, c->path, e->line, section, e->key, "unknown key");
			r = -EINVAL;
			goto fail;
		}
		if (r < 0) {
			config_error_set(err, c->path, e->line, section, e->key, "%s",
					 msg[0] ? msg : "invalid value");
			r = -EINVAL;
			goto fail;
		}
	}
	*ret = s;
	return 0;
fail:
	collector_settings_free(s);
	return r;
}

int core_init(struct core *core, struct config *config, struct collector_settings *settings)
{
	size_t i;

	*core = (struct core){ .config = config };
	core->collectors = calloc(n_all_collectors, sizeof(*core->collectors));
	if (!core->collectors)
		return -ENOMEM;
	core->ring = snapshot_ring_new(config->daemon.history);
	if (!core->ring)
		return -ENOMEM;
	/* Without it every window sets up its own compressor: slower, still correct. */
	core->gzip = snapshot_gzip_new();
	for (i = 0; i < n_all_collectors; i++) {
		core->collectors[i].ops = all_collectors[i];
		core->collectors[i].settings = settings[i];
		settings[i].cfg = NULL;
	}
	free(settings);
	core->start_real_usec = now_real_usec();
	core->window_start_mono_usec = now_mono_usec();
	core->window_start_real_usec = core->start_real_usec;
	return 0;
}

static void collector_stop(struct collector_instance *ci)
{
	if (ci->priv) {
		if (ci->status.running && ci->ops->stop)
			ci->ops->stop(ci->priv);
		free(ci->priv);
		ci->priv = NULL;
	}
	ci->status.running = false;
}

static void collector_start(struct collector_instance *ci)
{
	struct collector_status *st = &ci->status;
	int r;

	collector_stop(ci);
	*st = (struct collector_status){ .state = COLLECTOR_DISABLED };
	ci->consecutive_failures = 0;
	ci->skip_windows = 0;
	if (!ci->settings.enabled)
		return;

	st->state = COLLECTOR_ACTIVE;
	r = ci->ops->probe ? ci->ops->probe(ci->settings.cfg, st) : 0;
	if (r == 0) {
		ci->priv = calloc(1, ci->ops->priv_size ? ci->ops->priv_size : 1);
		if (!ci->priv) {
			r = -ENOMEM;
		} else {
			/* Start may only refine what probe said. */
			enum collector_state probed = st->state;

			r = ci->ops->start(ci->priv, ci->settings.cfg, st);
			if (r == 0 && probed == COLLECTOR_DEGRADED)
				st->state = COLLECTOR_DEGRADED;
			if (r < 0) {
				if (ci->ops->stop)
					ci->ops->stop(ci->priv);
				free(ci->priv);
				ci->priv = NULL;
			}
		}
	}
	if (r == -EOPNOTSUPP || r == -ENOENT) {
		st->state = COLLECTOR_DEGRADED;
		st->running = false;
		log_warning("Collector %s is degraded and not running: %s", ci->ops->name, st->reason);
		return;
	}
	if (r < 0) {
		st->state = COLLECTOR_FAILED;
		st->running = false;
		if (!st->reason[0])
			collector_status_set_reason(st, "%s", strerror(-r));
		log_error("Collector %s failed to start: %s", ci->ops->name, st->reason);
		return;
	}
	st->running = true;
	if (st->state == COLLECTOR_DEGRADED)
		log_warning("Collector %s started (%s), degraded: %s", ci->ops->name, st->mode, st->reason);
	else
		log_info("Collector %s started (%s)", ci->ops->name, st->mode);
}

void core_start_collectors(struct core *core)
{
	size_t i;

	for (i = 0; i < n_all_collectors; i++)
		collector_start(&core->collectors[i]);
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
		for (i = 0; i < n_all_collectors; i++)
			free(core->collectors[i].settings.cfg);
		free(core->collectors);
	}
	snapshot_ring_free(core->ring);
	snapshot_gzip_free(core->gzip);
	config_free(core->config);
	*core = (struct core){ 0 };
}

void core_sample(struct core *core, uint64_t now_mono)
{
	size_t i;

	for (i = 0; i < n_all_collectors; i++) {
		struct collector_instance *ci = &core->collectors[i];
		uint64_t t0;
		int r;

		if (!ci->status.running || !ci->ops->sample || ci->skip_windows)
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

static void collect_one(struct collector_instance *ci, struct snapshot *snap)
{
	uint64_t t0;
	int r;

	if (!ci->status.running)
		return;
	if (ci->skip_windows) {
		ci->skip_windows--;
		return;
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
		return;
	}
	if (ci->consecutive_failures)
		log_info("Collector %s: collecting again after %u failure(s)", ci->ops->name,
			 ci->consecutive_failures);
	ci->consecutive_failures = 0;
}

static void add_meta(struct core *core, struct snapshot *snap, uint64_t now_real)
{
	const struct daemon_config *d = &core->config->daemon;
	size_t i;

	snapshot_add(snap, &desc_build_info, (const char *const[]){ MEMWATCHD_VERSION }, 1);
	for (i = 0; i < n_all_collectors; i++) {
		struct collector_instance *ci = &core->collectors[i];
		const char *name = ci->ops->name;
		bool up = ci->status.running && ci->consecutive_failures == 0;

		snapshot_add(snap, &desc_collector_up, (const char *const[]){ name }, up);
		snapshot_add(snap, &desc_collector_info,
			     (const char *const[]){ name, collector_state_name(ci->status.state),
						    ci->status.mode, ci->status.reason },
			     1);
		if (ci->status.running) {
			ci->last_duration = (double)ci->busy_usec / 1e6;
			snapshot_add(snap, &desc_collector_duration, (const char *const[]){ name },
				     ci->last_duration);
			snapshot_add(snap, &desc_collector_errors, (const char *const[]){ name },
				     (double)ci->errors_total);
		}
		ci->busy_usec = 0;
	}
	snapshot_add(snap, &desc_window_seconds, NULL, d->window_msec / 1000.0);
	snapshot_add(snap, &desc_sample_interval, NULL, d->sample_msec / 1000.0);
	snapshot_add(snap, &desc_window_end, NULL, (double)now_real / 1e6);
	snapshot_add(snap, &desc_start_time, NULL, (double)core->start_real_usec / 1e6);
	snapshot_add(snap, &desc_reloads, (const char *const[]){ "success" },
		     (double)(core->reloads_total - core->reload_failures_total));
	snapshot_add(snap, &desc_reloads, (const char *const[]){ "failure" }, (double)core->reload_failures_total);
	event_channel_collect(snap);
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
	struct snapshot *snap;
	size_t i;

	/* The meta families come last, so max_series can only cut collector data. */
	snap = snapshot_new(&w, core->config->daemon.max_series + 16 + 4 * n_all_collectors);
	if (!snap) {
		log_error("Out of memory building window %" PRIu64 ", skipped", w.seq);
		goto out;
	}
	for (i = 0; i < n_all_collectors; i++)
		collect_one(&core->collectors[i], snap);
	core->series_dropped_total += snapshot_dropped_series(snap);
	add_meta(core, snap, now_real);
	snapshot_add(snap, &desc_series_dropped, NULL, (double)core->series_dropped_total);
	if (snapshot_seal_with(snap, core->gzip) < 0) {
		log_error("Out of memory rendering window %" PRIu64 ", skipped", w.seq);
		snapshot_unref(snap);
		goto out;
	}
	snapshot_ring_publish(core->ring, snap);
out:
	core->window_start_mono_usec = now_mono;
	core->window_start_real_usec = now_real;
}

static bool settings_equal(const struct collector_ops *ops, const struct collector_settings *a,
			   const struct collector_settings *b)
{
	return a->enabled == b->enabled && memcmp(a->cfg, b->cfg, ops->config_size ? ops->config_size : 1) == 0;
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
	for (i = 0; i < n_all_collectors; i++) {
		struct collector_instance *ci = &core->collectors[i];
		struct collector_settings old = ci->settings;
		bool same = settings_equal(ci->ops, &old, &settings[i]);

		ci->settings = settings[i];
		settings[i].cfg = old.cfg; /* freed with the array below */
		if (same && (ci->status.running || !ci->settings.enabled))
			continue;
		/* Changed, or enabled but not running: a reload is the operator's way to retry. */
		if (ci->status.running && ci->settings.enabled && ci->ops->reload) {
			r = ci->ops->reload(ci->priv, ci->settings.cfg);
			if (r == 0) {
				log_info("Collector %s: configuration reloaded in place", ci->ops->name);
				continue;
			}
			log_warning_errno(r, "Collector %s: in-place reload failed, restarting: %m", ci->ops->name);
		}
		collector_start(ci);
	}
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
