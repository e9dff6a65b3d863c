// SPDX-License-Identifier: GPL-2.0
#include <linux/types.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "catalogue.h"
#include "cgroup_hierarchy.h"
#include "cgroup_paths.h"
#include "clock.h"
#include "event_channel.h"
#include "fileio.h"
#include "log.h"
#include "psi.h"

#define MAX_SOURCES 16
#define MAX_SUBSCRIBERS 8
#define RETRY_MSEC 100

struct subscriber {
	unsigned kinds;
	event_handler_fn fn;
	void *userdata;
};

struct event_channel {
	int fd;            /* the shared ring buffer or perf event array */
	bool ringbuf;
	struct ring_buffer *rb;
	struct perf_buffer *pb;
	pthread_t thread;
	bool thread_started;
	int wake_fd; /* eventfd: stop or pause changed */
	int stir_fd; /* eventfd: the first event since event_channel_watch */
	atomic_bool watching;
	atomic_bool stop;
	atomic_bool paused;

	/* Owned by the consumer thread. */
	struct cgroup_hierarchy *cgroups;
	int cgroup_table; /* -1: no cgroup paths; the hierarchy locks its tables */

	/* Held by the consumer while it calls the handlers, so that one
	 * unsubscribed is never called again. */
	pthread_mutex_t subscribers_lock;
	struct subscriber subscribers[MAX_SUBSCRIBERS];
	size_t n_subscribers;
	event_sink_fn sink;
	void *sink_userdata;

	/* Guarded by lock: read by the main thread (collect) and HTTP threads (JSON). */
	pthread_mutex_t lock;
	struct event_record *recent;
	size_t cap, head, count;
	uint64_t received[EVENT_KINDS];
	uint64_t consumer_dropped;
	struct event_counters *sources[MAX_SOURCES];
	size_t n_sources;
	/* What removed sources (collectors stopped or restarted) had counted:
	 * the totals never go back when a collector's BPF object goes. */
	uint64_t retired_dropped[EVENT_KINDS], retired_gated[EVENT_KINDS], retired_emitted[EVENT_KINDS];
	uint64_t gate_ns;
};


const char *event_kind_name(unsigned kind)
{
	static const char *const names[EVENT_KINDS] = {
		[EVENT_DIRECT_RECLAIM] = "direct_reclaim",
		[EVENT_MEMCG_RECLAIM] = "memcg_reclaim",
		[EVENT_OOM_KILL] = "oom_kill",
		[EVENT_ALLOC_FAILURE] = "alloc_failure",
		[EVENT_USERSPACE_KILL] = "userspace_kill",
	};

	return kind < EVENT_KINDS ? names[kind] : "unknown";
}

const char *oom_scope_name(unsigned scope)
{
	static const char *const names[OOM_SCOPES] = {
		[OOM_SCOPE_UNKNOWN] = "unknown",
		[OOM_SCOPE_MEMCG] = "memcg",
		[OOM_SCOPE_GLOBAL] = "global",
		[OOM_SCOPE_CPUSET] = "cpuset",
		[OOM_SCOPE_MEMPOLICY] = "mempolicy",
	};

	return scope < OOM_SCOPES ? names[scope] : "unknown";
}

static bool is_kill(unsigned kind)
{
	return kind == EVENT_OOM_KILL || kind == EVENT_USERSPACE_KILL;
}

/* A kill's cgroup the path table no longer has: removed before this read
 * (a container's goes right after its kill). Named from its parent's path
 * and the directory name the kernel gave at the kill. */
static bool name_from_kill(struct event_channel *ch, const struct memwatch_event *e, char *buf, size_t len)
{
	char parent[sizeof(((struct event_record *)NULL)->cgroup)];

	if (ch->cgroup_table < 0 || !e->kill.cgroup_parent_id || !e->kill.cgroup_name[0])
		return false;
	if (cgroup_hierarchy_lookup_urgent(ch->cgroups, ch->cgroup_table, e->kill.cgroup_parent_id, now_mono_usec(),
					   parent, sizeof(parent)) < 0)
		return false;
	return cgroup_path_child(parent, e->kill.cgroup_name, sizeof(e->kill.cgroup_name), buf, len) == 0;
}

