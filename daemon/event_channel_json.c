// SPDX-License-Identifier: GPL-2.0
/* /api/v1/events: the channel's recent events as JSON. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "event_channel.h"
#include "json.h"
#include "strbuf.h"

static void put_time(struct strbuf *sb, uint64_t real_usec)
{
	time_t t = (time_t)(real_usec / USEC_PER_SEC);
	struct tm tm;
	char buf[64];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	strbuf_printf(sb, "\"%s.%06" PRIu64 "Z\"", buf, (uint64_t)(real_usec % USEC_PER_SEC));
}

static void put_pages(struct strbuf *sb, const char *key, bool known, uint64_t pages, long page_size)
{
	strbuf_printf(sb, ",\"%s\":", key);
	if (known)
		strbuf_printf(sb, "%" PRIu64, pages * (uint64_t)page_size);
	else
		strbuf_puts(sb, "null");
}

static void put_labelled(struct strbuf *sb, const char *key, const char *value)
{
	strbuf_printf(sb, ",\"%s\":", key);
	json_put_string(sb, value);
}

/* sep: '{' for an object's first member, ',' for the others. */
static void put_number(struct strbuf *sb, char sep, const char *key, double v)
{
	strbuf_printf(sb, "%c\"%s\":", sep, key);
	json_put_number(sb, v);
}

static void render_kill(struct strbuf *sb, unsigned kind, const struct kill_record *k, long page_size)
{
	bool rss = k->flags & KILL_HAS_RSS, oomcg = k->flags & KILL_HAS_OOM_CGROUP;

	if (kind == EVENT_OOM_KILL) {
		put_labelled(sb, "scope", oom_scope_name(k->flags & KILL_HAS_SCOPE ? k->raw.scope : OOM_SCOPE_UNKNOWN));
		put_labelled(sb, "scope_source", !(k->flags & KILL_HAS_SCOPE) ? "none" :
						 k->flags & KILL_SCOPE_FROM_CONTROL ? "oom_control" : "memcg_walk");
		strbuf_puts(sb, ",\"oom_cgroup\":");
		if (oomcg)
			json_put_string(sb, k->oom_cgroup);
		else
			strbuf_puts(sb, "null");
		put_pages(sb, "oom_cgroup_usage_bytes", oomcg, k->raw.oom_usage_pages, page_size);
		put_pages(sb, "oom_cgroup_limit_bytes", oomcg, k->raw.oom_limit_pages, page_size);
		put_pages(sb, "anon_rss_bytes", rss, k->raw.rss_anon_pages, page_size);
		put_pages(sb, "file_rss_bytes", rss, k->raw.rss_file_pages, page_size);
		put_pages(sb, "shmem_rss_bytes", rss, k->raw.rss_shmem_pages, page_size);
		if (k->flags & KILL_HAS_SCORE_ADJ)
			strbuf_printf(sb, ",\"oom_score_adj\":%d", k->raw.oom_score_adj);
		else
			strbuf_puts(sb, ",\"oom_score_adj\":null");
	} else {
		put_labelled(sb, "killer", k->killer);
		strbuf_printf(sb, ",\"killer_pid\":%u,\"signal\":", k->raw.killer_pid);
		json_put_string(sb, k->raw.signal == 9 ? "SIGKILL" : k->raw.signal == 15 ? "SIGTERM" : "other");
	}
	put_labelled(sb, "cgroup_source", k->cgroup_source ? k->cgroup_source : "none");
	put_labelled(sb, "unit", k->names.unit);
	put_labelled(sb, "namespace", k->names.namespace_);
	put_labelled(sb, "pod", k->names.pod);
	put_labelled(sb, "container", k->names.container);
	strbuf_puts(sb, ",\"cgroup_pressure\":");
	if (isnan(k->psi_some_avg10)) {
		strbuf_puts(sb, "null");
	} else {
		put_number(sb, '{', "some_avg10", k->psi_some_avg10);
		put_number(sb, ',', "full_avg10", k->psi_full_avg10);
		put_number(sb, ',', "some_seconds_total", k->psi_some_total_sec);
		put_number(sb, ',', "full_seconds_total", k->psi_full_total_sec);
		if (k->psi_source)
			put_labelled(sb, "source", k->psi_source);
		strbuf_putc(sb, '}');
	}
	strbuf_printf(sb, ",\"restored\":%s", k->restored ? "true" : "false");
}

struct render_ctx {
	struct strbuf *sb;
	size_t n;
	long page_size;
};

static void render_event(const struct event_record *e, void *userdata)
{
	struct render_ctx *r = userdata;
	struct strbuf *sb = r->sb;

	strbuf_puts(sb, r->n++ ? ",\n{" : "\n{");
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
	json_put_string(sb, e->avail_source);
	if (e->kind == EVENT_OOM_KILL)
		strbuf_printf(sb, ",\"total_vm_bytes\":%" PRIu64, e->value * (uint64_t)r->page_size);
	else if (e->kind != EVENT_USERSPACE_KILL)
		strbuf_printf(sb, ",\"order\":%" PRIu64, e->value);
	if (e->kill)
		render_kill(sb, e->kind, e->kill, r->page_size);
	strbuf_putc(sb, '}');
}

int event_channel_render_json(struct event_channel *ch, struct strbuf *sb)
{
	struct render_ctx r = { .sb = sb, .page_size = sysconf(_SC_PAGESIZE) };

	strbuf_puts(sb, "{\"events\":[");
	event_channel_foreach_recent(ch, render_event, &r);
	strbuf_puts(sb, "\n]}\n");
	return strbuf_failed(sb) ? -ENOMEM : 0;
}
