// SPDX-License-Identifier: GPL-2.0
/* Pages allocated and freed, from /proc/vmstat: pgalloc_* (summed over the
 * zones) and pgfree, the counts the kernel keeps anyway. With trace = yes,
 * also page allocations and allocation failures per order, counted by a BPF
 * program on kmem:mm_page_alloc; pages allocated then come from those counts.
 * That program runs on every page allocation in the kernel (about 1 % of the
 * CPU of allocation-heavy work, docs/benchmarks.md), hence opt-in. Frees are
 * never traced: a second program on the free path would cost as much again
 * for a number the kernel keeps (see docs/metrics.md). */
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "events.h"
#include "alloc.h"
#include "alloc.skel.h"
#include "bpf_attach.h"
#include "collector.h"
#include "config.h"
#include "fileio.h"
#include "vmstat.h"

DEFINE_BPF_SKEL_OPS(alloc_bpf);

/* Orders exported as labels: 0..10 covers every buddy allocation on x86;
 * the clamp slot shows only if something larger ever appears. */
#define EXPORTED_ORDERS 11

struct alloc_config {
	int flavour;
	bool trace; /* the BPF program on kmem:mm_page_alloc: per-order counts and failures */
	char vmstat_path[256];
};

struct alloc_state {
	bool trace;
	int flavour;             /* the attach key it was started with */
	char vmstat_path[256];
	struct bpf_attachment bpf;
	struct collector_context ctx;
	struct vmstat_source *vmstat; /* NULL: not readable */
	int ncpus;
	struct alloc_counters *percpu;
	long page_size;
};

static const struct bpf_hook alloc_hooks[] = {
	{ "kmem", "mm_page_alloc", BPF_HOOK_PROGS(alloc_bpf, page_alloc) },
};

static const struct collector_key alloc_keys[] = {
	{ BPF_ATTACH_KEY(struct alloc_config, flavour), "auto" },
	{ CONFIG_KEY_BOOL("trace", struct alloc_config, trace), "no" },
	{ CONFIG_KEY_PATH("vmstat_path", struct alloc_config, vmstat_path), "/proc/vmstat" },
};

static int alloc_probe(const void *cfg, const struct collector_context *ctx, struct collector_status *st)
{
	const struct alloc_config *c = cfg;

	/* Without trace the tracepoint is not used at all. */
	if (!c->trace)
		return 0;
	return bpf_hooks_probe(alloc_hooks, ARRAY_SIZE(alloc_hooks), st);
}

static int join_event_channel(void *skel, void *userdata)
{
	struct alloc_bpf *obj = skel;
	const struct alloc_state *s = userdata;
	int r;

	r = event_channel_prepare(s->ctx.events, obj->maps.events, &obj->rodata->events_use_ringbuf);
	if (r == 0)
		r = bpf_shared_map_reuse(s->ctx.shared_maps, obj->maps.memavail);
	return r;
}

/* trace = no: nothing but /proc/vmstat, no BPF object opened at all. */
static int start_vmstat(struct alloc_state *s, const struct alloc_config *c, struct collector_status *st)
{
	int r;

	snprintf(st->mode, sizeof(st->mode), "vmstat");
	r = vmstat_source_open(s->ctx.vmstat, c->vmstat_path, &s->vmstat);
	if (r < 0) {
		collector_status_set_reason(st, "cannot open %s (%s): page allocations and frees are not reported",
					    c->vmstat_path, strerror(-r));
		return -ENOENT;
	}
	return 0;
}

static int alloc_start(void *priv, const void *cfg, const struct collector_context *ctx,
		       struct collector_status *st)
{
	const struct alloc_config *c = cfg;
	struct alloc_state *s = priv;
	int r;

	s->ctx = *ctx;
	s->trace = c->trace;
	s->flavour = c->flavour;
	snprintf(s->vmstat_path, sizeof(s->vmstat_path), "%s", c->vmstat_path);
	s->page_size = sysconf(_SC_PAGESIZE);
	if (!s->trace)
		return start_vmstat(s, c, st);
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0)
		return s->ncpus < 0 ? s->ncpus : -EINVAL;
	s->percpu = calloc((size_t)s->ncpus, sizeof(*s->percpu));
	if (!s->percpu)
		return -ENOMEM;
	r = bpf_attach_hooks(&s->bpf, &alloc_bpf_skel_ops, alloc_hooks, ARRAY_SIZE(alloc_hooks), c->flavour,
			     join_event_channel, s, st);
	if (r < 0)
		return r;
	event_channel_add_source(s->ctx.events, &((struct alloc_bpf *)s->bpf.skel)->bss->event_counters);
	if (vmstat_source_open(s->ctx.vmstat, c->vmstat_path, &s->vmstat) < 0) {
		st->state = COLLECTOR_DEGRADED;
		collector_status_set_reason(st, "cannot open %s: page frees are not reported", c->vmstat_path);
	}
	return 0;
}

