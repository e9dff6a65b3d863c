// SPDX-License-Identifier: GPL-2.0
#include <linux/types.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "cgroup_hierarchy.h"
#include "core.h"
#include "event_channel.h"
#include "fileio.h"
#include "json.h"
#include "log.h"
#include "meminfo.h"

#define MAX_SOURCES 16
#define MAX_OOM_CGROUPS 512
#define RETRY_MSEC 100

struct oom_cgroup {
	char path[256];
	uint64_t kills;
};

struct event_channel {
	int fd;            /* the shared ring buffer or perf event array */
	int memavail_fd;   /* the shared memavail_latest array */
	bool ringbuf;
	struct ring_buffer *rb;
	struct perf_buffer *pb;
	pthread_t thread;
	bool thread_started;
	int wake_fd; /* eventfd: stop or pause changed */
	atomic_bool stop;
	atomic_bool paused;
	atomic_int memavail_source;
	long page_size;

	/* Owned by the consumer thread. */
	struct procfile meminfo;
	struct cgroup_hierarchy *cgroups;
	int cgroup_table; /* -1: no cgroup paths; the hierarchy locks its tables */

	/* Guarded by lock: read by the main thread (collect) and HTTP threads (JSON). */
	pthread_mutex_t lock;
	struct event_record *recent;
	size_t cap, head, count;
	uint64_t received[EVENT_KINDS];
	uint64_t consumer_dropped;
	bool window_has_min;
	double window_min;
	struct oom_cgroup oom_cgroups[MAX_OOM_CGROUPS];
	size_t n_oom_cgroups;
	uint64_t oom_cgroups_folded;
	uint64_t last_oom_real_usec;
	struct event_counters *sources[MAX_SOURCES];
	size_t n_sources;
	/* What removed sources (collectors stopped or restarted) had counted:
	 * the totals never go back when a collector's BPF object goes. */
	uint64_t retired_dropped[EVENT_KINDS], retired_gated[EVENT_KINDS], retired_emitted[EVENT_KINDS];
	uint64_t gate_ns;
};

static struct event_channel *channel;

const char *event_kind_name(unsigned kind)
{
	static const char *const names[EVENT_KINDS] = {
		[EVENT_DIRECT_RECLAIM] = "direct_reclaim",
		[EVENT_MEMCG_RECLAIM] = "memcg_reclaim",
		[EVENT_OOM_KILL] = "oom_kill",
		[EVENT_ALLOC_FAILURE] = "alloc_failure",
	};

	return kind < EVENT_KINDS ? names[kind] : "unknown";
}

const char *memavail_source_name(enum memavail_source s)
{
	switch (s) {
	case MEMAVAIL_FEXIT:
		return "fexit";
	case MEMAVAIL_KPROBE:
		return "kprobe";
	case MEMAVAIL_COUNTERS:
		return "counters";
	case MEMAVAIL_PROCFS:
		return "procfs";
	case MEMAVAIL_NONE:
	default:
		return "none";
	}
}

/* bpf_ktime_get_ns() is CLOCK_MONOTONIC; logs and people want wall time. */
static uint64_t mono_ns_to_real_usec(uint64_t ts_ns)
{
	uint64_t mono = now_mono_usec(), real = now_real_usec(), ts = ts_ns / 1000;

	return ts <= mono ? real - (mono - ts) : real;
}

static void note_oom_cgroup(struct event_channel *ch, const char *path)
{
	size_t i;

	for (i = 0; i < ch->n_oom_cgroups; i++)
		if (strcmp(ch->oom_cgroups[i].path, path) == 0) {
			ch->oom_cgroups[i].kills++;
			return;
		}
	if (ch->n_oom_cgroups == MAX_OOM_CGROUPS) {
		ch->oom_cgroups_folded++;
		return;
	}
	snprintf(ch->oom_cgroups[ch->n_oom_cgroups].path, sizeof(ch->oom_cgroups[0].path), "%s", path);
	ch->oom_cgroups[ch->n_oom_cgroups++].kills = 1;
}

