// SPDX-License-Identifier: GPL-2.0
/* OOM kills on oom:mark_victim: counted in the kernel, detailed through the
 * event channel (victim pid, comm, memory cgroup, available memory). Each
 * kill event also counts in a table by the victim's cgroup, kept here with
 * the workload's names as they were at the kill (the cgroup, and kubelet's
 * directories of its pod, go soon after), and for series_ttl after the
 * cgroup is removed. */
#include <linux/types.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpf_attach.h"
#include "cgroup_hierarchy.h"
#include "cgroup_names.h"
#include "collector.h"
#include "core.h"
#include "event_channel.h"
#include "events.h"
#include "fileio.h"
#include "log.h"
#include "oom.skel.h"

DEFINE_BPF_SKEL_OPS(oom_bpf);

#define MAX_OOM_CGROUPS 512

#define UNKNOWN_CGROUP "unknown"

struct oom_config {
	int flavour;
	uint64_t series_ttl_msec;
};

struct oom_cgroup {
	char path[256];
	struct cgroup_labels names; /* resolved at the first kill, never changed: the series keeps its labels */
	uint64_t kills;
	uint64_t removed_since_usec; /* 0: the cgroup is there (or was at the last look) */
};

/* Filled by the event channel's consumer thread, read by collect: under lock. */
struct oom_table {
	pthread_mutex_t lock;
	struct cgroup_names *names; /* the core's; NULL: the path's names only */
	struct oom_cgroup cgroups[MAX_OOM_CGROUPS];
	size_t n_cgroups;
	uint64_t folded; /* kills in cgroups beyond the table: "other" */
	uint64_t last_real_usec;
};

struct oom_state {
	struct bpf_attachment bpf;
	struct collector_context ctx;
	int flavour; /* the attach key it was started with */
	uint64_t series_ttl_msec;
	bool subscribed;
	struct oom_table *table; /* its own allocation: its mutex never moves */
};

static const struct bpf_hook oom_hooks[] = {
	{ "oom", "mark_victim", BPF_HOOK_PROGS(oom_bpf, mark_victim) },
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
	const struct oom_state *s = userdata;
	int r;

	obj->rodata->victim_is_task = mark_victim_passes_task();
	r = event_channel_prepare(s->ctx.events, obj->maps.events, &obj->rodata->events_use_ringbuf);
	if (r == 0)
		r = bpf_shared_map_reuse(s->ctx.shared_maps, obj->maps.memavail);
	return r;
}

static void note_cgroup(struct oom_table *t, const char *path, const struct cgroup_labels *names)
{
	struct oom_cgroup *c;
	size_t i;

	for (i = 0; i < t->n_cgroups; i++)
		if (strcmp(t->cgroups[i].path, path) == 0) {
			t->cgroups[i].kills++;
			t->cgroups[i].removed_since_usec = 0;
			return;
		}
	if (t->n_cgroups == MAX_OOM_CGROUPS) {
		t->folded++;
		return;
	}
	c = &t->cgroups[t->n_cgroups++];
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->names = *names;
	c->kills = 1;
	c->removed_since_usec = 0;
}

/* On the event channel's consumer thread, for each OOM kill event. */
static void on_oom_kill(void *userdata, const struct memwatch_event *raw, struct event_record *rec)
{
	struct oom_table *t = userdata;
	struct cgroup_labels names;

	if (!rec->comm[0] && rec->pid) {
		/* Old kernels pass only the pid: the victim is usually still there. */
		char p[64], *text = NULL;

		snprintf(p, sizeof(p), "/proc/%u/comm", rec->pid);
		if (read_full_file(p, 64, &text, NULL) == 0) {
			snprintf(rec->comm, sizeof(rec->comm), "%.*s", (int)strcspn(text, "\n"), text);
			free(text);
		}
	}
	/* Now, while the victim's cgroup and its pod's directories still exist:
	 * the kill ends the container, and kubelet then removes both. */
	if (rec->cgroup[0])
		cgroup_names_resolve_event(t->names, rec->cgroup, now_mono_usec(), &names);
	else
		names = (struct cgroup_labels){ .unit = "" };
	pthread_mutex_lock(&t->lock);
	note_cgroup(t, rec->cgroup[0] ? rec->cgroup : UNKNOWN_CGROUP, &names);
	t->last_real_usec = rec->real_usec;
	pthread_mutex_unlock(&t->lock);
	log_notice("OOM kill: pid %u (%s) in cgroup %s", rec->pid, rec->comm, rec->cgroup[0] ? rec->cgroup : "?");
}

static void oom_config_defaults(void *cfg)
{
	*(struct oom_config *)cfg = (struct oom_config){ .flavour = -1, .series_ttl_msec = 300000 };
}

static const struct config_key oom_keys[] = {
	BPF_ATTACH_KEY(struct oom_config, flavour),
	CONFIG_KEY_DURATION("series_ttl", struct oom_config, series_ttl_msec, 0, 86400000),
};

static int oom_configure(void *cfg, const char *key, const char *value, char *errmsg, size_t errlen)
{
	return config_key_apply(oom_keys, ARRAY_SIZE(oom_keys), cfg, key, value, errmsg, errlen);
}

static int oom_probe(const void *cfg, const struct collector_context *ctx, struct collector_status *st)
{
	return bpf_hooks_probe(oom_hooks, ARRAY_SIZE(oom_hooks), st);
}

static int oom_start(void *priv, const void *cfg, const struct collector_context *ctx,
		     struct collector_status *st)
{
	struct oom_state *s = priv;
	int r;