/* The kernel's fixed point for PSI averages (FIXED_1, 1 << FSHIFT). */
#define PSI_FIXED_1 2048.0

/* The victim cgroup's pressure as the BPF program read it at the kill. */
static bool pressure_from_kill(const struct memwatch_event *e, struct kill_record *k)
{
	if (!(e->flags & KILL_HAS_PSI))
		return false;
	k->psi_some_avg10 = e->kill.psi_some_avg10 / PSI_FIXED_1 / 100.0;
	k->psi_full_avg10 = e->kill.psi_full_avg10 / PSI_FIXED_1 / 100.0;
	k->psi_some_total_sec = (double)e->kill.psi_some_total_ns / 1e9;
	k->psi_full_total_sec = (double)e->kill.psi_full_total_ns / 1e9;
	k->psi_source = "kill";
	return true;
}

/* Else the victim cgroup's memory pressure now: v2's memory.pressure in the
 * memory hierarchy, or the same path in the unified one (a hybrid host).
 * Read before any subscriber runs: a killer's cgroup is removed as soon as
 * it is empty (systemd-oomd's unit, a container), and on a slow guest the
 * subscribers' own reads took long enough to lose that race. */
static void read_cgroup_pressure(struct cgroup_hierarchy *h, const char *path, struct kill_record *k)
{
	struct cgroup_hierarchy_roots roots;
	const char *bases[2];
	struct psi_stats psi;

	if (!h || !path[0])
		return;
	cgroup_hierarchy_roots(h, &roots);
	bases[0] = roots.mode == CGROUP_MEMORY_V2 ? roots.memory : "";
	bases[1] = roots.unified;
	for (size_t i = 0; i < ARRAY_SIZE(bases); i++) {
		char file[PATH_MAX + 320], *text = NULL;
		size_t len = 0;
		int r;

		if (!bases[i][0] || snprintf(file, sizeof(file), "%s%s/memory.pressure", bases[i], path) >= (int)sizeof(file))
			continue;
		if (read_full_file(file, 4096, &text, &len) < 0)
			continue;
		r = psi_parse(text, len, &psi);
		free(text);
		if (r < 0)
			continue;
		k->psi_some_avg10 = psi.some.avg10 / 100.0;
		k->psi_some_total_sec = (double)psi.some.total_usec / 1e6;
		k->psi_full_avg10 = psi.has_full ? psi.full.avg10 / 100.0 : NAN;
		k->psi_full_total_sec = psi.has_full ? (double)psi.full.total_usec / 1e6 : NAN;
		k->psi_source = "file";
		return;
	}
}

/* victim_cgroup: the victim's path when it was named from the kill, which
 * names the OOM cgroup too when the two are one. */
static struct kill_record *kill_record_new(struct event_channel *ch, const struct memwatch_event *e,
					   const char *cgroup_source, const char *victim_cgroup)
{
	struct kill_record *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->raw = e->kill;
	k->flags = e->flags;
	k->cgroup_source = cgroup_source;
	memcpy(k->killer, e->kill.killer_comm, EVENT_COMM_LEN);
	k->psi_some_avg10 = k->psi_full_avg10 = k->psi_some_total_sec = k->psi_full_total_sec = NAN;
	if ((k->flags & KILL_HAS_OOM_CGROUP) && ch->cgroup_table >= 0 && e->kill.oom_cgroup_id &&
	    cgroup_hierarchy_lookup_urgent(ch->cgroups, ch->cgroup_table, e->kill.oom_cgroup_id, now_mono_usec(),
					   k->oom_cgroup, sizeof(k->oom_cgroup)) < 0 &&
	    victim_cgroup && e->kill.oom_cgroup_id == e->cgroup_id)
		snprintf(k->oom_cgroup, sizeof(k->oom_cgroup), "%s", victim_cgroup);
	return k;
}