static void fill_available(struct event_channel *ch, const struct memwatch_event *e, struct event_record *rec)
{
	enum memavail_source src = atomic_load(&ch->memavail_source);
	double bytes;

	rec->avail_bytes = NAN;
	rec->avail_source = MEMAVAIL_NONE;
	/* The kernel's own figure, if it was computed close to the event; or
	 * the one computed at the event. Without either (counters that could not
	 * be read this time), /proc/meminfo now is the next best. */
	if ((src == MEMAVAIL_FEXIT || src == MEMAVAIL_KPROBE || src == MEMAVAIL_COUNTERS) && e->avail_ts_ns &&
	    e->ts_ns >= e->avail_ts_ns && e->ts_ns - e->avail_ts_ns <= 2 * NSEC_PER_SEC) {
		rec->avail_bytes = (double)e->avail_pages * (double)ch->page_size;
		rec->avail_source = src;
		return;
	}
	if (src == MEMAVAIL_NONE || ch->meminfo.fd < 0)
		return;
	if (meminfo_read_available(&ch->meminfo, &bytes) == 0) {
		rec->avail_bytes = bytes;
		rec->avail_source = MEMAVAIL_PROCFS;
	}
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct event_channel *ch = ctx;
	struct memwatch_event e;
	struct event_record rec = { 0 };

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
	if (e.kind == EVENT_OOM_KILL && !rec.comm[0] && rec.pid) {
		/* Old kernels pass only the pid: the victim is usually still there. */
		char p[64], *text = NULL;

		snprintf(p, sizeof(p), "/proc/%u/comm", rec.pid);
		if (read_full_file(p, 64, &text, NULL) == 0) {
			snprintf(rec.comm, sizeof(rec.comm), "%.*s", (int)strcspn(text, "\n"), text);
			free(text);
		}
	}
	if (ch->cgroup_table >= 0 && e.cgroup_id)
		(void)cgroup_hierarchy_lookup(ch->cgroups, ch->cgroup_table, e.cgroup_id, now_mono_usec(), rec.cgroup,
					      sizeof(rec.cgroup));
	fill_available(ch, &e, &rec);

	pthread_mutex_lock(&ch->lock);
	if (rec.kind < EVENT_KINDS)
		ch->received[rec.kind]++;
	if (rec.kind != EVENT_OOM_KILL && !isnan(rec.avail_bytes) &&
	    (!ch->window_has_min || rec.avail_bytes < ch->window_min)) {
		ch->window_min = rec.avail_bytes;
		ch->window_has_min = true;
	}
	if (rec.kind == EVENT_OOM_KILL) {
		note_oom_cgroup(ch, rec.cgroup[0] ? rec.cgroup : "unknown");
		ch->last_oom_real_usec = rec.real_usec;
	}
	if (ch->cap) {
		ch->recent[ch->head] = rec;
		ch->head = (ch->head + 1) % ch->cap;
		if (ch->count < ch->cap)
			ch->count++;
	}
	pthread_mutex_unlock(&ch->lock);
	if (rec.kind == EVENT_OOM_KILL)
		log_notice("OOM kill: pid %u (%s) in cgroup %s", rec.pid, rec.comm, rec.cgroup[0] ? rec.cgroup : "?");
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

static int create_shared_maps(struct event_channel *ch, size_t buffer_bytes, bool perf_buffer)
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
	ch->memavail_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "memavail_latest", sizeof(__u32),
					 sizeof(struct memavail_latest), 1, &opts);
	if (ch->memavail_fd < 0)
		return -errno;
	return 0;
}

static size_t round_buffer(size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = page;

	while (n < bytes && n < (1u << 30))
		n <<= 1;
	return n;
}

