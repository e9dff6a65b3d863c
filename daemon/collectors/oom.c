// SPDX-License-Identifier: GPL-2.0
/* Memory kills: the kernel's OOM killer on oom:mark_victim, and user-space
 * killers (userspace_killers) on signal:signal_generate, counted in the
 * kernel (bpf/oom.bpf.c) and detailed through the event channel: the victim,
 * its cgroup, the available memory, an OOM kill's diagnosis, the killer.
 * Each kill event also counts in a table by the victim's cgroup, kept here
 * with the workload's names as they were at the kill (the cgroup, and
 * kubelet's directories of its pod, go soon after), and for series_ttl after
 * the cgroup is removed. */
#include <linux/types.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpf_attach.h"
#include "cgroup_names.h"
#include "clock.h"
#include "collector.h"
#include "events.h"
#include "fileio.h"
#include "oom.skel.h"

DEFINE_BPF_SKEL_OPS(oom_bpf);

#define MAX_OOM_CGROUPS 512

#define UNKNOWN_CGROUP "unknown"

struct killer_list {
	uint32_t n;
	char names[KILLERS_MAX][EVENT_COMM_LEN];
};

struct oom_config {
	int flavour;
	uint64_t series_ttl_msec;
	struct killer_list killers;
};

/* Where an OOM kill's scope and OOM cgroup come from. */
enum scope_method {
	SCOPE_BY_FENTRY,
	SCOPE_BY_KPROBE,
	SCOPE_BY_MEMCG_WALK,
};

static const char *const scope_method_names[] = {
	[SCOPE_BY_FENTRY] = "fentry",
	[SCOPE_BY_KPROBE] = "kprobe",
	[SCOPE_BY_MEMCG_WALK] = "memcg_walk",
};

/* One row per (kind of kill, scope or killer, cgroup). */
struct oom_cgroup {
	unsigned kind;               /* EVENT_OOM_KILL or EVENT_USERSPACE_KILL */
	char by[EVENT_COMM_LEN + 1]; /* the scope, or the killer */
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
	uint64_t last_real_usec, last_userspace_real_usec;
};

struct oom_state {
	struct bpf_attachment bpf;
	struct collector_context ctx;
	int flavour; /* the attach key it was started with */
	uint64_t series_ttl_msec;
	struct killer_list killers; /* the list it was started with */
	enum scope_method scope_method;
	struct bpf_link *scope_link;
	bool userspace_attached;
	bool subscribed;
	const char *pressure_source; /* kill_pressure_source() */
	struct oom_table *table; /* its own allocation: its mutex never moves */
};

/* The instance whose handler notes and logs the kills: the running one, and
 * at a restart the old one until the new one takes over (the new one has
 * subscribed long before: loading its programs takes a while). */
static struct oom_state *_Atomic noting;

