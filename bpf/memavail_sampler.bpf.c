// SPDX-License-Identifier: GPL-2.0
/* Available memory every sample interval without waking user space: a
 * program computes it from the kernel's counters (memavail_counters.bpf.h),
 * appends it to a ring in .bss that user space reads once a window, and
 * leaves it in the shared memavail map for the pressure programs. Two ways
 * to run it every interval: sample_on_clock, attached to a cpu-clock perf
 * event of one CPU, whose hrtimer restarts itself in hard irq; or, where
 * perf_event_open is refused, a bpf_timer armed once by arm_sampler, whose
 * callback runs in softirq and re-arms it each time (about 3 us more a
 * sample here). Either way the node is found once, by compute_now run in the
 * daemon's context, not from whichever task the sample interrupts. Needs
 * syscall programs (5.14) to check the computation; user space samples
 * /proc/meminfo itself where this does not load. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "memavail.bpf.h"
#include "stir.bpf.h"

#define CLOCK_MONOTONIC 1

struct sampler_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sampler_timer);
} sampler_timer SEC(".maps");

/* Written by user space: 0 stops the timer at its next expiry. */
__u64 interval_ns = 0;

/* Read by user space (mmapped). */
struct memavail_sample samples[MEMAVAIL_SAMPLES] = {};
__u64 samples_head = 0;
__u64 callback_ns = 0; /* time spent sampling, in irq or softirq: no task is charged for it */
__s64 last_error = 0;  /* the last failed computation (enum memavail_calc_error), or a bpf_timer error */
__s64 armed = 0;       /* 1 once armed; negative: why arming failed */
__u64 now_pages = 0;   /* compute_now's answer */
__s64 now_error = 0;

/* Whether memory moved since user space last read /proc/meminfo: it writes
 * that read's free, file and dirty pages here and zeroes moved_pages; every
 * sample raises moved_pages to its largest distance from them since. */
__u64 mark_free_pages = 0;
__u64 mark_file_pages = 0;
__u64 mark_dirty_pages = 0;
__u64 moved_pages = 0;
/* Available memory moves with the reserve too (watermarks), which none of
 * them shows: measured from the first sample after the mark, as the
 * computation is not MemAvailable to the page. User space zeroes base_taken. */
__u64 base_available_pages = 0;
__u64 base_taken = 0;
/* Set by user space while a window goes on: moving further than this ends it. */
__u64 stir_above_pages = 0;
/* Written by user space: MemTotal in pages where it is more than the zones
 * manage (a kernel that initialises memory lazily counts pages no zone
 * manages yet in MemTotal and MemFree, and so in MemAvailable); 0 elsewhere. */
__u64 memtotal_pages = 0;

static __always_inline __u64 distance(__u64 a, __u64 b)
{
	return a > b ? a - b : b - a;
}

static __always_inline void note_movement(const struct memavail_calc *c)
{
	__u64 d = distance(c->free_pages, mark_free_pages), file = distance(c->file_pages, mark_file_pages);
	__u64 dirty = distance(c->dirty_pages, mark_dirty_pages);

	if (file > d)
		d = file;
	if (dirty > d)
		d = dirty;
	if (d > moved_pages)
		moved_pages = d;
}

static __always_inline void note_available(__u64 pages)
{
	__u64 d;

	if (!base_taken) {
		base_available_pages = pages;
		base_taken = 1;
		return;
	}
	d = distance(pages, base_available_pages);
	if (d > moved_pages)
		moved_pages = d;
}

/* A zone's node without reading zone->zone_pgdat: zones sit in their node's
 * pglist_data at node_zones[zone_idx], and the zoneref gives the index. */
static __always_inline __u64 zone_node(const struct zone *zone, const char *zoneref)
{
	__u64 node_zones = bpf_core_field_offset(struct pglist_data, node_zones);
	__u64 zone_size = bpf_core_type_size(struct zone);
	int idx = -1;

	if (!bpf_core_field_exists(struct zoneref, zone_idx))
		return (__u64)BPF_CORE_READ(zone, zone_pgdat);
	bpf_probe_read_kernel(&idx, sizeof(idx), zoneref + bpf_core_field_offset(struct zoneref, zone_idx));
	if (idx < 0 || idx >= bpf_core_enum_value(enum zone_type, __MAX_NR_ZONES))
		return (__u64)BPF_CORE_READ(zone, zone_pgdat);
	return (__u64)zone - node_zones - (__u64)idx * zone_size;
}

/* memavail_compute() for the sampler, which runs every sample interval on
 * cold caches, where each cache line read costs about as much as the rest of
 * the computation: the same counters, with each zone's node found from its
 * place (zone_node) instead of read, and, where user space found MemTotal
 * beyond what the zones manage (memtotal: a kernel that initialises memory
 * lazily counts pages no zone manages yet in MemTotal and MemFree), the
 * zones' managed pages summed in the same walk and the difference counted
 * free, one for one in available memory as in si_mem_available(). Global, so
 * that the verifier checks it once, on its own. */