int event_channel_open(const struct event_settings *settings)
{
	struct event_channel *ch;
	int r;

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->fd = ch->memavail_fd = ch->wake_fd = ch->cgroup_table = -1;
	ch->meminfo.fd = -1;
	ch->page_size = sysconf(_SC_PAGESIZE);
	pthread_mutex_init(&ch->lock, NULL);
	channel = ch;
	ch->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ch->wake_fd < 0) {
		r = -errno;
		log_warning_errno(r, "Event channel unavailable (no eventfd for its consumer): %m");
		goto fail;
	}
	r = create_shared_maps(ch, round_buffer(settings->buffer_bytes), settings->perf_buffer);
	if (r < 0) {
		log_warning_errno(r, "Event channel unavailable (no ring buffer or perf buffer): %m");
		goto fail;
	}
	if (ch->ringbuf)
		ch->rb = ring_buffer__new(ch->fd, handle_event, ch, NULL);
	else
		ch->pb = perf_buffer__new(ch->fd, 16, handle_perf_event, handle_perf_lost, ch, NULL);
	if (!ch->rb && !ch->pb) {
		r = -errno;
		log_warning_errno(r, "Event channel: cannot open the buffer: %m");
		goto fail;
	}
	procfile_open(&ch->meminfo, "/proc/meminfo", 1 << 20);
	ch->cgroups = cgroup_hierarchy_shared();
	if (ch->cgroups)
		ch->cgroup_table = cgroup_hierarchy_table_acquire(ch->cgroups, NULL, 65536);
	event_channel_apply(settings);
	log_info("Event channel: %s, %zu bytes", ch->ringbuf ? "ring buffer" : "perf buffer",
		 round_buffer(settings->buffer_bytes));
	return 0;
fail:
	event_channel_close();
	return r;
}

int event_channel_start(void)
{
	struct event_channel *ch = channel;
	int r;

	if (!ch || ch->thread_started)
		return 0;
	r = -pthread_create(&ch->thread, NULL, consumer_main, ch);
	if (r < 0)
		return log_warning_errno(r, "Event channel: cannot start the consumer: %m");
	ch->thread_started = true;
	return 0;
}

void event_channel_close(void)
{
	struct event_channel *ch = channel;

	if (!ch)
		return;
	if (ch->thread_started) {
		atomic_store(&ch->stop, true);
		wake_consumer(ch);
		pthread_join(ch->thread, NULL);
	}
	if (ch->wake_fd >= 0)
		close(ch->wake_fd);
	ring_buffer__free(ch->rb);
	perf_buffer__free(ch->pb);
	if (ch->fd >= 0)
		close(ch->fd);
	if (ch->memavail_fd >= 0)
		close(ch->memavail_fd);
	if (ch->meminfo.fd >= 0)
		procfile_close(&ch->meminfo);
	cgroup_hierarchy_table_release(ch->cgroups, ch->cgroup_table);
	free(ch->recent);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	channel = NULL;
}