/* Under ch->lock: rec joins the history, the oldest making room. */
static void keep_record(struct event_channel *ch, struct event_record *rec)
{
	if (!ch->cap) {
		free(rec->kill);
		return;
	}
	if (ch->count == ch->cap)
		free(ch->recent[ch->head].kill);
	ch->recent[ch->head] = *rec;
	ch->head = (ch->head + 1) % ch->cap;
	if (ch->count < ch->cap)
		ch->count++;
}

/* bpf_ktime_get_ns() is CLOCK_MONOTONIC; logs and people want wall time. */
static uint64_t mono_ns_to_real_usec(uint64_t ts_ns)
{
	uint64_t mono = now_mono_usec(), real = now_real_usec(), ts = ts_ns / 1000;

	return ts <= mono ? real - (mono - ts) : real;
}

static void call_subscribers(struct event_channel *ch, const struct memwatch_event *e, struct event_record *rec)
{
	size_t i;

	if (rec->kind >= EVENT_KINDS)
		return;
	pthread_mutex_lock(&ch->subscribers_lock);
	for (i = 0; i < ch->n_subscribers; i++)
		if (ch->subscribers[i].kinds & EVENT_KIND_BIT(rec->kind))
			ch->subscribers[i].fn(ch->subscribers[i].userdata, e, rec);
	pthread_mutex_unlock(&ch->subscribers_lock);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct event_channel *ch = ctx;
	struct memwatch_event e;
	struct event_record rec = { 0 };
	const char *cgroup_source = "none";

	if (size < sizeof(e)) {
		pthread_mutex_lock(&ch->lock);
		ch->consumer_dropped++;
		pthread_mutex_unlock(&ch->lock);
		return 0;
	}
	memcpy(&e, data, sizeof(e));
	rec.real_usec = mono_ns_to_real_usec(e.ts_ns);
	rec.kind = e.kind < EVENT_KINDS ? e.kind : EVENT_KINDS;
	rec.pid = e.pid;
	rec.tid = e.tid;
	memcpy(rec.comm, e.comm, EVENT_COMM_LEN);
	rec.cgroup_id = e.cgroup_id;
	rec.value = e.value;
	rec.avail_bytes = NAN;
	rec.avail_source = "none";
	/* A kill's cgroup is named whatever the rescans' rate: a container's
	 * cgroup is made just before and goes right after. */
	if (ch->cgroup_table >= 0 && e.cgroup_id &&
	    (is_kill(rec.kind) ? cgroup_hierarchy_lookup_urgent : cgroup_hierarchy_lookup)(
		    ch->cgroups, ch->cgroup_table, e.cgroup_id, now_mono_usec(), rec.cgroup, sizeof(rec.cgroup)) == 0)
		cgroup_source = "table";
	if (is_kill(rec.kind)) {
		bool from_kill = !rec.cgroup[0] && name_from_kill(ch, &e, rec.cgroup, sizeof(rec.cgroup));

		if (from_kill)
			cgroup_source = "kill";
		rec.kill = kill_record_new(ch, &e, cgroup_source, from_kill ? rec.cgroup : NULL);
		if (rec.kill && !pressure_from_kill(&e, rec.kill))
			read_cgroup_pressure(ch->cgroups, rec.cgroup, rec.kill);
	}
	call_subscribers(ch, &e, &rec);
	if (ch->sink)
		ch->sink(ch->sink_userdata, &rec);

	pthread_mutex_lock(&ch->lock);
	if (rec.kind < EVENT_KINDS)
		ch->received[rec.kind]++;
	keep_record(ch, &rec);
	pthread_mutex_unlock(&ch->lock);
	return 0;
}

static void handle_perf_event(void *ctx, int cpu, void *data, __u32 size)
{
	handle_event(ctx, data, size);
}

static void handle_perf_lost(void *ctx, int cpu, __u64 lost)
{
	struct event_channel *ch = ctx;

	pthread_mutex_lock(&ch->lock);
	ch->consumer_dropped += lost;
	pthread_mutex_unlock(&ch->lock);
}