__noinline __s64 sample_available(__u64 memtotal, __u64 wmark_low_fallback)
{
	__u64 managed_at = bpf_core_field_offset(struct zone, managed_pages);
	bool own_watermarks = memavail_own_watermarks();
	const struct pglist_data *first = NULL;
	struct memavail_calc *c = NULL;
	__u64 last = 0, managed = 0;
	__u32 i;

	if (memavail_calc_start(&c, &first))
		return -(c ? c->error : MEMAVAIL_CALC_NO_LAYOUT);
	for (i = 0; i < MEMAVAIL_MAX_ZONEREFS; i++) {
		const char *zoneref = memavail_zoneref(first, i);
		const struct zone *zone = memavail_zoneref_zone(zoneref);
		__s64 v;

		if (!zone)
			break;
		memavail_add_zone_of(c, zone, zone_node(zone, zoneref), &last, own_watermarks);
		if (memtotal) {
			v = read_atomic_long(zone, managed_at);
			managed += v > 0 ? v : 0;
		}
	}
	if (memavail_walk_end(c, i, own_watermarks, wmark_low_fallback))
		return -c->error;
	if (memtotal > managed && managed)
		c->free_pages += memtotal - managed;
	return memavail_finish(c, 0);
}

/* MemAvailable with the kernel's own total reserve (pgdat->totalreserve_pages
 * summed as the zones are walked): compute with none, then take it off. */
static __always_inline __s64 compute_available(bool track_movement)
{
	__u32 zero = 0;
	struct memavail_latest *m = bpf_map_lookup_elem(&memavail, &zero);
	struct memavail_calc *c;
	__s64 pages;

	pages = sample_available(memtotal_pages, m ? m->wmark_low_pages : 0);
	if (pages < 0)
		return pages;
	c = bpf_map_lookup_elem(&memavail_scratch, &zero);
	if (!c)
		return -MEMAVAIL_CALC_NO_LAYOUT;
	if (track_movement)
		note_movement(c);
	return pages > (__s64)c->kernel_reserve_pages ? pages - (__s64)c->kernel_reserve_pages : 0;
}

static __always_inline void take_sample(__u64 start)
{
	struct memavail_sample *slot;
	struct memavail_latest *m;
	__u32 zero = 0;
	__s64 pages;

	pages = compute_available(true);
	if (pages < 0) {
		last_error = -pages;
		return;
	}
	slot = &samples[samples_head & (MEMAVAIL_SAMPLES - 1)];
	slot->ts_ns = start;
	slot->pages = pages;
	note_available(pages);
	if (stir_above_pages && moved_pages > stir_above_pages) {
		stir_above_pages = 0;
		stir_daemon();
	}
	/* A full barrier: the slot is written before the head moves. */
	__sync_fetch_and_add(&samples_head, 1);
	m = bpf_map_lookup_elem(&memavail, &zero);
	if (m) {
		m->sampled_pages = pages;
		m->sampled_ts_ns = start;
	}
}

SEC("perf_event")
int sample_on_clock(struct bpf_perf_event_data *ctx)
{
	__u64 start = bpf_ktime_get_ns();

	take_sample(start);
	callback_ns += bpf_ktime_get_ns() - start;
	return 0;
}

static int sample(void *map, __u32 *key, struct sampler_timer *t)
{
	__u64 start = bpf_ktime_get_ns(), interval = interval_ns;

	take_sample(start);
	if (interval) {
		long r = bpf_timer_start(&t->timer, interval, 0);

		if (r)
			last_error = r;
	}
	callback_ns += bpf_ktime_get_ns() - start;
	return 0;
}

SEC("?syscall")
int arm_sampler(void *ctx)
{
	__u32 zero = 0;
	struct sampler_timer *t = bpf_map_lookup_elem(&sampler_timer, &zero);
	long r;

	if (!t || armed)
		return 0;
	if (!memavail_find_pgdat()) {
		armed = -MEMAVAIL_CALC_NO_NODE;
		return 0;
	}
	r = bpf_timer_init(&t->timer, &sampler_timer, CLOCK_MONOTONIC);
	if (!r)
		r = bpf_timer_set_callback(&t->timer, sample);
	if (!r)
		r = bpf_timer_start(&t->timer, interval_ns, 0);
	armed = r ? r : 1;
	return 0;
}

/* One computation now, for user space to hold against /proc/meminfo. */
SEC("?syscall")
int compute_now(void *ctx)
{
	__s64 pages = compute_available(false);

	if (pages >= 0) {
		now_pages = pages;
		now_error = 0;
	} else {
		now_error = -pages;
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
