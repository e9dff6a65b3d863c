/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_EVENT_CHANNEL_H
#define MEMWATCHD_EVENT_CHANNEL_H

#include <linux/types.h>
#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stdint.h>
#include "cgroup_names.h"
#include "events.h"
#include "snapshot.h"
#include "strbuf.h"

/* The event channel: a BPF ring buffer (perf buffer on kernels without one)
 * shared by every BPF object that reports pressure instants and OOM kills,
 * drained by one consumer thread, decoupled from scrapes. It is transport
 * only: it resolves the cgroup, keeps the recent events and counts what it
 * carries; what an event means to a collector (available memory, the OOM
 * table) is that collector's, through a handler it subscribes. The core
 * creates one and hands it to the collectors (struct collector_context).
 * Every function accepts a NULL channel (none could be opened, or --check):
 * events then go nowhere. */
struct event_channel;
struct cgroup_hierarchy;

const char *event_kind_name(unsigned kind);

/* What a kill event says beyond who and where: the OOM diagnosis, or who
 * sent a user-space kill. Kills are rare, so only they carry one. */
struct kill_record {
	struct kill_detail raw;      /* as the kernel gave it: pages */
	uint32_t flags;              /* KILL_HAS_* */
	char oom_cgroup[256];        /* path of raw.oom_cgroup_id; "" if unknown */
	char killer[EVENT_COMM_LEN + 1];
	struct cgroup_labels names;  /* of the victim's cgroup, at the kill */
	/* The victim cgroup's memory PSI at the kill; NAN if unknown. */
	double psi_some_avg10, psi_full_avg10;
	double psi_some_total_sec, psi_full_total_sec;
	/* Where the PSI came from (a static string): "kill" (read by the BPF
	 * program at the kill), "file" (memory.pressure when the event was
	 * read: the root cgroup, or a kernel without the kill's read), NULL. */
	const char *psi_source;
	bool restored;               /* read back from the journal at start */
	/* How the victim's cgroup was named (a static string): "table" (the path
	 * table had it), "kill" (gone before the lookup: from the parent's path
	 * and the name the kernel gave), "none"; a restored kill keeps its own. */
	const char *cgroup_source;
};

struct event_record {
	uint64_t real_usec;      /* wall clock of the event itself */
	unsigned kind;
	uint32_t pid, tid;
	char comm[EVENT_COMM_LEN + 1];
	uint64_t cgroup_id;
	char cgroup[256];        /* path below the memory hierarchy root; "" if unknown */
	double avail_bytes;      /* NAN when unknown */
	const char *avail_source; /* how avail_bytes is known (a static string); "none" */
	uint64_t value;
	struct kill_record *kill; /* kills only (NULL otherwise); owned by the channel */
};

const char *oom_scope_name(unsigned scope);

struct event_settings {
	uint64_t gate_msec;
	size_t history;       /* events kept for /api/v1/events */
	size_t buffer_bytes;  /* ring buffer size; power of two, >= page size */
	bool paused;          /* debug hook: stop draining (tests) */
	bool perf_buffer;     /* debug hook: the pre-5.8 perf buffer even where a ring buffer works (tests) */
};

/* cgroups: where event cgroup ids become paths (NULL: none do); it must
 * outlive the channel. */
int event_channel_new(const struct event_settings *settings, struct cgroup_hierarchy *cgroups,
		      struct event_channel **ret);
/* Starts the consumer thread (after privileges are dropped: capabilities are per thread). */
int event_channel_start(struct event_channel *ch);
/* Stops the consumer; every source and subscriber must be gone. */
void event_channel_free(struct event_channel *ch);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct event_channel *, event_channel_free)
/* Applies a reload: gate, history length and pause; the buffer size needs a restart. */
void event_channel_apply(struct event_channel *ch, const struct event_settings *settings);

/* Before load, for every BPF object that includes bpf/events.bpf.h: swaps in
 * the shared buffer for its events map and tells it which buffer kind to
 * write (ringbuf_flag points into the skeleton's rodata, events_use_ringbuf). */
int event_channel_prepare(struct event_channel *ch, struct bpf_map *events, volatile bool *ringbuf_flag);
/* After load: the object's counters (in its mmap'ed .bss) join the channel's
 * counts. When removed, what they counted stays in the totals. */
void event_channel_add_source(struct event_channel *ch, struct event_counters *counters);
void event_channel_remove_source(struct event_channel *ch, struct event_counters *counters);

#define EVENT_KIND_BIT(k) (1u << (k))
#define EVENT_KINDS_ALL (EVENT_KIND_BIT(EVENT_KINDS) - 1)

/* Called on the consumer thread for each event of the kinds subscribed to,
 * before the record is kept: it may fill in what it owns. Must be quick and
 * may not call back into the channel. */
typedef void (*event_handler_fn)(void *userdata, const struct memwatch_event *raw, struct event_record *rec);
int event_channel_subscribe(struct event_channel *ch, unsigned kinds, event_handler_fn fn, void *userdata);
/* Returns once no call of fn for userdata is running or can start. */
void event_channel_unsubscribe(struct event_channel *ch, event_handler_fn fn, void *userdata);
/* Runs fn between two events: every subscriber has had each event before,
 * none has one after (a restart's handover of what handlers built). */
void event_channel_between_events(struct event_channel *ch, void (*fn)(void *userdata), void *userdata);

/* Called on the consumer thread for every record once the subscribers have
 * filled it in (the journal): one sink, NULL to remove. Must not call back
 * into the channel. */
typedef void (*event_sink_fn)(void *userdata, const struct event_record *rec);
void event_channel_set_sink(struct event_channel *ch, event_sink_fn fn, void *userdata);

/* Records from before this start (read back from the journal), oldest
 * first: kept ahead of every live event, within the history. The channel
 * takes each record's kill (the caller's pointers are cleared). */
void event_channel_restore(struct event_channel *ch, struct event_record *recs, size_t n);

/* The channel's own families, and the pressure instants of every kind. */
void event_channel_collect(struct event_channel *ch, struct snapshot *snap);
/* Pressure instants the kernel saw so far, of every kind, whether sent,
 * gated or dropped: moves with any memory pressure. 0 without a channel. */
uint64_t event_channel_instants_total(struct event_channel *ch);
/* While on, the consumer makes event_channel_stir_fd readable as it finds
 * the first event in the buffer (a gated burst still sends its first one);
 * off empties it. Returns whether the consumer is there to do it; without a
 * channel, nothing can stir and nothing needs to. */
bool event_channel_watch(struct event_channel *ch, bool on);
int event_channel_stir_fd(const struct event_channel *ch);
/* Every kept event, oldest first, under the channel's lock: fn must be quick. */
void event_channel_foreach_recent(struct event_channel *ch, void (*fn)(const struct event_record *e, void *ud),
				  void *ud);
/* GET /api/v1/events: every kept event, oldest first. Thread-safe. */
int event_channel_render_json(struct event_channel *ch, struct strbuf *sb);

#endif
