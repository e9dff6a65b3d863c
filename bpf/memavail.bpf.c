// SPDX-License-Identifier: GPL-2.0
/* The kernel's own MemAvailable: catch every return of si_mem_available()
 * (fexit, or kretprobe where fexit is missing) and keep the latest value
 * where the pressure-event programs read it. Where neither attaches, the
 * pressure programs compute it from the kernel's counters
 * (memavail_counters.bpf.h); the programs below let user space run that
 * computation on demand and learn when the watermarks change. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memwatch.bpf.h"
#include "memavail.bpf.h"

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

/* Run by user space (BPF_PROG_TEST_RUN) to validate and monitor the counters method. */
struct memavail_calc calc_now = {};

SEC("?raw_tp")
int memavail_compute_now(void *ctx)
{
	__u32 zero = 0;
	struct memavail_latest *m = bpf_map_lookup_elem(&memavail, &zero);

	struct memavail_calc *c;

	if (!m)
		return 0;
	memavail_compute(m->totalreserve_pages, m->wmark_low_pages);
	c = bpf_map_lookup_elem(&memavail_scratch, &zero);
	if (c)
		calc_now = *c;
	return 0;
}

/* The watermarks, and with them totalreserve_pages, were set up again
 * (min_free_kbytes, watermark_scale_factor, memory hotplug). */
__u64 wmark_setups = 0;

static __always_inline int count_wmark_setup(void)
{
	__sync_fetch_and_add(&wmark_setups, 1);
	return 0;
}

TP_FLAVOURS(wmarks_setup, kmem, mm_setup_per_zone_wmarks, count_wmark_setup(), void, count_wmark_setup())

char LICENSE[] SEC("license") = "GPL";
