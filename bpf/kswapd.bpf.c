// SPDX-License-Identifier: GPL-2.0
/* kswapd: wakeups, wake requests and time spent awake, per the vmscan
 * tracepoints. One handler per event, three attach flavours each; user space
 * autoloads exactly one flavour. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memwatch.bpf.h"
#include "kswapd.h"
#include "stir.bpf.h"

struct kswapd_counters counters = {};
/* Set by user space while a window goes on: a wake ends it. */
__u64 stir_armed = 0;

static __always_inline void stir_if_armed(void)
{
	if (!stir_armed)
		return;
	stir_armed = 0;
	stir_daemon();
}

/* Volatile: user space reads the slots while the programs run. */
#define READ_ONCE(x) (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

static __always_inline __u64 *awake_since(int nid)
{
	__u64 n = (__u32)nid;

	/* Without the barrier clang indexes with a register the check never saw. */
	barrier_var(n);
	if (n >= KSWAPD_MAX_NODES)
		return NULL;
	return &counters.awake_since_ns[n];
}

/* Both events fire in node nid's own kswapd thread (kswapd() and
 * kswapd_try_to_sleep()), so each awake_since slot has one writer: plain
 * loads and stores, no cmpxchg/xchg, which 5.10's verifier refuses (5.12+). */
static __always_inline int handle_kswapd_wake(int nid)
{
	__u64 now = bpf_ktime_get_ns(), *since = awake_since(nid);

	counter_add(&counters.wakeups, 1);
	stir_if_armed();
	/* kswapd may go round its loop again without sleeping: keep the first wake. */
	if (since && !READ_ONCE(*since))
		WRITE_ONCE(*since, now);
	return 0;
}

static __always_inline int handle_kswapd_sleep(int nid)
{
	__u64 since, now = bpf_ktime_get_ns(), *slot = awake_since(nid);

	if (!slot)
		return 0;
	since = READ_ONCE(*slot);
	if (!since)
		return 0;
	/* Cleared before awake_ns grows, as user space sums the two. */
	WRITE_ONCE(*slot, 0);
	if (now > since)
		counter_add(&counters.awake_ns, now - since);
	return 0;
}

static __always_inline int handle_wakeup_request(void)
{
	counter_add(&counters.wakeup_requests, 1);
	stir_if_armed();
	return 0;
}

TP_FLAVOURS(kswapd_wake, vmscan, mm_vmscan_kswapd_wake, handle_kswapd_wake(nid),
	    struct trace_event_raw_mm_vmscan_kswapd_wake, handle_kswapd_wake(ctx->nid), int nid)
TP_FLAVOURS(kswapd_sleep, vmscan, mm_vmscan_kswapd_sleep, handle_kswapd_sleep(nid),
	    struct trace_event_raw_mm_vmscan_kswapd_sleep, handle_kswapd_sleep(ctx->nid), int nid)
TP_FLAVOURS(wakeup_kswapd, vmscan, mm_vmscan_wakeup_kswapd, handle_wakeup_request(), void, handle_wakeup_request())

char LICENSE[] SEC("license") = "GPL";