	s->flavour = ((const struct oom_config *)cfg)->flavour;
	s->series_ttl_msec = ((const struct oom_config *)cfg)->series_ttl_msec;
	s->ctx = *ctx;
	s->table = calloc(1, sizeof(*s->table));
	if (!s->table)
		return -ENOMEM;
	pthread_mutex_init(&s->table->lock, NULL);
	s->table->names = ctx->names;
	r = event_channel_subscribe(s->ctx.events, EVENT_KIND_BIT(EVENT_OOM_KILL), on_oom_kill, s->table);
	if (r < 0)
		return r;
	s->subscribed = true;
	r = bpf_attach_hooks(&s->bpf, &oom_bpf_skel_ops, oom_hooks, ARRAY_SIZE(oom_hooks), s->flavour, prepare, s,
			     st);
	if (r < 0)
		return r;
	event_channel_add_source(s->ctx.events, &((struct oom_bpf *)s->bpf.skel)->bss->event_counters);
	return 0;
}

/* A restart: the kills by cgroup so far, and the last one's time, stay. */
static void oom_takeover(void *new_priv, void *old_priv)
{
	struct oom_table *to = ((struct oom_state *)new_priv)->table, *from = ((struct oom_state *)old_priv)->table;

	if (!to || !from)
		return;
	/* The old one still counts until it stops, so its table has every kill
	 * the new one saw so far: take it whole. */
	pthread_mutex_lock(&from->lock);
	pthread_mutex_lock(&to->lock);
	memcpy(to->cgroups, from->cgroups, from->n_cgroups * sizeof(from->cgroups[0]));
	to->n_cgroups = from->n_cgroups;
	to->folded = from->folded;
	to->last_real_usec = from->last_real_usec;
	pthread_mutex_unlock(&to->lock);
	pthread_mutex_unlock(&from->lock);
}

/* series_ttl in place; the attach key in place when the running program
 * already is what it names. */
static int oom_reload(void *priv, const void *cfg)
{
	struct oom_state *s = priv;
	const struct oom_config *c = cfg;

	if (!bpf_attachment_serves(&s->bpf, s->flavour, c->flavour))
		return -EAGAIN;
	s->flavour = c->flavour;
	s->series_ttl_msec = c->series_ttl_msec;
	return 0;
}

static bool cgroup_exists(const char *root, const char *path)
{
	char full[PATH_MAX];

	if (snprintf(full, sizeof(full), "%s%s", root, path) >= (int)sizeof(full))
		return true; /* cannot tell: keep it */
	return faccessat(AT_FDCWD, full, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
}

/* A cgroup removed for series_ttl leaves the table, and its series ends.
 * Without a memory hierarchy nothing can be seen to go: everything stays. */
static void expire_removed(struct oom_state *s, struct oom_table *t, uint64_t now)
{
	struct cgroup_hierarchy_roots roots;
	uint64_t ttl = s->series_ttl_msec * USEC_PER_MSEC;
	size_t i, kept = 0;

	if (!s->ctx.cgroups)
		return;
	cgroup_hierarchy_roots(s->ctx.cgroups, &roots);
	if (!roots.memory[0])
		return;
	for (i = 0; i < t->n_cgroups; i++) {
		struct oom_cgroup *c = &t->cgroups[i];

		if (strcmp(c->path, UNKNOWN_CGROUP) == 0 || cgroup_exists(roots.memory, c->path)) {
			c->removed_since_usec = 0;
		} else {
			if (!c->removed_since_usec)
				c->removed_since_usec = now;
			if (now - c->removed_since_usec >= ttl)
				continue;
		}
		if (kept != i)
			t->cgroups[kept] = *c;
		kept++;
	}
	t->n_cgroups = kept;
}

static int oom_collect(void *priv, struct snapshot *snap)
{
	struct oom_state *s = priv;
	struct oom_bpf *skel = s->bpf.skel;
	struct oom_table *t = s->table;
	const char *labels[CGROUP_LABELS_N];
	uint64_t last;
	size_t i;

	snapshot_add(snap, METRIC(MW_OOM_KILLS_TOTAL), NULL, (double)__atomic_load_n(&skel->bss->oom_kills, __ATOMIC_RELAXED));
	pthread_mutex_lock(&t->lock);
	expire_removed(s, t, now_mono_usec());
	for (i = 0; i < t->n_cgroups; i++) {
		cgroup_labels_values(t->cgroups[i].path, &t->cgroups[i].names, labels);
		snapshot_add(snap, METRIC(MW_CGROUP_OOM_KILLS_TOTAL), labels, (double)t->cgroups[i].kills);
	}
	if (t->folded) {
		cgroup_labels_values("other", NULL, labels);
		snapshot_add(snap, METRIC(MW_CGROUP_OOM_KILLS_TOTAL), labels, (double)t->folded);
	}
	last = t->last_real_usec;
	pthread_mutex_unlock(&t->lock);
	if (last)
		snapshot_add(snap, METRIC(MW_LAST_OOM_KILL_TIMESTAMP_SECONDS), NULL, (double)last / 1e6);
	return 0;
}

static void oom_stop(void *priv)
{
	struct oom_state *s = priv;

	if (s->bpf.skel)
		event_channel_remove_source(s->ctx.events, &((struct oom_bpf *)s->bpf.skel)->bss->event_counters);
	bpf_attachment_destroy(&s->bpf);
	if (s->subscribed)
		event_channel_unsubscribe(s->ctx.events, on_oom_kill, s->table);
	if (s->table) {
		pthread_mutex_destroy(&s->table->lock);
		free(s->table);
	}
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
	.takeover = oom_takeover,
	.counts_from_start = true,
};