static const struct bpf_hook oom_hooks[] = {
	{ "oom", "mark_victim", BPF_HOOK_PROGS(oom_bpf, mark_victim) },
	{ "signal", "signal_generate", BPF_HOOK_PROGS(oom_bpf, signal_generate), .optional = true },
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

/* Where a kill's cgroup pressure comes from (bpf/cgroup_psi.bpf.h): the
 * cgroup's psi_group read at the kill, held by pointer (v5.19+) or embedded;
 * memory.pressure as the event is read where struct cgroup has no psi; none
 * where PSI is off (psi=0 or no CONFIG_PSI: no /proc/pressure). */
static const char *kill_pressure_source(void)
{
	const struct btf *btf = bpf_vmlinux_btf();
	const struct btf_type *t;
	const struct btf_member *m;
	__s32 id;

	if (access("/proc/pressure/memory", R_OK) < 0)
		return "none";
	id = btf ? btf__find_by_name_kind(btf, "cgroup", BTF_KIND_STRUCT) : -1;
	t = id < 0 ? NULL : btf__type_by_id(btf, (__u32)id);
	if (!t)
		return "file";
	m = btf_members(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, m++) {
		const char *name = btf__name_by_offset(btf, m->name_off);

		if (name && strcmp(name, "psi") == 0) {
			const struct btf_type *mt = btf__type_by_id(btf, btf__resolve_type(btf, m->type));

			return !mt ? "file" : btf_is_ptr(mt) ? "cgroup_psi" : "cgroup_psi_embedded";
		}
	}
	return "file";
}

static int prepare(void *skel, void *userdata)
{
	struct oom_bpf *obj = skel;
	const struct oom_state *s = userdata;
	int r;

	obj->rodata->victim_is_task = mark_victim_passes_task();
	obj->rodata->n_killers = s->killers.n;
	memcpy((void *)obj->rodata->killers, s->killers.names, sizeof(s->killers.names));
	bpf_program__set_autoload(obj->progs.oom_kill_process_fentry, s->scope_method == SCOPE_BY_FENTRY);
	bpf_program__set_autoload(obj->progs.oom_kill_process_kprobe, s->scope_method == SCOPE_BY_KPROBE);
	r = event_channel_prepare(s->ctx.events, obj->maps.events, &obj->rodata->events_use_ringbuf);
	if (r == 0)
		r = bpf_shared_map_reuse(s->ctx.shared_maps, obj->maps.memavail);
	/* Shared by the two instances of a restart: each kill claimed by one. */
	if (r == 0)
		r = bpf_shared_map_reuse(s->ctx.shared_maps, obj->maps.kill_seen);
	return r;
}

/* Under t->lock. A full table drops the new row's kill into the "other"
 * row of its kind and scope or killer, which is never dropped. */
static void note_cgroup(struct oom_table *t, unsigned kind, const char *by, const char *path,
			const struct cgroup_labels *names)
{
	struct oom_cgroup *c;
	size_t i;

	for (i = 0; i < t->n_cgroups; i++) {
		c = &t->cgroups[i];
		if (c->kind == kind && strcmp(c->by, by) == 0 && strcmp(c->path, path) == 0) {
			c->kills++;
			c->removed_since_usec = 0;
			return;
		}
	}
	if (t->n_cgroups >= MAX_OOM_CGROUPS - 2 * KILLERS_MAX - OOM_SCOPES && strcmp(path, "other") != 0) {
		note_cgroup(t, kind, by, "other", &(struct cgroup_labels){ .unit = "" });
		return;
	}
	if (t->n_cgroups == MAX_OOM_CGROUPS)
		return; /* cannot happen: the reserve above holds every "other" row */
	c = &t->cgroups[t->n_cgroups++];
	*c = (struct oom_cgroup){ .kind = kind, .kills = 1 };
	snprintf(c->by, sizeof(c->by), "%s", by);
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->names = *names;
}

/* On the event channel's consumer thread, for each kill event. */
static void on_kill(void *userdata, const struct memwatch_event *raw, struct event_record *rec)
{
	struct oom_state *s = userdata;
	struct oom_table *t = s->table;
	struct cgroup_labels names;
	struct oom_state *cur = atomic_load(&noting);
	const char *by;

	/* None noting (the last one stopped without a handover): this one does. */
	if (!cur && atomic_compare_exchange_strong(&noting, &cur, s))
		cur = s;
	if (cur != s)
		return; /* the other instance of a restart notes it, and logs it */
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
	if (rec->kill)
		rec->kill->names = names;
	if (rec->kind == EVENT_USERSPACE_KILL)
		by = rec->kill ? rec->kill->killer : "unknown";
	else
		by = oom_scope_name(raw->flags & KILL_HAS_SCOPE ? raw->kill.scope : OOM_SCOPE_UNKNOWN);
	pthread_mutex_lock(&t->lock);
	note_cgroup(t, rec->kind, by, rec->cgroup[0] ? rec->cgroup : UNKNOWN_CGROUP, &names);
	if (rec->kind == EVENT_USERSPACE_KILL)
		t->last_userspace_real_usec = rec->real_usec;
	else
		t->last_real_usec = rec->real_usec;
	pthread_mutex_unlock(&t->lock);
	if (rec->kind == EVENT_USERSPACE_KILL) {
		log_notice("User-space kill: %s (pid %u) sent %s to pid %u (%s) in cgroup %s", by, raw->kill.killer_pid,
			   raw->kill.signal == 9 ? "SIGKILL" : "SIGTERM", rec->pid, rec->comm,
			   rec->cgroup[0] ? rec->cgroup : "?");
	} else if (!rec->cgroup[0]) {
		/* How late the lookup came: a cgroup removed right after its kill, or a late reader. */
		uint64_t now = now_real_usec();

		log_notice("OOM kill (%s): pid %u (%s) in cgroup ? (id %" PRIu64 ", not found under the memory "
			   "hierarchy when the kill was read, %.1f ms after it)", by, rec->pid, rec->comm, rec->cgroup_id,
			   now > rec->real_usec ? (double)(now - rec->real_usec) / 1000.0 : 0.0);
	} else {
		bool from_kill = rec->kill && rec->kill->cgroup_source && strcmp(rec->kill->cgroup_source, "kill") == 0;

		log_notice("OOM kill (%s): pid %u (%s) in cgroup %s%s%s%s", by, rec->pid, rec->comm, rec->cgroup,
			   from_kill ? " (removed before the kill was read: named from the kill)" : "",
			   rec->kill && rec->kill->oom_cgroup[0] ? ", limit hit in " : "",
			   rec->kill ? rec->kill->oom_cgroup : "");
	}
}

/* "systemd-oomd oomd earlyoom nohang": names as a task's comm shows them
 * (at most 15 bytes), separated by blanks or commas; "none" switches the
 * user-space kills off. */
static int parse_killers(const char *value, void *field, char *errmsg, size_t errlen)
{
	struct killer_list *list = field, parsed = { 0 };
	const char *p = value;

	if (strcmp(value, "none") == 0) {
		*list = parsed;
		return 0;
	}
	while (*p) {
		size_t len;

		p += strspn(p, " \t,");
		len = strcspn(p, " \t,");
		if (!len)
			break;
		if (len >= EVENT_COMM_LEN) {
			snprintf(errmsg, errlen, "killer name '%.*s' is longer than a process name (15 bytes)", (int)len, p);
			return -EINVAL;
		}
		if (parsed.n == KILLERS_MAX) {
			snprintf(errmsg, errlen, "more than %d killer names", KILLERS_MAX);
			return -ERANGE;
		}
		memcpy(parsed.names[parsed.n++], p, len);
		p += len;
	}
	*list = parsed;
	return 0;
}

static const struct collector_key oom_keys[] = {
	{ BPF_ATTACH_KEY(struct oom_config, flavour), "auto" },
	{ CONFIG_KEY_DURATION("series_ttl", struct oom_config, series_ttl_msec, 0, 86400000), "5m" },
	{ CONFIG_KEY_CUSTOM("userspace_killers", struct oom_config, killers, parse_killers),
	  "systemd-oomd oomd earlyoom nohang" },
};

static size_t oom_hook_count(const struct killer_list *killers)
{
	return killers->n ? ARRAY_SIZE(oom_hooks) : 1; /* no killers: signal_generate stays unattached */
}

static int oom_probe(const void *cfg, const struct collector_context *ctx, struct collector_status *st)
{
	return bpf_hooks_probe(oom_hooks, 1, st);
}

static int attach_scope_hook(struct oom_state *s)
{
	struct oom_bpf *obj = s->bpf.skel;
	struct bpf_program *prog = s->scope_method == SCOPE_BY_FENTRY ? obj->progs.oom_kill_process_fentry :
									 obj->progs.oom_kill_process_kprobe;

	log_set_libbpf_quiet(true);
	s->scope_link = bpf_program__attach(prog);
	log_set_libbpf_quiet(false);
	return s->scope_link ? 0 : -errno;
}

static int oom_start(void *priv, const void *cfg, const struct collector_context *ctx,
		     struct collector_status *st)
{
	struct oom_state *s = priv;
	const struct oom_config *c = cfg;
	int r, r_fentry;

	s->flavour = c->flavour;
	s->series_ttl_msec = c->series_ttl_msec;
	s->killers = c->killers;
	s->ctx = *ctx;
	s->table = calloc(1, sizeof(*s->table));
	if (!s->table)
		return -ENOMEM;
	pthread_mutex_init(&s->table->lock, NULL);
	s->table->names = ctx->names;
	{
		struct oom_state *none = NULL;

		atomic_compare_exchange_strong(&noting, &none, s); /* none running: this one notes */
	}
	r = event_channel_subscribe(s->ctx.events, EVENT_KIND_BIT(EVENT_OOM_KILL) | EVENT_KIND_BIT(EVENT_USERSPACE_KILL),
				    on_kill, s);
	if (r < 0)
		return r;
	s->subscribed = true;

	r_fentry = bpf_program_loads_alone(&oom_bpf_skel_ops,
					   offsetof(struct oom_bpf, progs.oom_kill_process_fentry));
	s->scope_method = r_fentry == 0 ? SCOPE_BY_FENTRY : SCOPE_BY_KPROBE;
	r = bpf_attach_hooks(&s->bpf, &oom_bpf_skel_ops, oom_hooks, oom_hook_count(&s->killers), s->flavour, prepare,
			     s, st);
	if (r < 0)
		return r;
	if (attach_scope_hook(s) < 0) {
		int r_kprobe = -errno;

		log_info("Collector oom: neither fentry (%s) nor kprobe (%s) attach to oom_kill_process(): an OOM "
			 "kill's scope and OOM cgroup come from the memory cgroups' page counters",
			 strerror(r_fentry < 0 ? -r_fentry : EOPNOTSUPP), strerror(-r_kprobe));
		s->scope_method = SCOPE_BY_MEMCG_WALK;
	}
	s->pressure_source = kill_pressure_source();
	if (strcmp(s->pressure_source, "none") == 0)
		log_info("Collector oom: no /proc/pressure (PSI off): kills carry no cgroup pressure");
	else if (strcmp(s->pressure_source, "file") == 0)
		log_info("Collector oom: struct cgroup has no psi in this kernel's BTF: a kill's cgroup pressure is "
			 "its memory.pressure when the event is read, none once the cgroup is gone");
	s->userspace_attached = s->killers.n && s->bpf.hook_present[1];
	if (s->killers.n && !s->userspace_attached)
		log_warning("Collector oom: signal:signal_generate unavailable: user-space kills are not counted");
	event_channel_add_source(s->ctx.events, &((struct oom_bpf *)s->bpf.skel)->bss->event_counters);
	return 0;
}

struct handover {
	struct oom_state *to, *from;
};

static void hand_over_table(void *userdata)
{
	struct handover *h = userdata;
	struct oom_table *to = h->to->table, *from = h->from->table;

	/* Only the old one noted the kills so far: take its table whole. From
	 * here on only the new one notes. */
	pthread_mutex_lock(&from->lock);
	pthread_mutex_lock(&to->lock);
	memcpy(to->cgroups, from->cgroups, from->n_cgroups * sizeof(from->cgroups[0]));
	to->n_cgroups = from->n_cgroups;
	to->last_real_usec = from->last_real_usec;
	to->last_userspace_real_usec = from->last_userspace_real_usec;
	pthread_mutex_unlock(&to->lock);
	pthread_mutex_unlock(&from->lock);
	atomic_store(&noting, h->to);
}

/* A restart: the kills by cgroup so far, and the last ones' times, stay;
 * between two events, so that none is noted twice or lost. */
static void oom_takeover(void *new_priv, void *old_priv)
{
	struct handover h = { new_priv, old_priv };

	if (!h.to->table || !h.from->table)
		return;
	event_channel_between_events(h.to->ctx.events, hand_over_table, &h);
}

/* The old instance's programs detach: each kill from here on is the new
 * one's alone (it claimed none while both ran: the old one's programs,
 * attached first, run first on every hit). */
static void oom_quiesce(void *priv)
{
	struct oom_state *s = priv;

	bpf_link__destroy(s->scope_link);
	s->scope_link = NULL;
	bpf_attachment_detach(&s->bpf);
}

/* series_ttl in place; the attach key in place when the running program
 * already is what it names. Other killers need a new program. */
static int oom_reload(void *priv, const void *cfg)
{
	struct oom_state *s = priv;
	const struct oom_config *c = cfg;

	if (!bpf_attachment_serves(&s->bpf, s->flavour, c->flavour) ||
	    memcmp(&s->killers, &c->killers, sizeof(c->killers)) != 0)
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

		if (strcmp(c->path, UNKNOWN_CGROUP) == 0 || strcmp(c->path, "other") == 0 || cgroup_exists(roots.memory, c->path)) {
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

static void collect_features(struct oom_state *s, struct snapshot *snap)
{
	const char *userspace = !s->killers.n ? "off" : s->userspace_attached ? bpf_flavour_name(s->bpf.flavour) : "none";
	const char *rss = ((struct oom_bpf *)s->bpf.skel)->rodata->victim_is_task && s->bpf.flavour != BPF_FLAVOUR_TRACEPOINT
				  ? "task" : "none";

	snapshot_add(snap, METRIC(MW_OOM_FEATURE_INFO), (const char *const[]){ "scope", scope_method_names[s->scope_method] }, 1);
	snapshot_add(snap, METRIC(MW_OOM_FEATURE_INFO), (const char *const[]){ "victim_rss", rss }, 1);
	snapshot_add(snap, METRIC(MW_OOM_FEATURE_INFO), (const char *const[]){ "userspace_kills", userspace }, 1);
	snapshot_add(snap, METRIC(MW_OOM_FEATURE_INFO), (const char *const[]){ "pressure", s->pressure_source }, 1);
}

static int oom_collect(void *priv, struct snapshot *snap)
{
	struct oom_state *s = priv;
	struct oom_bpf *skel = s->bpf.skel;
	struct oom_table *t = s->table;
	const char *labels[CGROUP_LABELS_N + 1];
	uint64_t last, last_userspace;
	size_t i;

	for (i = 0; i < OOM_SCOPES; i++) {
		uint64_t v = __atomic_load_n(&skel->bss->oom_kills_by_scope[i], __ATOMIC_RELAXED);

		if (i != OOM_SCOPE_UNKNOWN || v)
			snapshot_add(snap, METRIC(MW_OOM_KILLS_TOTAL), (const char *const[]){ oom_scope_name((unsigned)i) },
				     (double)v);
	}
	for (i = 0; i < s->killers.n; i++) {
		const char *killer[] = { s->killers.names[i] };

		snapshot_add(snap, METRIC(MW_USERSPACE_KILLS_TOTAL), killer,
			     (double)__atomic_load_n(&skel->bss->userspace_kills[i], __ATOMIC_RELAXED));
		snapshot_add(snap, METRIC(MW_USERSPACE_KILL_SIGNALS_TOTAL), killer,
			     (double)__atomic_load_n(&skel->bss->userspace_signals[i], __ATOMIC_RELAXED));
	}
	collect_features(s, snap);
	pthread_mutex_lock(&t->lock);
	expire_removed(s, t, now_mono_usec());
	for (i = 0; i < t->n_cgroups; i++) {
		const struct oom_cgroup *c = &t->cgroups[i];

		cgroup_labels_values(c->path, strcmp(c->path, "other") ? &c->names : NULL, labels);
		labels[CGROUP_LABELS_N] = c->by;
		snapshot_add(snap,
			     c->kind == EVENT_USERSPACE_KILL ? METRIC(MW_CGROUP_USERSPACE_KILLS_TOTAL) :
							       METRIC(MW_CGROUP_OOM_KILLS_TOTAL),
			     labels, (double)c->kills);
	}
	last = t->last_real_usec;
	last_userspace = t->last_userspace_real_usec;
	pthread_mutex_unlock(&t->lock);
	if (last)
		snapshot_add(snap, METRIC(MW_LAST_OOM_KILL_TIMESTAMP_SECONDS), NULL, (double)last / 1e6);
	if (last_userspace)
		snapshot_add(snap, METRIC(MW_LAST_USERSPACE_KILL_TIMESTAMP_SECONDS), NULL, (double)last_userspace / 1e6);
	return 0;
}

static void oom_stop(void *priv)
{
	struct oom_state *s = priv, *me = s;

	atomic_compare_exchange_strong(&noting, &me, NULL);

	if (s->bpf.skel)
		event_channel_remove_source(s->ctx.events, &((struct oom_bpf *)s->bpf.skel)->bss->event_counters);
	bpf_link__destroy(s->scope_link);
	s->scope_link = NULL;
	bpf_attachment_destroy(&s->bpf);
	if (s->subscribed)
		event_channel_unsubscribe(s->ctx.events, on_kill, s);
	if (s->table) {
		pthread_mutex_destroy(&s->table->lock);
		free(s->table);
	}
}

const struct collector_ops oom_collector = {
	.name = "oom",
	.summary = "Kernel OOM kills on oom:mark_victim with their diagnosis, and user-space killers' kills on signal:signal_generate, in /api/v1/events",
	.default_enabled = true,
	.config_size = sizeof(struct oom_config),
	.keys = oom_keys,
	.n_keys = ARRAY_SIZE(oom_keys),
	.priv_size = sizeof(struct oom_state),
	.probe = oom_probe,
	.start = oom_start,
	.collect = oom_collect,
	.reload = oom_reload,
	.stop = oom_stop,
	.takeover = oom_takeover,
	.quiesce = oom_quiesce,
	.counts_from_start = true,
};
