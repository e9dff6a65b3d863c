// SPDX-License-Identifier: GPL-2.0
/* Memory kills, whoever makes them.
 *
 * The kernel's OOM killer on oom:mark_victim, with its diagnosis read at the
 * instant: what ran out (struct oom_control's constraint, stashed by fentry
 * or kprobe on oom_kill_process(), or inferred from the memory cgroups' page
 * counters where neither attaches), the cgroup whose limit was hit with its
 * usage and limit, and the victim's RSS and oom_score_adj.
 *
 * User-space killers (systemd-oomd, earlyoom, ...) on signal:signal_generate:
 * a SIGTERM or SIGKILL sent by a task whose comm is a configured killer. A
 * burst to one cgroup is one kill of it, and a process counts once however
 * many signals it gets (SIGTERM, then SIGKILL).
 *
 * mark_victim changed: older kernels pass only the victim's pid, newer ones
 * the victim task_struct and its uid (see docs/kernel-compat.md). User space
 * reads the kernel's BTF and tells us which through victim_is_task. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memwatch.bpf.h"
#include "core_fixes.bpf.h"
#include "events.bpf.h"
#include "memavail.bpf.h"
#include "cgroup_psi.bpf.h"

#define SIGKILL_NR 9
#define SIGTERM_NR 15
/* enum trace_signal_result: delivered, and delivered without its siginfo. */
#define TRACE_SIGNAL_DELIVERED 0
#define TRACE_SIGNAL_LOSE_INFO 4
/* mm counters (enum, stable since 4.5) */
#define MM_FILEPAGES 0
#define MM_ANONPAGES 1
#define MM_SHMEMPAGES 3
/* enum oom_constraint, stable since 4.19 */
#define CONSTRAINT_CPUSET_NR 1
#define CONSTRAINT_MEMORY_POLICY_NR 2
#define CONSTRAINT_MEMCG_NR 3

#define MEMCG_WALK_DEPTH 8
/* mem_cgroup_out_of_memory() kills only while the margin is below the
 * charge's 1 << order pages (order <= 10): an ancestor nearer its limit
 * than that is where the charge failed. */
#define OOM_MARGIN_PAGES 1024
#define STASH_FRESH_NS 1000000000ULL

const volatile bool victim_is_task = true;
const volatile __u32 n_killers = 0;
const volatile char killers[KILLERS_MAX][EVENT_COMM_LEN] = {};
const volatile __u64 kill_burst_ns = 1000000000ULL;
const volatile __u64 kill_victim_ns = 30000000000ULL;
/* Two instances of this collector attached at once (a restart starts the new
 * one before the old one stops) both run on each tracepoint hit, within
 * microseconds on one CPU: the first to claim the kill in the kill_seen map
 * the two share counts and reports it, the other one sees it claimed. */
const volatile __u64 same_hit_ns = 10000000ULL;

__u64 oom_kills_by_scope[OOM_SCOPES] = {};
__u64 userspace_kills[KILLERS_MAX] = {};
__u64 userspace_signals[KILLERS_MAX] = {};

struct oom_stash {
	__u64 ts_ns;
	__u64 memcg_id;
	__u64 usage_pages;
	__u64 limit_pages;
	__u32 scope;
	__u32 has_memcg;
};

BPF_LRU_HASH(__u32, struct oom_stash, 256) oom_stash SEC(".maps");

struct kill_key {
	__u64 id;      /* victim tgid, victim memory cgroup id, OOM victim's thread id, or signal << 32 | victim thread id */
	__u32 what;    /* KEY_* */
	__u32 killer;  /* the killer's index; for KEY_SIGNAL its pid */
};
#define KEY_VICTIM 0
#define KEY_CGROUP_BURST 1
#define KEY_OOM_VICTIM 2
#define KEY_SIGNAL 3

BPF_LRU_HASH(struct kill_key, __u64, 8192) kill_seen SEC(".maps");

/* Before 6.2 rss_stat was a struct mm_rss_stat of atomics. Matched through
 * mm_struct, which every kernel has: a relocation against a type missing
 * from vmlinux makes libbpf search the modules' BTF, which needs
 * CAP_SYS_ADMIN (the unit runs with CAP_BPF and CAP_PERFMON only). */
struct mm_struct___old {
	struct {
		atomic_long_t count[4];
	} rss_stat;
} __attribute__((preserve_access_index));

static __always_inline struct mem_cgroup *task_memcg(struct task_struct *task)
{
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cgroups;
	int id;

	if (!task || !bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id) ||
	    bpf_core_field_offset(struct mem_cgroup, css) != 0)
		return NULL;
	id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	cgroups = BPF_CORE_READ(task, cgroups);
	if (!cgroups || id < 0 || id >= CGROUP_SUBSYS_COUNT)
		return NULL;
	bpf_probe_read_kernel(&css, sizeof(css), &cgroups->subsys[id]);
	return (struct mem_cgroup *)css; /* css is the memcg's first member */
}