/* Sleeps until an event or a wake-up arrives: no timer, so an idle machine
 * costs this thread nothing. Paused (debug_pause_events, for tests that fill
 * the buffer), it waits for the wake-up alone. */
static void *consumer_main(void *arg)
{
	struct event_channel *ch = arg;
	struct pollfd pfd[2] = {
		{ .fd = ch->wake_fd, .events = POLLIN },
		{ .fd = ch->rb ? ring_buffer__epoll_fd(ch->rb) : perf_buffer__epoll_fd(ch->pb), .events = POLLIN },
	};

	while (!atomic_load(&ch->stop)) {
		uint64_t wakes;
		int r;

		if (poll(pfd, atomic_load(&ch->paused) ? 1 : 2, -1) < 0) {
			if (errno != EINTR) {
				log_warning_errno(-errno, "Event channel: poll failed: %m");
				usleep(RETRY_MSEC * 1000);
			}
			continue;
		}
		if (pfd[0].revents)
			(void)!read(ch->wake_fd, &wakes, sizeof(wakes));
		if (!pfd[1].revents || atomic_load(&ch->paused))
			continue;
		if (atomic_exchange(&ch->watching, false)) {
			uint64_t one = 1;

			(void)!write(ch->stir_fd, &one, sizeof(one));
		}
		r = ch->rb ? ring_buffer__consume(ch->rb) : perf_buffer__consume(ch->pb);
		if (r < 0 && r != -EINTR) {
			log_warning_errno(r, "Event channel: reading the buffer failed: %m");
			usleep(RETRY_MSEC * 1000);
		}
	}
	return NULL;
}

static void wake_consumer(struct event_channel *ch)
{
	uint64_t one = 1;

	if (ch->wake_fd >= 0)
		(void)!write(ch->wake_fd, &one, sizeof(one));
}

static int create_buffer(struct event_channel *ch, size_t buffer_bytes, bool perf_buffer)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	int ncpus = libbpf_num_possible_cpus();

	/* Probe by trying: a ring buffer (5.8+), else a perf event array. */
	ch->fd = perf_buffer ? -1 :
		bpf_map_create(BPF_MAP_TYPE_RINGBUF, "memwatch_events", 0, 0, (__u32)buffer_bytes, &opts);
	ch->ringbuf = ch->fd >= 0;
	if (ch->fd < 0) {
		if (ncpus <= 0)
			return -EINVAL;
		ch->fd = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "memwatch_events", sizeof(int), sizeof(int),
					(__u32)ncpus, &opts);
		if (ch->fd < 0)
			return -errno;
	}
	return 0;
}

static size_t round_buffer(size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = page;

	while (n < bytes && n < (1u << 30))
		n <<= 1;
	return n;
}

int event_channel_new(const struct event_settings *settings, struct cgroup_hierarchy *cgroups,
		      struct event_channel **ret)
{
	_cleanup_(event_channel_freep) struct event_channel *ch = NULL;
	int r;

	*ret = NULL;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->fd = ch->wake_fd = ch->stir_fd = ch->cgroup_table = -1;
	pthread_mutex_init(&ch->lock, NULL);
	pthread_mutex_init(&ch->subscribers_lock, NULL);
	ch->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ch->stir_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ch->wake_fd < 0 || ch->stir_fd < 0) {
		r = -errno;
		log_warning_errno(r, "Event channel unavailable (no eventfd for its consumer): %m");
		return r;
	}
	r = create_buffer(ch, round_buffer(settings->buffer_bytes), settings->perf_buffer);
	if (r < 0) {
		log_warning_errno(r, "Event channel unavailable (no ring buffer or perf buffer): %m");
		return r;
	}
	if (ch->ringbuf)
		ch->rb = ring_buffer__new(ch->fd, handle_event, ch, NULL);
	else
		ch->pb = perf_buffer__new(ch->fd, 16, handle_perf_event, handle_perf_lost, ch, NULL);
	if (!ch->rb && !ch->pb) {
		r = -errno;
		log_warning_errno(r, "Event channel: cannot open the buffer: %m");
		return r;
	}
	ch->cgroups = cgroups;
	if (ch->cgroups)
		ch->cgroup_table = cgroup_hierarchy_table_acquire(ch->cgroups, NULL, 65536);
	event_channel_apply(ch, settings);
	log_info("Event channel: %s, %zu bytes", ch->ringbuf ? "ring buffer" : "perf buffer",
		 round_buffer(settings->buffer_bytes));
	*ret = TAKE_PTR(ch);
	return 0;
}

