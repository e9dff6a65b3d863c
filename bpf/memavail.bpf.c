// SPDX-License-Identifier: GPL-2.0
/* The kernel's own MemAvailable: catch every return of si_mem_available()
 * (fexit, or kretprobe where fexit is missing) and keep the latest value
 * where the pressure-event programs read it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "events.bpf.h"

static __always_inline int record(long pages)
{
	__u32 zero = 0;
	struct memavail_latest *m = bpf_map_lookup_elem(&memavail, &zero);

	if (!m)
		return 0;
	m->pages = pages > 0 ? pages : 0;
	m->ts_ns = bpf_ktime_get_ns();
	__sync_fetch_and_add(&m->calls, 1);
	return 0;
}

SEC("?fexit/si_mem_available")
int BPF_PROG(si_mem_available_exit, long ret)
{
	return record(ret);
}

SEC("?kretprobe/si_mem_available")
int BPF_KRETPROBE(si_mem_available_ret, long ret)
{
	return record(ret);
}

char LICENSE[] SEC("license") = "GPL";