static __always_inline struct mem_cgroup *memcg_parent(struct mem_cgroup *memcg)
{
	return (struct mem_cgroup *)BPF_CORE_READ(memcg, css.parent);
}

static __always_inline __u64 memcg_cgroup_id(struct mem_cgroup *memcg)
{
	return BPF_CORE_READ(memcg, css.cgroup, kn, id);
}

/* A kill's event does not fit the stack beside memavail_compute's frame
 * (512 bytes in all): it is built here, one per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct memwatch_event);
} kill_scratch SEC(".maps");

static __always_inline struct memwatch_event *kill_event(void)
{
	__u32 zero = 0;
	struct memwatch_event *e = bpf_map_lookup_elem(&kill_scratch, &zero);

	if (e)
		__builtin_memset(e, 0, sizeof(*e));
	return e;
}

/* The victim's memory cgroup by parent and name, and its pressure: a
 * container's cgroup goes right after its kill, often before user space reads
 * the event. */
static __always_inline void name_victim_memcg(struct memwatch_event *e, struct task_struct *task)
{
	struct mem_cgroup *memcg = task_memcg(task);
	const char *name;

	kill_read_pressure(e, task, memcg);
	if (!memcg)
		return;
	e->kill.cgroup_parent_id = BPF_CORE_READ(memcg, css.parent, cgroup, kn, id);
	name = BPF_CORE_READ(memcg, css.cgroup, kn, name);
	if (name)
		bpf_probe_read_kernel_str(e->kill.cgroup_name, sizeof(e->kill.cgroup_name), name);
}

static __always_inline void memcg_usage(struct mem_cgroup *memcg, __u64 *usage, __u64 *limit)
{
	long u = BPF_CORE_READ(memcg, memory.usage.counter);

	*usage = u < 0 ? 0 : (__u64)u;
	*limit = BPF_CORE_READ(memcg, memory.max);
}

static __always_inline bool memcg_is_ancestor(struct mem_cgroup *ancestor, struct mem_cgroup *memcg)
{
	for (int i = 0; i < MEMCG_WALK_DEPTH * 2 && memcg; i++) {
		if (memcg == ancestor)
			return true;
		memcg = memcg_parent(memcg);
	}
	return false;
}

static __always_inline __u32 scope_of_constraint(__u32 constraint)
{
	switch (constraint) {
	case CONSTRAINT_MEMCG_NR:
		return OOM_SCOPE_MEMCG;
	case CONSTRAINT_CPUSET_NR:
		return OOM_SCOPE_CPUSET;
	case CONSTRAINT_MEMORY_POLICY_NR:
		return OOM_SCOPE_MEMPOLICY;
	default:
		return OOM_SCOPE_GLOBAL;
	}
}

/* --- oom_kill_process(): the oom_control, for the mark_victim that follows on this thread --- */

static __always_inline int stash_oom_control(struct oom_control *oc)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct oom_stash st = {};
	struct mem_cgroup *memcg;

	st.ts_ns = bpf_ktime_get_ns();
	st.scope = scope_of_constraint(BPF_CORE_READ(oc, constraint));
	memcg = BPF_CORE_READ(oc, memcg);
	if (memcg) {
		st.has_memcg = 1;
		st.memcg_id = memcg_cgroup_id(memcg);
		memcg_usage(memcg, &st.usage_pages, &st.limit_pages);
	}
	bpf_map_update_elem(&oom_stash, &tid, &st, BPF_ANY);
	return 0;
}

SEC("?fentry/oom_kill_process")
int BPF_PROG(oom_kill_process_fentry, struct oom_control *oc)
{
	return stash_oom_control(oc);
}

SEC("?kprobe/oom_kill_process")
int BPF_KPROBE(oom_kill_process_kprobe, struct oom_control *oc)
{
	return stash_oom_control(oc);
}

/* --- oom:mark_victim --- */

static __always_inline bool scope_from_stash(struct memwatch_event *e, __u64 now)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct oom_stash *st = bpf_map_lookup_elem(&oom_stash, &tid);

	if (!st || now - st->ts_ns > STASH_FRESH_NS)
		return false;
	e->kill.scope = st->scope;
	e->flags |= KILL_HAS_SCOPE | KILL_SCOPE_FROM_CONTROL;
	if (st->has_memcg) {
		e->kill.oom_cgroup_id = st->memcg_id;
		e->kill.oom_usage_pages = st->usage_pages;
		e->kill.oom_limit_pages = st->limit_pages;
		e->flags |= KILL_HAS_OOM_CGROUP;
	}
	return true;
}

