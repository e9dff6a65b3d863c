// SPDX-License-Identifier: GPL-2.0
/* kswapd wakeups from vmscan:mm_vmscan_kswapd_wake, counted in the kernel. */
#include <linux/types.h>
#include <errno.h>
#include "bpf_attach.h"
#include "collector.h"
#include "kswapd.h"
#include "kswapd.skel.h"

DEFINE_BPF_SKEL_OPS(kswapd_bpf);

struct kswapd_state {
	struct bpf_attachment bpf;
};

static const struct bpf_hook kswapd_hooks[] = {
	{ "vmscan", "mm_vmscan_kswapd_wake", { "kswapd_wake_btf", "kswapd_wake_raw", "kswapd_wake_tp" } },
};

static const struct metric_desc desc_wakeups = {
	"memwatch_kswapd_wakeups_total", "Times a kswapd thread was woken to reclaim memory.", METRIC_COUNTER,
};

static int kswapd_probe(const void *cfg, struct collector_status *st)
{
	return bpf_hooks_probe(kswapd_hooks, ARRAY_SIZE(kswapd_hooks), st);
}

static int kswapd_start(void *priv, const void *cfg, struct collector_status *st)
{
	struct kswapd_state *s = priv;

	return bpf_attach_hooks(&s->bpf, &kswapd_bpf_skel_ops, kswapd_hooks, ARRAY_SIZE(kswapd_hooks),
				NULL, NULL, st);
}

static int kswapd_collect(void *priv, struct snapshot *snap)
{
	struct kswapd_state *s = priv;
	struct kswapd_bpf *skel = s->bpf.skel;
	__u64 wakeups = __atomic_load_n(&skel->bss->counters.wakeups, __ATOMIC_RELAXED);

	return snapshot_add(snap, &desc_wakeups, NULL, (double)wakeups);
}

static void kswapd_stop(void *priv)
{
	struct kswapd_state *s = priv;

	bpf_attachment_destroy(&s->bpf);
}

const struct collector_ops kswapd_collector = {
	.name = "kswapd",
	.summary = "kswapd wakeups counted in the kernel on vmscan:mm_vmscan_kswapd_wake",
	.default_enabled = true,
	.priv_size = sizeof(struct kswapd_state),
	.probe = kswapd_probe,
	.start = kswapd_start,
	.collect = kswapd_collect,
	.stop = kswapd_stop,
};
