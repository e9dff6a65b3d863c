// SPDX-License-Identifier: GPL-2.0
/* kswapd wakeups, wake requests and awake time, counted in the kernel on the vmscan tracepoints. */
#include <linux/types.h>
#include <errno.h>
#include <string.h>
#include "bpf_attach.h"
#include "clock.h"
#include "collector.h"
#include "kswapd.h"
#include "kswapd.skel.h"

DEFINE_BPF_SKEL_OPS(kswapd_bpf);

struct kswapd_config {
	int flavour;
};

struct kswapd_state {
	struct bpf_attachment bpf;
	int flavour; /* the attach key it was started with */
	__u64 last_awake_ns;
	__u64 wakes_collected; /* wakeups + wakeup_requests at the last collect */
	bool stirs;            /* its stir map is the shared one */
	struct bpf_shared_maps *shared_maps;
};

static const struct bpf_hook kswapd_hooks[] = {
	{ "vmscan", "mm_vmscan_kswapd_wake", BPF_HOOK_PROGS(kswapd_bpf, kswapd_wake) },
	{ "vmscan", "mm_vmscan_kswapd_sleep", BPF_HOOK_PROGS(kswapd_bpf, kswapd_sleep),
	  .optional = true },
	{ "vmscan", "mm_vmscan_wakeup_kswapd", BPF_HOOK_PROGS(kswapd_bpf, wakeup_kswapd),
	  .optional = true },
};

static const struct collector_key kswapd_keys[] = {
	{ BPF_ATTACH_KEY(struct kswapd_config, flavour), "auto" },
};

static int kswapd_probe(const void *cfg, const struct collector_context *ctx, struct collector_status *st)
{
	return bpf_hooks_probe(kswapd_hooks, ARRAY_SIZE(kswapd_hooks), st);
}

static int share_stir(void *skel, void *userdata)
{
	struct kswapd_state *s = userdata;

	s->stirs = bpf_shared_map_join(s->shared_maps, ((struct kswapd_bpf *)skel)->maps.stir);
	return 0;
}

static int kswapd_start(void *priv, const void *cfg, const struct collector_context *ctx,
			struct collector_status *st)
{
	struct kswapd_state *s = priv;

	s->flavour = ((const struct kswapd_config *)cfg)->flavour;
	s->shared_maps = ctx->shared_maps;
	return bpf_attach_hooks(&s->bpf, &kswapd_bpf_skel_ops, kswapd_hooks, ARRAY_SIZE(kswapd_hooks), s->flavour,
				share_stir, s, st);
}

/* Only the attach key: in place when the running programs already are what it names. */
static int kswapd_reload(void *priv, const void *cfg)
{
	struct kswapd_state *s = priv;
	int flavour = ((const struct kswapd_config *)cfg)->flavour;

	if (!bpf_attachment_serves(&s->bpf, s->flavour, flavour))
		return -EAGAIN;
	s->flavour = flavour;
	return 0;
}

static __u64 wakes(const struct kswapd_counters *c)
{
	return __atomic_load_n(&c->wakeups, __ATOMIC_RELAXED) + __atomic_load_n(&c->wakeup_requests, __ATOMIC_RELAXED);
}

static bool kswapd_busy(void *priv)
{
	struct kswapd_state *s = priv;

	return wakes(&((struct kswapd_bpf *)s->bpf.skel)->bss->counters) != s->wakes_collected;
}

static bool kswapd_watch(void *priv, bool on)
{
	struct kswapd_state *s = priv;

	__atomic_store_n(&((struct kswapd_bpf *)s->bpf.skel)->bss->stir_armed, on, __ATOMIC_SEQ_CST);
	/* A wake before the arming stirred nothing. */
	return s->stirs && !(on && kswapd_busy(s));
}

static int kswapd_collect(void *priv, struct snapshot *snap)
{
	struct kswapd_state *s = priv;
	struct kswapd_counters *c = &((struct kswapd_bpf *)s->bpf.skel)->bss->counters;
	__u64 now_ns = (__u64)now_mono_usec() * 1000, awake_ns;
	size_t nid;

	s->wakes_collected = wakes(c);

	snapshot_add(snap, METRIC(MW_KSWAPD_WAKEUPS_TOTAL), NULL, (double)__atomic_load_n(&c->wakeups, __ATOMIC_RELAXED));
	if (s->bpf.hook_present[2])
		snapshot_add(snap, METRIC(MW_KSWAPD_WAKEUP_REQUESTS_TOTAL), NULL,
			     (double)__atomic_load_n(&c->wakeup_requests, __ATOMIC_RELAXED));
	if (!s->bpf.hook_present[1])
		return 0;
	/* A kswapd busy for minutes must show before it sleeps, so open stretches
	 * count too. One closing between the two reads can be counted twice for
	 * a window; the clamp keeps the counter from going backwards after it. */
	awake_ns = 0;
	for (nid = 0; nid < KSWAPD_MAX_NODES; nid++) {
		__u64 since = __atomic_load_n(&c->awake_since_ns[nid], __ATOMIC_ACQUIRE);

		if (since && now_ns > since)
			awake_ns += now_ns - since;
	}
	awake_ns += __atomic_load_n(&c->awake_ns, __ATOMIC_ACQUIRE);
	if (awake_ns < s->last_awake_ns)
		awake_ns = s->last_awake_ns;
	s->last_awake_ns = awake_ns;
	return snapshot_add(snap, METRIC(MW_KSWAPD_AWAKE_SECONDS_TOTAL), NULL, (double)awake_ns / 1e9);
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
	.config_size = sizeof(struct kswapd_config),
	.keys = kswapd_keys,
	.n_keys = ARRAY_SIZE(kswapd_keys),
	.priv_size = sizeof(struct kswapd_state),
	.probe = kswapd_probe,
	.start = kswapd_start,
	.busy = kswapd_busy,
	.watch = kswapd_watch,
	.collect = kswapd_collect,
	.reload = kswapd_reload,
	.stop = kswapd_stop,
	.counts_from_start = true,
};
