/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by every memwatchd BPF program. */
#ifndef MEMWATCH_BPF_H
#define MEMWATCH_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* A classic tracepoint program that returns 0 hides the event from every
 * perf user of that tracepoint on the host (perf_trace_run_bpf_submit()).
 * We only count, so let every event through. */
#define TP_KEEP_EVENT 1

/* One tracepoint, three attach flavours around one handler: NAME_btf
 * (tp_btf), NAME_raw (raw_tp) and NAME_tp (the classic tracepoint in
 * CATEGORY). The first two get the tracepoint's arguments as BPF_PROG declares
 * them (the trailing arguments) and return btf_call; the third gets its
 * record as `TP_RECORD *ctx`, runs tp_call and keeps the event. User space
 * autoloads exactly one of them (daemon/bpf_attach.c). */
#define TP_FLAVOURS(name, category, event, btf_call, tp_record, tp_call, ...)       \
	SEC("?tp_btf/" #event)                                                      \
	int BPF_PROG(name##_btf, ##__VA_ARGS__) { return btf_call; }                \
	SEC("?raw_tp/" #event)                                                      \
	int BPF_PROG(name##_raw, ##__VA_ARGS__) { return btf_call; }                \
	SEC("?tracepoint/" #category "/" #event)                                    \
	int name##_tp(tp_record *ctx) { tp_call; return TP_KEEP_EVENT; }

/* An LRU hash map's type; declare one as `BPF_LRU_HASH(k, v, n) name SEC(".maps");`. */
#define BPF_LRU_HASH(key_type, value_type, entries) \
	struct {                                     \
		__uint(type, BPF_MAP_TYPE_LRU_HASH); \
		__uint(max_entries, entries);        \
		__type(key, key_type);               \
		__type(value, value_type);           \
	}

/* Counters are cumulative and never reset: Prometheus rate() depends on it. */
static __always_inline void counter_add(__u64 *counter, __u64 delta)
{
	__sync_fetch_and_add(counter, delta);
}

/* Smallest k with 2^k >= v, so slot k is exactly the Prometheus bucket le=2^k. */
static __always_inline __u32 log2_slot_ceil(__u64 v)
{
	__u32 k = 0;

	if (v <= 1)
		return 0;
	v--;
	if (v >> 32) { v >>= 32; k += 32; }
	if (v >> 16) { v >>= 16; k += 16; }
	if (v >> 8)  { v >>= 8;  k += 8; }
	if (v >> 4)  { v >>= 4;  k += 4; }
	if (v >> 2)  { v >>= 2;  k += 2; }
	if (v >> 1)  { k += 1; }
	return k + 1;
}

#endif