int event_channel_start(struct event_channel *ch)
{
	int r;

	if (!ch || ch->thread_started)
		return 0;
	r = -pthread_create(&ch->thread, NULL, consumer_main, ch);
	if (r < 0)
		return log_warning_errno(r, "Event channel: cannot start the consumer: %m");
	ch->thread_started = true;
	return 0;
}

void event_channel_free(struct event_channel *ch)
{
	if (!ch)
		return;
	if (ch->thread_started) {
		atomic_store(&ch->stop, true);
		wake_consumer(ch);
		pthread_join(ch->thread, NULL);
	}
	if (ch->wake_fd >= 0)
		close(ch->wake_fd);
	if (ch->stir_fd >= 0)
		close(ch->stir_fd);
	ring_buffer__free(ch->rb);
	perf_buffer__free(ch->pb);
	if (ch->fd >= 0)
		close(ch->fd);
	cgroup_hierarchy_table_release(ch->cgroups, ch->cgroup_table);
	for (size_t i = 0; i < ch->count; i++)
		free(ch->recent[(ch->head + ch->cap - ch->count + i) % ch->cap].kill);
	free(ch->recent);
	pthread_mutex_destroy(&ch->subscribers_lock);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
}

void event_channel_apply(struct event_channel *ch, const struct event_settings *settings)
{
	struct event_record *recent;
	size_t i, cap = settings->history;

	if (!ch)
		return;
	if (atomic_exchange(&ch->paused, settings->paused) != settings->paused)
		wake_consumer(ch);
	pthread_mutex_lock(&ch->lock);
	ch->gate_ns = settings->gate_msec * 1000000ULL;
	for (i = 0; i < ch->n_sources; i++)
		__atomic_store_n(&ch->sources[i]->gate_ns, ch->gate_ns, __ATOMIC_RELAXED);
	if (cap != ch->cap) {
		recent = calloc(cap ? cap : 1, sizeof(*recent));
		if (recent) {
			size_t keep = ch->count < cap ? ch->count : cap;

			/* Keep the newest events, oldest first. */
			for (i = keep; i < ch->count; i++)
				free(ch->recent[(ch->head + ch->cap - i - 1) % ch->cap].kill);
			for (i = 0; i < keep; i++)
				recent[i] = ch->recent[(ch->head + ch->cap - keep + i) % ch->cap];
			free(ch->recent);
			ch->recent = recent;
			ch->cap = cap;
			ch->count = keep;
			ch->head = cap ? keep % cap : 0;
		}
	}
	pthread_mutex_unlock(&ch->lock);
}

int event_channel_prepare(struct event_channel *ch, struct bpf_map *events, volatile bool *ringbuf_flag)
{
	if (!ch)
		return 0; /* no channel: the object keeps its own small buffer and its events go nowhere */
	*ringbuf_flag = ch->ringbuf;
	return bpf_map__reuse_fd(events, ch->fd);
}

void event_channel_add_source(struct event_channel *ch, struct event_counters *counters)
{
	if (!ch)
		return;
	pthread_mutex_lock(&ch->lock);
	if (ch->n_sources < MAX_SOURCES) {
		__atomic_store_n(&counters->gate_ns, ch->gate_ns, __ATOMIC_RELAXED);
		ch->sources[ch->n_sources++] = counters;
	}
	pthread_mutex_unlock(&ch->lock);
}

