/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_CORE_H
#define MEMWATCHD_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf_attach.h"
#include "collector.h"
#include "config.h"
#include "event_channel.h"
#include "event_journal.h"
#include "ring.h"

struct carry;
struct stir;

/* Per-collector settings derived from a config: validated before anything is applied. */
struct collector_settings {
	bool enabled;
	void *cfg;
};

struct collector_instance {
	const struct collector_ops *ops;
	struct collector_settings settings;
	void *priv;
	struct collector_status status;
	uint64_t errors_total;
	uint64_t busy_usec;      /* time spent in sample+collect this window */
	double last_duration;
	unsigned consecutive_failures;
	unsigned skip_windows;   /* doubling back-off after failed collects */
	uint64_t series_dropped_total; /* cut by max_series */
	bool foreign_family_logged; /* emitted a family the catalogue gives to another module */
	/* Counters carried over a restart (lib/carry.h); NULL until the first
	 * restart, dropped when the collector is switched off. */
	struct carry *carry;
	/* Wall clock when it was switched on; a restart keeps it, as the carry
	 * keeps its counters going (ops->counts_from_start). */
	uint64_t counting_since_real_usec;
};

struct pollfd;

struct core {
	struct config *config;
	struct collector_instance *collectors; /* n_all_collectors entries */
	struct snapshot_ring *ring;
	struct snapshot_renderer *renderer; /* shared by every window */
	uint64_t seq;
	uint64_t window_start_mono_usec;
	uint64_t window_start_real_usec;
	uint64_t health_dropped_total; /* our own series cut: a bug in HEALTH_SERIES_BUDGET */
	bool foreign_family_logged;
	uint64_t reloads_total;
	uint64_t reload_failures_total;
	uint64_t start_real_usec;
	/* Handed to every collector's probe and start (collector_context); all
	 * five outlive every collector instance. */
	struct cgroup_hierarchy *cgroups; /* made by core_init; NULL when it could not be */
	struct cgroup_names *names;       /* made by core_init; NULL when it could not be */
	struct vmstat_sources *vmstat;    /* made by core_init */
	struct event_channel *events;     /* NULL until core_open_events, or when it failed */
	struct event_journal *journal;    /* the channel's sink; NULL without a channel */
	struct bpf_shared_maps shared_maps;
	uint64_t sample_msec; /* config->daemon.sample_msec, where collectors read it */
	uint64_t window_lengths; /* of the window being collected (collector_context) */
	uint64_t quiet_windows_total; /* window ends passed over (core_window_goes_on) */
	bool window_went_on;          /* this window passed over an end */
	struct stir *stir;            /* NULL: no ring to sleep on; windows that go on are checked each length */
	bool watching;                /* core_watch armed the collectors and the channel */
	uint64_t instants_at_start;   /* event_channel_instants_total() when this window started */
	bool reloaded;                /* since this window started: it ends at its length */
	uint64_t reader_due_mono;     /* the next scrape expected (core_expect_reader); 0: none */
};

/* Checks every [collector.NAME] section against the collectors' own keys. */
int collector_settings_build(const struct config *c, struct collector_settings **ret,
			     struct config_error *err);
void collector_settings_free(struct collector_settings *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct collector_settings *, collector_settings_free)

/* Takes config and settings, also when it fails; core_done then frees what
 * it made (and is a no-op on a zeroed core). */
int core_init(struct core *core, struct config *config, struct collector_settings *settings);
void core_done(struct core *core);

/* The event channel, before the collectors start; without one the collectors
 * still count, only event details are lost. Its consumer thread starts with
 * core_start_events, once privileges are dropped. With [events] journal, the
 * kills of earlier runs are read back from the journal into it here, while
 * reading the journal is still allowed. */
void core_open_events(struct core *core);
int core_start_events(struct core *core);
void core_start_collectors(struct core *core);
void core_stop_collectors(struct core *core);
void core_sample(struct core *core, uint64_t now_mono);
/* Whether any running collector needs core_sample every sample interval. */
bool core_wants_samples(const struct core *core);
/* The collectors' wake descriptors (wake_fd), at most max; core_wake runs
 * the sample of each collector whose descriptor polled readable. */
size_t core_wake_fds(const struct core *core, struct pollfd *fds, size_t max);
void core_wake(struct core *core, const struct pollfd *fds, size_t n, uint64_t now_mono);
/* At the end of the window's length: whether it goes on instead, memory
 * having stood still (daemon.quiet_read_interval). */
bool core_window_goes_on(struct core *core, uint64_t now_mono);
/* A scrape is expected at due_mono (0: none): a window at rest may go on
 * past quiet_read_interval to the last end on its grid before it, at most
 * daemon_config_longest_rest_msec. Set before core_watch and
 * core_window_goes_on; READER_MARGIN_USEC is what the window's end keeps
 * between itself and the scrape. */
#define READER_MARGIN_USEC 250000u
void core_expect_reader(struct core *core, uint64_t due_mono);
/* Sleeping through a window that goes on: asks every running collector
 * with quiet or busy, and the event channel, to stir the main loop
 * (core_stir_fds) as soon as their answer would change, and moves
 * *window_end to where core_window_goes_on would first say no. False, and
 * nothing armed, where one cannot or something moved already: the loop then
 * asks at each window length. core_unwatch disarms and empties; the end of
 * the window does too. */
bool core_watch(struct core *core, uint64_t *window_end);
void core_unwatch(struct core *core);
size_t core_stir_fds(const struct core *core, struct pollfd *fds, size_t max);
/* Ends the current window: every running collector writes into a new snapshot, which is published. */
void core_end_window(struct core *core, uint64_t now_mono, uint64_t now_real);
/* Takes over config and settings; the old ones are freed. */
int core_reload(struct core *core, struct config *config, struct collector_settings *settings);

/* sd_notify's STATUS=: "<active>/<enabled> collectors active", then each collector
 * not fully running: "9/10 collectors active; degraded memavail (why), failed oom (why)". */
void core_status_line(const struct core *core, char *buf, size_t len);
/* True when every enabled collector is active or degraded for a known kernel reason. */
bool core_all_healthy(const struct core *core);
/* What the collectors switched on ask to keep besides BPF's (collector_ops.capabilities). */
uint64_t core_capabilities_wanted(const struct core *core);

#endif