void event_channel_apply(const struct event_settings *settings)
{
	struct event_channel *ch = channel;
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

int event_channel_prepare_object(struct bpf_object *obj, volatile bool *ringbuf_flag)
{
	struct event_channel *ch = channel;
	struct bpf_map *events, *memavail;
	int r;

	events = bpf_object__find_map_by_name(obj, "events");
	memavail = bpf_object__find_map_by_name(obj, "memavail");
	if (!ch || !events || !memavail)
		return 0; /* no channel: the object keeps its own small maps and its events go nowhere */
	if (ringbuf_flag)
		*ringbuf_flag = ch->ringbuf;
	r = bpf_map__reuse_fd(events, ch->fd);
	if (r < 0)
		return r;
	return bpf_map__reuse_fd(memavail, ch->memavail_fd);
}

void event_channel_add_source(struct event_counters *counters)
{
	struct event_channel *ch = channel;

	if (!ch)
		return;
	pthread_mutex_lock(&ch->lock);
	if (ch->n_sources < MAX_SOURCES) {
		__atomic_store_n(&counters->gate_ns, ch->gate_ns, __ATOMIC_RELAXED);
		ch->sources[ch->n_sources++] = counters;
	}
	pthread_mutex_unlock(&ch->lock);
}

void event_channel_remove_source(struct event_counters *counters)
{
	struct event_channel *ch = channel;
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

int event_channel_memavail_fd(void)
{
	return channel ? channel->memavail_fd : -1;
}

void event_channel_set_memavail_source(enum memavail_source s)
{
	if (channel)
		atomic_store(&channel->memavail_source, (int)s);
}

bool event_channel_take_window_min(double *bytes)
{
	struct event_channel *ch = channel;
	bool has;

	if (!ch)
		return false;
	pthread_mutex_lock(&ch->lock);
	has = ch->window_has_min;
	*bytes = ch->window_min;
	ch->window_has_min = false;
	pthread_mutex_unlock(&ch->lock);
	return has;
}

void event_channel_counts(uint64_t received[EVENT_KINDS])
{
	struct event_channel *ch = channel;

	memset(received, 0, EVENT_KINDS * sizeof(*received));
	if (!ch)
		return;
	pthread_mutex_lock(&ch->lock);
	memcpy(received, ch->received, EVENT_KINDS * sizeof(*received));
	pthread_mutex_unlock(&ch->lock);
}

void event_channel_foreach_oom_cgroup(void (*fn)(const char *cgroup, uint64_t kills, void *ud), void *ud)
{
	struct event_channel *ch = channel;
	size_t i;

	if (!ch)
		return;
	pthread_mutex_lock(&ch->lock);
	for (i = 0; i < ch->n_oom_cgroups; i++)
		fn(ch->oom_cgroups[i].path, ch->oom_cgroups[i].kills, ud);
	if (ch->oom_cgroups_folded)
		fn("other", ch->oom_cgroups_folded, ud);
	pthread_mutex_unlock(&ch->lock);
}

void event_channel_instants(uint64_t out[EVENT_KINDS])
{
	struct event_channel *ch = channel;
	size_t i, k;

	memset(out, 0, EVENT_KINDS * sizeof(*out));
	if (!ch)
		return;
	pthread_mutex_lock(&ch->lock);
	for (k = 0; k < EVENT_KINDS; k++)
		out[k] = ch->retired_emitted[k] + ch->retired_gated[k] + ch->retired_dropped[k];
	for (i = 0; i < ch->n_sources; i++)
		for (k = 0; k < EVENT_KINDS; k++)
			out[k] += __atomic_load_n(&ch->sources[i]->emitted[k], __ATOMIC_RELAXED) +
				  __atomic_load_n(&ch->sources[i]->gated[k], __ATOMIC_RELAXED) +
				  __atomic_load_n(&ch->sources[i]->dropped[k], __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ch->lock);
}

uint64_t event_channel_last_oom_real_usec(void)
{
	uint64_t t;

	if (!channel)
		return 0;
	pthread_mutex_lock(&channel->lock);
	t = channel->last_oom_real_usec;
	pthread_mutex_unlock(&channel->lock);
	return t;
}

void event_channel_collect(struct snapshot *snap)
{
	struct event_channel *ch = channel;
	uint64_t dropped = 0, gated[EVENT_KINDS] = { 0 }, received[EVENT_KINDS], consumer;
	size_t i, k;

	if (!ch)
		return;
	pthread_mutex_lock(&ch->lock);
	for (k = 0; k < EVENT_KINDS; k++) {
		dropped += ch->retired_dropped[k];
		gated[k] = ch->retired_gated[k];
	}
	for (i = 0; i < ch->n_sources; i++)
		for (k = 0; k < EVENT_KINDS; k++) {
			dropped += __atomic_load_n(&ch->sources[i]->dropped[k], __ATOMIC_RELAXED);
			gated[k] += __atomic_load_n(&ch->sources[i]->gated[k], __ATOMIC_RELAXED);
		}
	memcpy(received, ch->received, sizeof(received));
	consumer = ch->consumer_dropped;
	pthread_mutex_unlock(&ch->lock);

	snapshot_add(snap, METRIC(MW_EVENTS_DROPPED_TOTAL), (const char *const[]){ ch->ringbuf ? "ringbuf" : "perfbuf" }, (double)dropped);
	snapshot_add(snap, METRIC(MW_EVENTS_DROPPED_TOTAL), (const char *const[]){ "consumer" }, (double)consumer);
	for (k = 0; k < EVENT_KINDS; k++) {
		snapshot_add(snap, METRIC(MW_EVENTS_RECEIVED_TOTAL), (const char *const[]){ event_kind_name((unsigned)k) }, (double)received[k]);
		snapshot_add(snap, METRIC(MW_EVENTS_GATED_TOTAL), (const char *const[]){ event_kind_name((unsigned)k) }, (double)gated[k]);
	}
}

static void put_time(struct strbuf *sb, uint64_t real_usec)
{
	time_t t = (time_t)(real_usec / USEC_PER_SEC);
	struct tm tm;
	char buf[64];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	strbuf_printf(sb, "\"%s.%06" PRIu64 "Z\"", buf, (uint64_t)(real_usec % USEC_PER_SEC));
}

void event_channel_foreach_recent(void (*fn)(const struct event_record *e, void *ud), void *ud)
{
	struct event_channel *ch = channel;
	size_t i;

	if (!ch)
		return;
	pthread_mutex_lock(&ch->lock);
	for (i = 0; i < ch->count; i++)
		fn(&ch->recent[(ch->head + ch->cap - ch->count + i) % ch->cap], ud);
	pthread_mutex_unlock(&ch->lock);
}

int event_channel_render_json(struct strbuf *sb)
{
	struct event_channel *ch = channel;
	size_t i;

	strbuf_puts(sb, "{\"events\":[");
	if (ch) {
		pthread_mutex_lock(&ch->lock);
		for (i = 0; i < ch->count; i++) {
			const struct event_record *e = &ch->recent[(ch->head + ch->cap - ch->count + i) % ch->cap];

			strbuf_puts(sb, i ? ",\n{" : "\n{");
			strbuf_puts(sb, "\"time\":");
			put_time(sb, e->real_usec);
			strbuf_printf(sb, ",\"timestamp\":%" PRIu64 ".%06" PRIu64, (uint64_t)(e->real_usec / USEC_PER_SEC),
				      (uint64_t)(e->real_usec % USEC_PER_SEC));
			strbuf_puts(sb, ",\"kind\":");
			json_put_string(sb, event_kind_name(e->kind));
			strbuf_printf(sb, ",\"pid\":%u,\"tid\":%u,\"comm\":", e->pid, e->tid);
			json_put_string(sb, e->comm);
			strbuf_printf(sb, ",\"cgroup_id\":%" PRIu64 ",\"cgroup\":", e->cgroup_id);
			json_put_string(sb, e->cgroup);
			strbuf_puts(sb, ",\"available_bytes\":");
			json_put_number(sb, e->avail_bytes);
			strbuf_puts(sb, ",\"available_source\":");
			json_put_string(sb, memavail_source_name(e->avail_source));
			if (e->kind == EVENT_OOM_KILL)
				strbuf_printf(sb, ",\"total_vm_bytes\":%" PRIu64, e->value * (uint64_t)ch->page_size);
			else
				strbuf_printf(sb, ",\"order\":%" PRIu64, e->value);
			strbuf_putc(sb, '}');
		}
		pthread_mutex_unlock(&ch->lock);
	}
	strbuf_puts(sb, "\n]}\n");
	return strbuf_failed(sb) ? -ENOMEM : 0;
}