void event_channel_remove_source(struct event_channel *ch, struct event_counters *counters)
{
	size_t i;

	if (!ch)
		return;
	pthread_mutex_lock(&ch->lock);
	for (i = 0; i < ch->n_sources; i++)
		if (ch->sources[i] == counters) {
			for (size_t k = 0; k < EVENT_KINDS; k++) {
				ch->retired_dropped[k] += __atomic_load_n(&counters->dropped[k], __ATOMIC_RELAXED);
				ch->retired_gated[k] += __atomic_load_n(&counters->gated[k], __ATOMIC_RELAXED);
				ch->retired_emitted[k] += __atomic_load_n(&counters->emitted[k], __ATOMIC_RELAXED);
			}
			ch->sources[i] = ch->sources[--ch->n_sources];
			break;
		}
	pthread_mutex_unlock(&ch->lock);
}

void event_channel_set_sink(struct event_channel *ch, event_sink_fn fn, void *userdata)
{
	if (!ch)
		return;
	pthread_mutex_lock(&ch->subscribers_lock);
	ch->sink = fn;
	ch->sink_userdata = userdata;
	pthread_mutex_unlock(&ch->subscribers_lock);
}

void event_channel_restore(struct event_channel *ch, struct event_record *recs, size_t n)
{
	struct event_record *merged;
	size_t i, live, old, total;

	if (!ch) {
		for (i = 0; i < n; i++) {
			free(recs[i].kill);
			recs[i].kill = NULL;
		}
		return;
	}
	pthread_mutex_lock(&ch->lock);
	live = ch->count;
	old = n < ch->cap - live ? n : ch->cap - live; /* the live events win the room */
	total = live + old;
	merged = calloc(ch->cap ? ch->cap : 1, sizeof(*merged));
	if (merged) {
		/* The newest `old` of the restored ones, then the live ones. */
		for (i = 0; i < old; i++) {
			merged[i] = recs[n - old + i];
			recs[n - old + i].kill = NULL;
		}
		for (i = 0; i < live; i++)
			merged[old + i] = ch->recent[(ch->head + ch->cap - live + i) % ch->cap];
		free(ch->recent);
		ch->recent = merged;
		ch->count = total;
		ch->head = ch->cap ? total % ch->cap : 0;
	}
	pthread_mutex_unlock(&ch->lock);
	for (i = 0; i < n; i++) {
		free(recs[i].kill);
		recs[i].kill = NULL;
	}
}

int event_channel_subscribe(struct event_channel *ch, unsigned kinds, event_handler_fn fn, void *userdata)
{
	int r = 0;

	if (!ch)
		return 0;
	pthread_mutex_lock(&ch->subscribers_lock);
	if (ch->n_subscribers < MAX_SUBSCRIBERS)
		ch->subscribers[ch->n_subscribers++] = (struct subscriber){ kinds, fn, userdata };
	else
		r = -ENOSPC;
	pthread_mutex_unlock(&ch->subscribers_lock);
	return r;
}

void event_channel_unsubscribe(struct event_channel *ch, event_handler_fn fn, void *userdata)
{
	size_t i;

	if (!ch)
		return;
	pthread_mutex_lock(&ch->subscribers_lock);
	for (i = 0; i < ch->n_subscribers; i++)
		if (ch->subscribers[i].fn == fn && ch->subscribers[i].userdata == userdata) {
			/* In order: handlers run in the order they subscribed. */
			memmove(&ch->subscribers[i], &ch->subscribers[i + 1],
				(ch->n_subscribers - i - 1) * sizeof(ch->subscribers[0]));
			ch->n_subscribers--;
			break;
		}
	pthread_mutex_unlock(&ch->subscribers_lock);
}

/* Every pressure instant the kernel saw, by kind: sent, gated or dropped. */
void event_channel_between_events(struct event_channel *ch, void (*fn)(void *userdata), void *userdata)
{
	if (ch)
		pthread_mutex_lock(&ch->subscribers_lock);
	fn(userdata);
	if (ch)
		pthread_mutex_unlock(&ch->subscribers_lock);
}

