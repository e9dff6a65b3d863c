/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_COLLECTOR_H
#define MEMWATCHD_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "catalogue.h"
#include "config.h"
#include "snapshot.h"
/* The services collector_context hands out, and the log: a collector sees
 * the daemon through this header and bpf_attach.h only. */
#include "cgroup_hierarchy.h"
#include "event_channel.h"
#include "log.h"
#include "vmstat_source.h"

enum collector_state {
	COLLECTOR_DISABLED, /* switched off in the configuration */
	COLLECTOR_ACTIVE,   /* running with every feature */
	COLLECTOR_DEGRADED, /* the kernel lacks something: running with less, or not at all */
	COLLECTOR_FAILED,   /* an unexpected error, e.g. no permission to load BPF */
};

const char *collector_state_name(enum collector_state s);

/* What probe and start report; the core shows it in logs, metrics, --check and STATUS. */
struct collector_status {
	enum collector_state state;
	bool running;
	char mode[32];    /* attach flavour (tp_btf, raw_tp, tracepoint), or procfs, vmstat, a memavail method */
	char reason[256]; /* why degraded or failed; empty when active */
	/* Degraded because the process may not load BPF programs, not because the
	 * kernel lacks something: --check exits 1 for it. */
	bool unprivileged;
};

void collector_status_set_reason(struct collector_status *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A collector that fell back after error r from bpf(): EPERM without the
 * capabilities BPF needs is missing privilege (st->unprivileged); as a
 * privileged process it is the kernel refusing (fentry on some kernels). */
void collector_status_note_bpf_error(struct collector_status *st, int r);

struct bpf_shared_maps;
struct cgroup_names;

/* What the core provides to every instance's probe and start, for as long as
 * the instance runs (keep the pointers in priv). */
struct collector_context {
	/* The event channel (daemon/event_channel.h), NULL where none could be
	 * opened (and under --check): a collector whose BPF objects report
	 * events prepares them for it, adds their counters as a source, and
	 * subscribes a handler for the kinds of event it owns. */
	struct event_channel *events;
	/* BPF maps that outlive one collector instance (bpf_attach.h). */
	struct bpf_shared_maps *shared_maps;
	/* The daemon's one view of the cgroup hierarchies (cgroup_hierarchy.h),
	 * NULL where it could not be made: mountinfo and the id -> path tables.
	 * It outlives every instance and follows mountinfo on each reload. */
	struct cgroup_hierarchy *cgroups;
	/* Cgroup paths to the workloads' names (lib/cgroup_names.h), NULL where
	 * it could not be made: the per-cgroup families then carry what the
	 * path alone says. The cgroup collector sets its kubelet directories. */
	struct cgroup_names *names;
	/* /proc/vmstat read once a window for every collector that takes
	 * figures from it (vmstat_source.h); NULL only in tests that give none. */
	struct vmstat_sources *vmstat;
	/* The daemon's sample interval ([daemon] sample_interval), kept current
	 * across reloads by the core. */
	const uint64_t *sample_msec;
	/* How many window lengths the window being collected spans: 1, more
	 * when it went on while memory stood still (core_window_goes_on). Gates
	 * that count windows count these. NULL (tests) means 1. */
	const uint64_t *window_lengths;
};

/* *window_lengths as a collector keeps the pointer from its context. */
static inline uint64_t collector_window_lengths(const uint64_t *window_lengths)
{
	return window_lengths && *window_lengths ? *window_lengths : 1;
}

/* One of the cgroup hierarchy's shared id -> path tables (ctx->cgroups), as a
 * collector holds it: zeroed or after a failed open, it has none. */
struct collector_cgroup_table {
	struct cgroup_hierarchy *hierarchy;
	int id; /* < 0: none */
};

/* The table of root, or with root NULL or "" of the memory hierarchy
 * (-ENOENT where mountinfo has none), sized for max_entries cgroups. 0 or a
 * negative errno (h NULL: -ENOMEM), which t->id then holds. */
int collector_cgroup_table_open(struct collector_cgroup_table *t, struct cgroup_hierarchy *h, const char *root,
				size_t max_entries);
void collector_cgroup_table_close(struct collector_cgroup_table *t);
/* An exemplar's cgroup (struct latency_hist_source's cgroup_path; userdata is
 * a struct collector_cgroup_table): the path of the memory cgroup the stalled
 * task was charged to, looked up now. */
int exemplar_cgroup_path(uint64_t id, char *buf, size_t len, void *table);

/* One key of [collector.NAME] other than "enabled": how a value goes into
 * the collector's cfg (lib/config.h: kind, field, bounds, or a parse function
 * of its own where no kind fits) and its built-in value, spelt as in the
 * configuration file (NULL: the field stays zero). */
struct collector_key {
	struct config_key key;
	const char *def;
};

/* The core owns both blobs: cfg (config_size bytes, filled from keys) and
 * priv (priv_size bytes, zeroed before start). Every callback returns 0 or a
 * negative errno. */
struct collector_ops {
	const char *name;
	const char *summary;
	bool default_enabled;

	size_t config_size;
	/* The core parses every default, then each key the file sets, and
	 * says what is wrong with a value in the daemon's own words. */
	const struct collector_key *keys;
	size_t n_keys;

	size_t priv_size;
	/* Optional, cheap and side-effect free: does this kernel offer what the
	 * collector needs (a tracepoint, a /proc file)? Same return convention as start. */
	int (*probe)(const void *cfg, const struct collector_context *ctx, struct collector_status *st);
	/* Attach or open whatever it reads. Return -EOPNOTSUPP (or -ENOENT) with
	 * st->reason set when the kernel lacks a feature: that is a graceful
	 * degradation. Any other error is a failure. A collector that runs with
	 * less sets st->state = COLLECTOR_DEGRADED and returns 0. */
	int (*start)(void *priv, const void *cfg, const struct collector_context *ctx, struct collector_status *st);
	/* Optional, every sample interval: fast gauges (min/max within a window). */
	int (*sample)(void *priv, uint64_t now_usec);
	/* Optional, with sample: whether this instance needs it now (false when
	 * the kernel samples for it). Without it, an instance with sample always
	 * does. The daemon sleeps through sample intervals nobody needs. */
	bool (*wants_samples)(void *priv);
	/* Optional, with sample: a descriptor that turns readable when sample
	 * must run before the window ends (a ring buffer half full), or -1. */
	int (*wake_fd)(void *priv);
	/* Optional: whether nothing it watches moved since the window started.
	 * The window goes on past its length (core_window_goes_on) only when
	 * every running instance that answers says so, and one at least does. */
	bool (*quiet)(void *priv);
	/* Optional: whether something it counts happened since its last
	 * collect; one that did ends the window at its length, quiet or not. */
	bool (*busy)(void *priv);
	/* Optional, with quiet or busy: while on, the kernel side writes into
	 * the shared stir ring (daemon/stir.h) as soon as quiet or busy would
	 * answer otherwise, so that the daemon sleeps through a window that goes
	 * on instead of asking at each window length. False where it cannot,
	 * or when the answer changed already. */
	bool (*watch)(void *priv, bool on);
	/* At the end of a window: write every sample into the snapshot. */
	int (*collect)(void *priv, struct snapshot *snap);
	/* Optional: apply a changed configuration in place, keeping BPF maps,
	 * links and every running total. -EAGAIN: this change needs a new
	 * instance (new programs or map sizes); the core then restarts the
	 * collector and carries its counters forward (lib/carry.h). Without it
	 * every change restarts. */
	int (*reload)(void *priv, const void *cfg);
	/* Must cope with a half-done start. */
	void (*stop)(void *priv);

	/* Optional: how long a series the collector stopped updating stays
	 * exported (its series_ttl). After a restart, a per-process or
	 * per-cgroup series the new instance has not produced yet stays that
	 * long at its last value. Without it such a series ends with the old
	 * instance. */
	uint64_t (*series_hold_msec)(const void *cfg);
	/* Optional: on a restart in which the new instance starts before the old
	 * one stops, called between the two: the new one takes over state the
	 * old one built from events (which a counter carry cannot rebuild), such
	 * as the OOM kills by cgroup. */
	void (*takeover)(void *new_priv, void *old_priv);
	/* Optional, with takeover: at such a restart, right after the new
	 * instance's first values were read, the old one stops counting (its
	 * programs detach) before its last values are read. For a collector
	 * whose two instances never count the same event (bpf/oom.bpf.c claims
	 * each kill in a map they share), nothing is then counted twice, and
	 * nothing between the two reads is lost. */
	void (*quiesce)(void *priv);
	/* Optional, for a collector that reads an expensive source only every
	 * few windows: its next collect reads it whatever the gate says. Called
	 * before the old instance's last collect at a restart, whose values the
	 * counters continue from: a stale one would lose what happened since
	 * its last read (and a process that exited since, its last faults). */
	void (*read_fresh)(void *priv);
	/* On restart, stop the old instance before starting the new one: it
	 * shares state (the memavail map) that two instances would fight over.
	 * Otherwise the new one starts first, so nothing happens unseen between. */
	bool restart_stop_first;
	/* Its unlabelled counters and histograms count from zero from the
	 * instant it was switched on (BPF counters, carried over restarts), so
	 * that instant is their OpenMetrics _created. Not for a collector that
	 * passes on kernel counters, which count since boot. */
	bool counts_from_start;
	/* Optional: capabilities (1 << CAP_*) it needs besides BPF's for as
	 * long as it runs with cfg, kept when the daemon drops the others. */
	uint64_t (*capabilities)(const void *cfg);
};

extern const struct collector_ops meminfo_collector;
extern const struct collector_ops psi_collector;
extern const struct collector_ops kswapd_collector;
extern const struct collector_ops reclaim_collector;
extern const struct collector_ops alloc_collector;
extern const struct collector_ops compaction_collector;
extern const struct collector_ops faults_collector;
extern const struct collector_ops memavail_collector;
extern const struct collector_ops oom_collector;
extern const struct collector_ops cgroup_collector;

extern const struct collector_ops *const all_collectors[];
extern const size_t n_all_collectors;

#endif