/* Per-order counts from the BPF program's per-CPU counters; returns the pages they add up to. */
static int collect_traced(struct alloc_state *s, struct snapshot *snap, uint64_t *ret_pages)
{
	struct alloc_bpf *skel = s->bpf.skel;
	uint64_t allocs[ALLOC_ORDERS] = { 0 }, failures[ALLOC_ORDERS] = { 0 }, pages = 0;
	__u32 zero = 0;
	char order[8];
	int cpu, o, r;

	/* One syscall returns every CPU's copy. */
	r = bpf_map_lookup_elem(bpf_map__fd(skel->maps.counters), &zero, s->percpu);
	if (r < 0)
		return -errno;
	for (cpu = 0; cpu < s->ncpus; cpu++)
		for (o = 0; o < ALLOC_ORDERS; o++) {
			allocs[o] += s->percpu[cpu].allocs[o];
			failures[o] += s->percpu[cpu].failures[o];
		}
	for (o = 0; o < ALLOC_ORDERS; o++) {
		pages += allocs[o] << o;
		if (o >= EXPORTED_ORDERS && !allocs[o] && !failures[o])
			continue;
		snprintf(order, sizeof(order), "%d", o);
		snapshot_add(snap, METRIC(MW_PAGE_ALLOCATIONS_TOTAL), (const char *const[]){ order }, (double)allocs[o]);
		snapshot_add(snap, METRIC(MW_PAGE_ALLOCATION_FAILURES_TOTAL), (const char *const[]){ order }, (double)failures[o]);
	}
	*ret_pages = pages;
	return 0;
}

static void add_pages(const struct alloc_state *s, struct snapshot *snap, uint64_t pages)
{
	snapshot_add(snap, METRIC(MW_PAGE_ALLOCATED_PAGES_TOTAL), NULL, (double)pages);
	snapshot_add(snap, METRIC(MW_PAGE_ALLOCATED_BYTES_TOTAL), NULL, (double)pages * (double)s->page_size);
}

/* The allocator's slow path: direct compaction as the kernel counts it. */
static void put_compaction(struct snapshot *snap, const struct vmstat *vm)
{
	if (vm->present & VMSTAT_HAS_COMPACT_STALL)
		snapshot_add(snap, METRIC(MW_COMPACTION_KERNEL_STALLS_TOTAL), NULL, (double)vm->compact_stall);
	if (vm->present & VMSTAT_HAS_COMPACT_SUCCESS)
		snapshot_add(snap, METRIC(MW_COMPACTION_KERNEL_RESULTS_TOTAL), (const char *const[]){ "success" },
			     (double)vm->compact_success);
	if (vm->present & VMSTAT_HAS_COMPACT_FAIL)
		snapshot_add(snap, METRIC(MW_COMPACTION_KERNEL_RESULTS_TOTAL), (const char *const[]){ "fail" },
			     (double)vm->compact_fail);
	if (vm->present & VMSTAT_HAS_COMPACT_DAEMON_WAKE)
		snapshot_add(snap, METRIC(MW_KCOMPACTD_WAKEUPS_TOTAL), NULL, (double)vm->compact_daemon_wake);
}

static int alloc_collect(void *priv, struct snapshot *snap)
{
	struct alloc_state *s = priv;
	const struct vmstat *vm;
	uint64_t pages = 0;
	int r;

	if (s->trace) {
		r = collect_traced(s, snap, &pages);
		if (r < 0)
			return r;
		add_pages(s, snap, pages);
	}
	if (!s->vmstat)
		return 0;
	r = vmstat_source_get(s->vmstat, &vm);
	if (r < 0)
		return r;
	/* Without trace, pages allocated are the kernel's own count, summed over the zones. */
	if (!s->trace && (vm->present & VMSTAT_HAS_PGALLOC))
		add_pages(s, snap, vm->pgalloc);
	if (vm->present & VMSTAT_HAS_PGFREE)
		snapshot_add(snap, METRIC(MW_PAGE_FREES_TOTAL), NULL, (double)vm->pgfree);
	put_compaction(snap, vm);
	return 0;
}

/* A new vmstat_path is opened in place; trace or a new flavour need a new instance. */
static int alloc_reload(void *priv, const void *cfg)
{
	const struct alloc_config *c = cfg;
	struct alloc_state *s = priv;
	struct vmstat_source *fresh;

	if (c->trace != s->trace || (s->trace && !bpf_attachment_serves(&s->bpf, s->flavour, c->flavour)))
		return -EAGAIN;
	s->flavour = c->flavour;
	if (strcmp(c->vmstat_path, s->vmstat_path) == 0)
		return 0;
	if (vmstat_source_open(s->ctx.vmstat, c->vmstat_path, &fresh) < 0)
		return -EAGAIN; /* a new instance says why it cannot read it */
	vmstat_source_unref(s->vmstat);
	s->vmstat = fresh;
	snprintf(s->vmstat_path, sizeof(s->vmstat_path), "%s", c->vmstat_path);
	return 0;
}

static void alloc_stop(void *priv)
{
	struct alloc_state *s = priv;

	if (s->bpf.skel)
		event_channel_remove_source(s->ctx.events, &((struct alloc_bpf *)s->bpf.skel)->bss->event_counters);
	bpf_attachment_destroy(&s->bpf);
	vmstat_source_unref(s->vmstat);
	free(s->percpu);
}

const struct collector_ops alloc_collector = {
	.name = "alloc",
	.summary = "pages allocated (pgalloc_*) and freed (pgfree) from /proc/vmstat; with trace = yes, allocations and "
		   "failures per order from BPF on kmem:mm_page_alloc",
	.default_enabled = true,
	.config_size = sizeof(struct alloc_config),
	.keys = alloc_keys,
	.n_keys = ARRAY_SIZE(alloc_keys),
	.priv_size = sizeof(struct alloc_state),
	.probe = alloc_probe,
	.start = alloc_start,
	.collect = alloc_collect,
	.reload = alloc_reload,
	.stop = alloc_stop,
};