bool event_channel_watch(struct event_channel *ch, bool on)
{
	uint64_t n;

	if (!ch)
		return true;
	atomic_store(&ch->watching, on);
	if (!on)
		(void)!read(ch->stir_fd, &n, sizeof(n));
	/* Paused, the consumer reads nothing: only the instants count moves. */
	return ch->thread_started && !atomic_load(&ch->paused);
}

int event_channel_stir_fd(const struct event_channel *ch)
{
	return ch ? ch->stir_fd : -1;
}

uint64_t event_channel_instants_total(struct event_channel *ch)
{
	uint64_t total = 0;
	size_t i, k;

	if (!ch)
		return 0;
	pthread_mutex_lock(&ch->lock);
	for (k = 0; k < EVENT_KINDS; k++) {
		total += ch->retired_emitted[k] + ch->retired_gated[k] + ch->retired_dropped[k];
		for (i = 0; i < ch->n_sources; i++)
			total += __atomic_load_n(&ch->sources[i]->emitted[k], __ATOMIC_RELAXED) +
				 __atomic_load_n(&ch->sources[i]->gated[k], __ATOMIC_RELAXED) +
				 __atomic_load_n(&ch->sources[i]->dropped[k], __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&ch->lock);
	return total;
}

void event_channel_collect(struct event_channel *ch, struct snapshot *snap)
{
	uint64_t dropped = 0, gated[EVENT_KINDS] = { 0 }, instants[EVENT_KINDS] = { 0 }, received[EVENT_KINDS];
	uint64_t consumer;
	size_t i, k;

	if (!ch)
		return;
	pthread_mutex_lock(&ch->lock);
	for (k = 0; k < EVENT_KINDS; k++) {
		dropped += ch->retired_dropped[k];
		gated[k] = ch->retired_gated[k];
		instants[k] = ch->retired_emitted[k] + ch->retired_gated[k] + ch->retired_dropped[k];
	}
	for (i = 0; i < ch->n_sources; i++)
		for (k = 0; k < EVENT_KINDS; k++) {
			uint64_t d = __atomic_load_n(&ch->sources[i]->dropped[k], __ATOMIC_RELAXED);
			uint64_t g = __atomic_load_n(&ch->sources[i]->gated[k], __ATOMIC_RELAXED);

			dropped += d;
			gated[k] += g;
			instants[k] += d + g + __atomic_load_n(&ch->sources[i]->emitted[k], __ATOMIC_RELAXED);
		}
	memcpy(received, ch->received, sizeof(received));
	consumer = ch->consumer_dropped;
	pthread_mutex_unlock(&ch->lock);

	snapshot_add(snap, METRIC(MW_EVENTS_DROPPED_TOTAL), (const char *const[]){ ch->ringbuf ? "ringbuf" : "perfbuf" }, (double)dropped);
	snapshot_add(snap, METRIC(MW_EVENTS_DROPPED_TOTAL), (const char *const[]){ "consumer" }, (double)consumer);
	for (k = 0; k < EVENT_KINDS; k++) {
		snapshot_add(snap, METRIC(MW_EVENTS_RECEIVED_TOTAL), (const char *const[]){ event_kind_name((unsigned)k) }, (double)received[k]);
		snapshot_add(snap, METRIC(MW_EVENTS_GATED_TOTAL), (const char *const[]){ event_kind_name((unsigned)k) }, (double)gated[k]);
		snapshot_add(snap, METRIC(MW_PRESSURE_EVENTS_TOTAL), (const char *const[]){ event_kind_name((unsigned)k) },
			     (double)instants[k]);
	}
}

void event_channel_foreach_recent(struct event_channel *ch, void (*fn)(const struct event_record *e, void *ud),
				  void *ud)
{
	size_t i;

	if (!ch)
		return;
	pthread_mutex_lock(&ch->lock);
	for (i = 0; i < ch->count; i++)
		fn(&ch->recent[(ch->head + ch->cap - ch->count + i) % ch->cap], ud);
	pthread_mutex_unlock(&ch->lock);
}
