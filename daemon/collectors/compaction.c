// SPDX-License-Identifier: GPL-2.0
/* Direct compaction stalls, timed per thread in the kernel (bpf/compaction.bpf.c),
 * and zone compactions by who ran them: an allocating task, kcompactd, or a
 * write to compact_memory. fentry/fexit on try_to_compact_pages() where the
 * kernel allows it (exact: its duration and its result); the compaction
 * tracepoints otherwise. /proc/vmstat compact_stall (the alloc collector's
 * memwatch_compaction_kernel_stalls_total) counts the same stalls. */
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "bpf_attach.h"
#include "clock.h"
#include "collector.h"
#include "compaction.h"
#include "compaction.skel.h"
#include "config.h"

DEFINE_BPF_SKEL_OPS(compaction_bpf);

/* As in reclaim.c: the first exported bucket is 2^10 ns. */
#define FIRST_EXPORTED_SLOT 10
_Static_assert(LATENCY_CLASSIC_SLOTS - FIRST_EXPORTED_SLOT == RECLAIM_SECONDS_BOUNDS + 1,
	       "the catalogue's stall buckets are the exported slots but the last");
/* Entries of the exemplars' id -> path table (shared with reclaim's, if on the same root). */
#define EXEMPLAR_CGROUPS 4096

enum compaction_method { METHOD_AUTO, METHOD_FEXIT, METHOD_TRACEPOINT };

struct compaction_config {
	int flavour;
	int method;
};

struct compaction_state {
	struct bpf_attachment bpf;
	struct bpf_link *fexit_links[2];
	struct compaction_config cfg;
	struct collector_cgroup_table exemplar_cgroups; /* none: exemplars without a cgroup */
};

/* With fexit the tracepoints only time the zone runs. */
static const struct bpf_hook run_hooks[] = {
	{ "compaction", "mm_compaction_begin", BPF_HOOK_PROGS(compaction_bpf, run_begin) },
	{ "compaction", "mm_compaction_end", BPF_HOOK_PROGS(compaction_bpf, run_end) },
};

static const struct bpf_hook stall_hooks[] = {
	{ "compaction", "mm_compaction_begin", BPF_HOOK_PROGS(compaction_bpf, run_begin) },
	{ "compaction", "mm_compaction_end", BPF_HOOK_PROGS(compaction_bpf, run_end) },
	{ "compaction", "mm_compaction_try_to_compact_pages", BPF_HOOK_PROGS(compaction_bpf, stall_begin) },
	{ "compaction", "mm_compaction_deferred", BPF_HOOK_PROGS(compaction_bpf, zone_deferred) },
	{ "compaction", "mm_compaction_defer_reset", BPF_HOOK_PROGS(compaction_bpf, defer_reset) },
	/* Only close a stall sooner (into the histogram); the count needs neither. */
	{ "vmscan", "mm_vmscan_direct_reclaim_begin", BPF_HOOK_PROGS(compaction_bpf, reclaim_begin),
	  .optional = true },
	{ "sched", "sched_process_exit", BPF_HOOK_PROGS(compaction_bpf, thread_exit), .optional = true },
};

static const char *const task_names[COMPACTION_TASKS] = {
	[COMPACTION_TASK_DIRECT] = "direct",
	[COMPACTION_TASK_KCOMPACTD] = "kcompactd",
	[COMPACTION_TASK_MANUAL] = "manual",
};

static const struct config_choice method_choices[] = {
	{ "auto", METHOD_AUTO },
	{ "fexit", METHOD_FEXIT },
	{ "tracepoint", METHOD_TRACEPOINT },
	{ NULL, 0 },
};

static const struct collector_key compaction_keys[] = {
	{ BPF_ATTACH_KEY(struct compaction_config, flavour), "auto" },
	{ CONFIG_KEY_CHOICE("method", struct compaction_config, method, method_choices), "auto" },
};

static int compaction_probe(const void *cfg, const struct collector_context *ctx, struct collector_status *st)
{
	/* The run hooks are in both methods; the tracepoint method's others are checked at start. */
	return bpf_hooks_probe(run_hooks, ARRAY_SIZE(run_hooks), st);
}

static int enable_fexit(void *skel, void *userdata)
{
	struct compaction_bpf *obj = skel;

	bpf_program__set_autoload(obj->progs.try_to_compact_pages_entry, true);
	bpf_program__set_autoload(obj->progs.try_to_compact_pages_exit, true);
	obj->rodata->stall_by_fexit = true;
	return 0;
}

static int attach_fexit(struct compaction_state *s)
{
	struct compaction_bpf *obj = s->bpf.skel;

	s->fexit_links[0] = bpf_program__attach(obj->progs.try_to_compact_pages_entry);
	if (!s->fexit_links[0])
		return -errno;
	s->fexit_links[1] = bpf_program__attach(obj->progs.try_to_compact_pages_exit);
	if (!s->fexit_links[1])
		return -errno;
	return 0;
}

static void destroy_fexit(struct compaction_state *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(s->fexit_links); i++) {
		bpf_link__destroy(s->fexit_links[i]);
		s->fexit_links[i] = NULL;
	}
}