/* Without oom_control: the charge that failed was the current task's, in its
 * memory cgroup or an ancestor; the lowest of those at its limit, and above
 * the victim, is where it ran out. None at its limit: the machine ran out. */
static __always_inline void scope_from_memcg_walk(struct memwatch_event *e, struct task_struct *victim)
{
	struct mem_cgroup *memcg = task_memcg((struct task_struct *)bpf_get_current_task());
	struct mem_cgroup *victim_memcg = task_memcg(victim);

	for (int i = 0; i < MEMCG_WALK_DEPTH && memcg; i++) {
		struct mem_cgroup *parent = memcg_parent(memcg);
		__u64 usage, limit;

		if (!parent)
			break; /* the root memory cgroup has no limit */
		memcg_usage(memcg, &usage, &limit);
		if (usage + OOM_MARGIN_PAGES > limit && (!victim || memcg_is_ancestor(memcg, victim_memcg))) {
			e->kill.scope = OOM_SCOPE_MEMCG;
			e->kill.oom_cgroup_id = memcg_cgroup_id(memcg);
			e->kill.oom_usage_pages = usage;
			e->kill.oom_limit_pages = limit;
			e->flags |= KILL_HAS_SCOPE | KILL_HAS_OOM_CGROUP;
			return;
		}
		memcg = parent;
	}
	e->kill.scope = OOM_SCOPE_GLOBAL;
	e->flags |= KILL_HAS_SCOPE;
}

static __always_inline __u64 rss_count(long v)
{
	return v < 0 ? 0 : (__u64)v;
}

/* get_mm_counter() as the kernel's own oom-kill line reads it: an atomic
 * before 6.2, a per-CPU counter's approximate count since. */
static __always_inline void victim_rss(struct memwatch_event *e, struct mm_struct *mm)
{
	if (!mm)
		return;
	if (bpf_core_field_exists(((struct mm_struct___old *)0)->rss_stat.count)) {
		struct mm_struct___old *old = (void *)mm;

		e->kill.rss_file_pages = rss_count(BPF_CORE_READ(old, rss_stat.count[MM_FILEPAGES].counter));
		e->kill.rss_anon_pages = rss_count(BPF_CORE_READ(old, rss_stat.count[MM_ANONPAGES].counter));
		e->kill.rss_shmem_pages = rss_count(BPF_CORE_READ(old, rss_stat.count[MM_SHMEMPAGES].counter));
	} else if (bpf_core_field_exists(mm->rss_stat[0].count)) {
		e->kill.rss_file_pages = rss_count(BPF_CORE_READ(mm, rss_stat[MM_FILEPAGES].count));
		e->kill.rss_anon_pages = rss_count(BPF_CORE_READ(mm, rss_stat[MM_ANONPAGES].count));
		e->kill.rss_shmem_pages = rss_count(BPF_CORE_READ(mm, rss_stat[MM_SHMEMPAGES].count));
	} else {
		return;
	}
	e->flags |= KILL_HAS_RSS;
}

/* True when key was seen within window: a signal of a kill already counted,
 * or a kill or signal the other instance's program claimed on the same hit.
 * The burst key slides with each signal; a victim's stays at its first. */
static __always_inline bool seen_within(struct kill_key *key, __u64 now, __u64 window, bool slide)
{
	__u64 *last = bpf_map_lookup_elem(&kill_seen, key);

	if (last && now - *last < window) {
		if (slide)
			*last = now;
		return true;
	}
	bpf_map_update_elem(&kill_seen, key, &now, BPF_ANY);
	return false;
}

static __always_inline void count_scope(__u32 scope)
{
	barrier_var(scope);
	if (scope < OOM_SCOPES)
		counter_add(&oom_kills_by_scope[scope], 1);
}

static __always_inline int report_victim(void *ctx, struct task_struct *victim, __u32 pid)
{
	struct kill_key claim = { .what = KEY_OOM_VICTIM };
	struct memwatch_event *e = kill_event();

	if (!e)
		return 0;
	e->ts_ns = bpf_ktime_get_ns();
	/* The thread the kernel marked: what the classic record's pid field holds too. */
	claim.id = victim ? (__u32)BPF_CORE_READ(victim, pid) : pid;
	if (seen_within(&claim, e->ts_ns, same_hit_ns, false))
		return 0;
	e->kind = EVENT_OOM_KILL;
	e->pid = pid;
	if (!scope_from_stash(e, e->ts_ns))
		scope_from_memcg_walk(e, victim);
	if (victim) {
		struct mm_struct *mm = BPF_CORE_READ(victim, mm);

		e->pid = BPF_CORE_READ(victim, tgid);
		e->tid = BPF_CORE_READ(victim, pid);
		e->cgroup_id = task_memcg_id(victim);
		name_victim_memcg(e, victim);
		BPF_CORE_READ_STR_INTO(&e->comm, victim, comm);
		if (mm)
			e->value = BPF_CORE_READ(mm, total_vm);
		victim_rss(e, mm);
		e->kill.oom_score_adj = BPF_CORE_READ(victim, signal, oom_score_adj);
		e->flags |= KILL_HAS_SCORE_ADJ;
	}
	count_scope(e->kill.scope);
	memavail_fill_event(e);
	/* Kills are never gated: each one matters. */
	event_emit(ctx, e);
	return 0;
}

