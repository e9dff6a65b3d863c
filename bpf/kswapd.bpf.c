// SPDX-License-Identifier: GPL-2.0
/* kswapd wakeups, counted on vmscan:mm_vmscan_kswapd_wake.
 * One handler, three attach flavours; user space autoloads exactly one. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memwatch.bpf.h"
#include "kswapd.h"

struct kswapd_counters counters = {};

static __always_inline int handle_kswapd_wake(void)
{
	counter_add(&counters.wakeups, 1);
	return 0;
}

SEC("?tp_btf/mm_vmscan_kswapd_wake")
int BPF_PROG(kswapd_wake_btf)
{
	return handle_kswapd_wake();
}

SEC("?raw_tp/mm_vmscan_kswapd_wake")
int BPF_PROG(kswapd_wake_raw)
{
	return handle_kswapd_wake();
}

SEC("?tracepoint/vmscan/mm_vmscan_kswapd_wake")
int kswapd_wake_tp(void *ctx)
{
	return handle_kswapd_wake();
}

char LICENSE[] SEC("license") = "GPL";
