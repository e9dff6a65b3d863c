// SPDX-License-Identifier: GPL-2.0
/* OOM kills on oom:mark_victim: counted in the kernel, detailed through the
 * event channel (victim pid, comm, memory cgroup, available memory). */
#include <linux/types.h>
#include <errno.h>
#include <string.h>
#include "bpf_attach.h"
#include "collector.h"
#include "event_channel.h"
#include "events.h"
#include "oom.skel.h"

DEFINE_BPF_SKEL_OPS(oom_bpf);

struct oom_config {
	int flavour;
};

struct oom_state {
	struct bpf_attachment bpf;
	int flavour; /* the attach key it was started with */
};

static const struct bpf_hook oom_hooks[] = {
	{ "oom", "mark_victim", BPF_HOOK_PROGS(oom_bpf, mark_victim) },
};

static const struct metric_desc desc_kills = {
	"memwatch_oom_kills_total", "Processes chosen and killed by the OOM killer (global and memory cgroup).",
	METRIC_COUNTER,
};
static const struct metric_desc desc_cgroup_kills = {
	"memwatch_cgroup_oom_kills_total", "OOM kills by the victim's memory cgroup (path below the hierarchy root).",
	METRIC_COUNTER, 1, { "cgroup" },
};
static const struct metric_desc desc_last = {
	"memwatch_last_oom_kill_timestamp_seconds", "Wall-clock time of the last OOM kill seen since the daemon started.",
	METRIC_GAUGE,
};

/* Kernels before the change pass mark_victim(int pid); newer ones
 * mark_victim(struct task_struct *task, uid_t uid). The BTF typedef says which. */
static bool mark_victim_passes_task(void)
{
	const struct btf *btf = bpf_vmlinux_btf();
	const struct btf_type *t;
	const struct btf_param *params;
	__s32 id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "btf_trace_mark_victim", BTF_KIND_TYPEDEF);
	if (id < 0)
		return false;
	t = btf__type_by_id(btf, btf__resolve_type(btf, (__u32)id));
	if (!t || !btf_is_ptr(t))
		return false;
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 2)
		return false;
	params = btf_params(t);
	/* params[0] is the tracepoint's void *data; params[1] is the victim. */
	t = btf__type_by_id(btf, btf__resolve_type(btf, params[1].type));
	return t && btf_is_ptr(t);
}

static int prepare(void *skel, void *userdata)
{
	struct oom_bpf *obj = skel;

	obj->rodata->victim_is_task = mark_victim_passes_task();
	return event_channel_prepare_object(obj->obj, &obj->rodata->events_use_ringbuf);
}

static void oom_config_defaults(void *cfg)
{
	((struct oom_config *)cfg)->flavour = -1;
}

static int oom_configure(void *cfg, const char *key, const char *value, char *errmsg, size_t errlen)
{
	if (strcmp(key, "attach") == 0)
		return bpf_parse_attach_key(value, &((struct oom_config *)cfg)->flavour, errmsg, errlen);
	return -ENOENT;
}

static int oom_probe(const void *cfg, struct collector_status *st)
{
	return bpf_hooks_probe(oom_hooks, ARRAY_SIZE(oom_hooks), st);
}

static int oom_start(void *priv, const void *cfg, struct collector_status *st)
{
	struct oom_state *s = priv;
	int r;

	s->flavour = ((const struct oom_config *)cfg)->flavour;
	r = bpf_attach_hooks(&s->bpf, &oom_bpf_skel_ops, oom_hooks, ARRAY_SIZE(oom_hooks), s->flavour, prepare, NULL,
			     st);
	if (r < 0)
		return r;
	event_channel_add_source(&((struct oom_bpf *)s->bpf.skel)->bss->event_counters);
	return 0;
}

/* Only the attach key: in place when the running program already is what it names. */
static int oom_reload(void *priv, const void *cfg)
{
	struct oom_state *s = priv;
	int flavour = ((const struct oom_config *)cfg)->flavour;

	if (!bpf_attachment_serves(&s->bpf, s->flavour, flavour))
		return -EAGAIN;
	s->flavour = flavour;
	return 0;
}

static void put_cgroup(const char *cgroup, uint64_t kills, void *ud)
{
	snapshot_add(ud, &desc_cgroup_kills, (const char *const[]){ cgroup }, (double)kills);
}

static int oom_collect(void *priv, struct snapshot *snap)
{
	struct oom_state *s = priv;
	struct oom_bpf *skel = s->bpf.skel;
	uint64_t last = event_channel_last_oom_real_usec();

	snapshot_add(snap, &desc_kills, NULL, (double)__atomic_load_n(&skel->bss->oom_kills, __ATOMIC_RELAXED));
	event_channel_foreach_oom_cgroup(put_cgroup, snap);
	if (last)
		snapshot_add(snap, &desc_last, NULL, (double)last / 1e6);
	return 0;
}

static void oom_stop(void *priv)
{
	struct oom_state *s = priv;

	if (s->bpf.skel)
		event_channel_remove_source(&((struct oom_bpf *)s->bpf.skel)->bss->event_counters);
	bpf_attachment_destroy(&s->bpf);
}

const struct collector_ops oom_collector = {
	.name = "oom",
	.summary = "OOM kills on oom:mark_victim, with victim, cgroup and available memory in /api/v1/events",
	.default_enabled = true,
	.config_size = sizeof(struct oom_config),
	.config_defaults = oom_config_defaults,
	.configure = oom_configure,
	.priv_size = sizeof(struct oom_state),
	.probe = oom_probe,
	.start = oom_start,
	.collect = oom_collect,
	.reload = oom_reload,
	.stop = oom_stop,
};