static __always_inline int handle_mark_victim(void *ctx, __u64 arg0)
{
	if (victim_is_task)
		return report_victim(ctx, (struct task_struct *)arg0, 0);
	return report_victim(ctx, NULL, (__u32)arg0);
}

/* The classic format has carried the pid field on every kernel. */
TP_FLAVOURS(mark_victim, oom, mark_victim, handle_mark_victim(ctx, ctx[0]), struct trace_event_raw_mark_victim,
	    report_victim(ctx, NULL, ctx->pid))

/* --- signal:signal_generate: user-space killers --- */

static __always_inline __u32 killer_index(const char *comm)
{
	for (__u32 i = 0; i < KILLERS_MAX; i++) {
		bool same = true;

		if (i >= n_killers)
			break;
		for (int j = 0; j < EVENT_COMM_LEN; j++) {
			if (killers[i][j] != comm[j]) {
				same = false;
				break;
			}
			if (!comm[j])
				break;
		}
		if (same)
			return i;
	}
	return KILLERS_MAX;
}

static __always_inline int on_signal(void *ctx, int sig, struct task_struct *task, __u32 victim_tgid, __u32 victim_tid,
				     int result)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now, memcg_id;
	struct kill_key victim_key = {}, burst_key = {}, signal_key = {};
	struct memwatch_event *e;
	char comm[EVENT_COMM_LEN] = {};
	__u32 idx;
	bool repeat;

	if ((sig != SIGKILL_NR && sig != SIGTERM_NR) || !n_killers)
		return 0;
	if (result != TRACE_SIGNAL_DELIVERED && result != TRACE_SIGNAL_LOSE_INFO)
		return 0;
	bpf_get_current_comm(comm, sizeof(comm));
	idx = killer_index(comm);
	barrier_var(idx);
	if (idx >= KILLERS_MAX)
		return 0;
	if (task)
		victim_tgid = BPF_CORE_READ(task, tgid), victim_tid = BPF_CORE_READ(task, pid);
	if (victim_tgid == (__u32)(pid_tgid >> 32))
		return 0; /* a killer signalling itself */
	now = bpf_ktime_get_ns();
	signal_key.id = (__u64)sig << 32 | victim_tid;
	signal_key.what = KEY_SIGNAL;
	signal_key.killer = pid_tgid >> 32;
	if (seen_within(&signal_key, now, same_hit_ns, false))
		return 0;
	counter_add(&userspace_signals[idx], 1);

	memcg_id = task ? task_memcg_id(task) : 0;
	victim_key.id = victim_tgid;
	victim_key.what = KEY_VICTIM;
	burst_key.id = memcg_id;
	burst_key.what = KEY_CGROUP_BURST;
	burst_key.killer = idx;
	repeat = seen_within(&victim_key, now, kill_victim_ns, false);
	/* Evaluated for every signal, so that the burst slides over the repeats too. */
	if (seen_within(&burst_key, now, kill_burst_ns, true) || repeat)
		return 0;
	counter_add(&userspace_kills[idx], 1);

	e = kill_event();
	if (!e)
		return 0;
	e->ts_ns = now;
	e->kind = EVENT_USERSPACE_KILL;
	e->pid = victim_tgid;
	e->tid = victim_tid;
	e->cgroup_id = memcg_id;
	if (task) {
		name_victim_memcg(e, task);
		BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	}
	e->kill.signal = sig;
	e->kill.killer = idx;
	e->kill.killer_pid = pid_tgid >> 32;
	__builtin_memcpy(e->kill.killer_comm, comm, sizeof(comm));
	memavail_fill_event(e);
	event_emit(ctx, e);
	return 0;
}

/* The classic record names the victim by its thread id and comm only. */
static __always_inline int on_signal_record(void *ctx, struct trace_event_raw_signal_generate *r)
{
	return on_signal(ctx, r->sig, NULL, (__u32)r->pid, (__u32)r->pid, r->result);
}

TP_FLAVOURS(signal_generate, signal, signal_generate, on_signal(ctx, sig, task, 0, 0, result),
	    struct trace_event_raw_signal_generate, on_signal_record(ctx, ctx), int sig, struct kernel_siginfo *info,
	    struct task_struct *task, int group, int result)

char LICENSE[] SEC("license") = "GPL";