static int start_fexit(struct compaction_state *s, struct collector_status *st)
{
	int r = bpf_program_loads_alone(&compaction_bpf_skel_ops,
					 offsetof(struct compaction_bpf, progs.try_to_compact_pages_exit));

	if (r < 0)
		return r;
	r = bpf_attach_hooks(&s->bpf, &compaction_bpf_skel_ops, run_hooks, ARRAY_SIZE(run_hooks), s->cfg.flavour,
			     enable_fexit, s, st);
	if (r == 0)
		r = attach_fexit(s);
	if (r < 0) {
		destroy_fexit(s);
		bpf_attachment_destroy(&s->bpf);
		return r;
	}
	snprintf(st->mode, sizeof(st->mode), "fexit");
	return 0;
}

static int start_stalls(struct compaction_state *s, struct collector_status *st)
{
	int r_fexit = -EOPNOTSUPP;

	if (s->cfg.method != METHOD_TRACEPOINT) {
		r_fexit = start_fexit(s, st);
		if (r_fexit == 0)
			return 0;
		if (s->cfg.method == METHOD_FEXIT) {
			collector_status_set_reason(st, "method = fexit: cannot attach to try_to_compact_pages (%s)",
						    strerror(-r_fexit));
			collector_status_note_bpf_error(st, r_fexit);
			return -EOPNOTSUPP;
		}
		log_info("Collector compaction: fexit on try_to_compact_pages unavailable (%s): stalls from the "
			 "compaction tracepoints", strerror(-r_fexit));
	}
	st->reason[0] = st->mode[0] = '\0';
	return bpf_attach_hooks(&s->bpf, &compaction_bpf_skel_ops, stall_hooks, ARRAY_SIZE(stall_hooks),
				s->cfg.flavour, NULL, NULL, st);
}

static int compaction_start(void *priv, const void *cfg, const struct collector_context *ctx,
			    struct collector_status *st)
{
	struct compaction_state *s = priv;
	int r;

	s->cfg = *(const struct compaction_config *)cfg;
	r = start_stalls(s, st);
	if (r < 0)
		return r;
	r = collector_cgroup_table_open(&s->exemplar_cgroups, ctx->cgroups, NULL, EXEMPLAR_CGROUPS);
	if (r < 0)
		log_info("Collector compaction: no memory cgroup hierarchy (%s): exemplars carry no cgroup",
			 strerror(-r));
	return 0;
}

static int compaction_collect(void *priv, struct snapshot *snap)
{
	struct compaction_state *s = priv;
	struct compaction_bpf *skel = s->bpf.skel;
	const struct compaction_counters *c = &skel->bss->counters;
	uint64_t now = now_mono_usec();
	struct latency_hist_source src = {
		.h = &c->stall,
		.first_slot = FIRST_EXPORTED_SLOT,
		.window = latency_hist_next_window(&skel->bss->exemplar_window),
		.now_mono_ns = now * 1000,
		.now_real_ns = now_real_usec() * 1000,
		.cgroup_path = exemplar_cgroup_path,
		.userdata = &s->exemplar_cgroups,
	};
	size_t i;

	/* Not the histogram's count: in the tracepoint method a stall is
	 * counted when it shows work, and timed only once it is seen over. */
	snapshot_add(snap, METRIC(MW_COMPACTION_STALLS_TOTAL), NULL,
		     (double)__atomic_load_n(&c->stalls, __ATOMIC_RELAXED));
	(void)latency_hist_export(snap, METRIC(MW_COMPACTION_STALL_SECONDS), NULL, &src, NULL);
	for (i = 0; i < COMPACTION_TASKS; i++) {
		const char *const labels[] = { task_names[i] };

		snapshot_add(snap, METRIC(MW_COMPACTION_RUNS_TOTAL), labels,
			     (double)__atomic_load_n(&c->runs[i], __ATOMIC_RELAXED));
		snapshot_add(snap, METRIC(MW_COMPACTION_RUN_SECONDS_TOTAL), labels,
			     (double)__atomic_load_n(&c->run_ns[i], __ATOMIC_RELAXED) * 1e-9);
	}
	return 0;
}

/* An attach naming the flavour already running applies in place; anything else needs new programs. */
static int compaction_reload(void *priv, const void *cfg)
{
	struct compaction_state *s = priv;
	const struct compaction_config *c = cfg;

	if (c->method != s->cfg.method || !bpf_attachment_serves(&s->bpf, s->cfg.flavour, c->flavour))
		return -EAGAIN;
	s->cfg = *c;
	return 0;
}

static void compaction_stop(void *priv)
{
	struct compaction_state *s = priv;

	destroy_fexit(s);
	bpf_attachment_destroy(&s->bpf);
	collector_cgroup_table_close(&s->exemplar_cgroups);
}

const struct collector_ops compaction_collector = {
	.name = "compaction",
	.summary = "direct compaction stalls timed in the kernel (fexit on try_to_compact_pages, else the compaction "
		   "tracepoints), zone compactions by task",
	.default_enabled = true,
	.config_size = sizeof(struct compaction_config),
	.keys = compaction_keys,
	.n_keys = ARRAY_SIZE(compaction_keys),
	.priv_size = sizeof(struct compaction_state),
	.probe = compaction_probe,
	.start = compaction_start,
	.collect = compaction_collect,
	.reload = compaction_reload,
	.stop = compaction_stop,
	.counts_from_start = true,
};
