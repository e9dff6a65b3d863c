/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_EVENT_CHANNEL_H
#define MEMWATCHD_EVENT_CHANNEL_H

#include <linux/types.h>
#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stdint.h>
#include "events.h"
#include "snapshot.h"
#include "strbuf.h"

/* The one event channel: a BPF ring buffer (perf buffer on kernels without
 * one) shared by every BPF object that reports pressure instants and OOM
 * kills, drained by one consumer thread, decoupled from scrapes. */

enum memavail_source {
	MEMAVAIL_NONE,
	MEMAVAIL_FEXIT,   /* si_mem_available's own return, via fexit */
	MEMAVAIL_KPROBE,  /* same, via kretprobe */
	MEMAVAIL_COUNTERS, /* computed at the instant in BPF from zone and node counters */
	MEMAVAIL_PROCFS,  /* /proc/meminfo read as the event arrives */
};

const char *memavail_source_name(enum memavail_source s);
const char *event_kind_name(unsigned kind);

struct event_record {
	uint64_t real_usec;      /* wall clock of the event itself */
	unsigned kind;
	uint32_t pid, tid;
	char comm[EVENT_COMM_LEN + 1];
	uint64_t cgroup_id;
	char cgroup[256];        /* path below the memory hierarchy root; "" if unknown */
	double avail_bytes;      /* NAN when unknown */
	enum memavail_source avail_source;
	uint64_t value;
};

struct event_settings {
	uint64_t gate_msec;
	size_t history;       /* events kept for /api/v1/events */
	size_t buffer_bytes;  /* ring buffer size; power of two, >= page size */
	bool paused;          /* debug hook: stop draining (tests) */
	bool perf_buffer;     /* debug hook: the pre-5.8 perf buffer even where a ring buffer works (tests) */
};

int event_channel_open(const struct event_settings *settings);
/* Starts the consumer thread (after privileges are dropped: capabilities are per thread). */
int event_channel_start(void);
void event_channel_close(void);
/* Applies a reload: gate, history length and pause; the buffer size needs a restart. */
void event_channel_apply(const struct event_settings *settings);

/* Before load, for every BPF object that includes bpf/events.bpf.h: swaps in
 * the shared maps and tells it which buffer kind to write. ringbuf_flag points
 * into the skeleton's rodata (events_use_ringbuf). */
int event_channel_prepare_object(struct bpf_object *obj, volatile bool *ringbuf_flag);
/* After load: the object's counters (in its mmap'ed .bss) join the channel's health metrics. */
void event_channel_add_source(struct event_counters *counters);
void event_channel_remove_source(struct event_counters *counters);
int event_channel_memavail_fd(void);

/* The memavail collector decides how a pressure instant's available memory is known. */
void event_channel_set_memavail_source(enum memavail_source s);

/* Per window: lowest available memory at a pressure instant, if any, and reset. */
bool event_channel_take_window_min(double *bytes);
void event_channel_counts(uint64_t received[EVENT_KINDS]);
/* Every pressure instant the kernel saw, by kind: sent, gated or dropped. */
void event_channel_instants(uint64_t out[EVENT_KINDS]);
/* OOM kills by cgroup path (bounded table); calls fn for each. */
void event_channel_foreach_oom_cgroup(void (*fn)(const char *cgroup, uint64_t kills, void *ud), void *ud);
uint64_t event_channel_last_oom_real_usec(void);

void event_channel_collect(struct snapshot *snap);
/* Every kept event, oldest first, under the channel's lock: fn must be quick. */
void event_channel_foreach_recent(void (*fn)(const struct event_record *e, void *ud), void *ud);
/* GET /api/v1/events: every kept event, oldest first. Thread-safe. */
int event_channel_render_json(struct strbuf *sb);

#endif
