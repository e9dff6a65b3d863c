// SPDX-License-Identifier: GPL-2.0
/* Available memory at the instant of pressure (start of direct and memcg
 * reclaim, allocation failure, OOM kill). Best first, by trying:
 *  fexit    on si_mem_available(): the kernel's own figure, recorded whenever
 *           the kernel computes it (our own meminfo sampler makes it do so at
 *           least every sample interval), stamped into each event;
 *  kprobe   the same through a kretprobe, where fexit cannot attach;
 *  procfs   /proc/meminfo read by the consumer as soon as the event arrives.
 * Computing it in BPF from zone counters is not implemented: on hosts with
 * deferred struct page init it disagrees with /proc/meminfo (docs/metrics.md). */
#include <linux/types.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "collector.h"
#include "event_channel.h"
#include "events.h"
#include "log.h"
#include "memavail.skel.h"

enum method { METHOD_AUTO, METHOD_FEXIT, METHOD_KPROBE, METHOD_PROCFS };

struct memavail_config {
	enum method method;
};

struct memavail_state {
	struct memavail_bpf *skel;
	struct bpf_link *link;
	enum memavail_source source;
	long page_size;
};

static const struct metric_desc desc_at_pressure = {
	"memwatch_memory_available_at_pressure_bytes",
	"Lowest available memory recorded at a pressure instant in this window; absent when there was none.",
	METRIC_GAUGE,
};
static const struct metric_desc desc_instants = {
	"memwatch_pressure_events_total",
	"Pressure instants seen in the kernel, by kind (before the rate gate).", METRIC_COUNTER, 1, { "kind" },
};
static const struct metric_desc desc_kernel = {
	"memwatch_memory_available_kernel_bytes",
	"The last value si_mem_available() returned, caught by fexit or kretprobe.", METRIC_GAUGE,
};

static void memavail_config_defaults(void *cfg)
{
	((struct memavail_config *)cfg)->method = METHOD_AUTO;
}

static int memavail_configure(void *cfg, const char *key, const char *value, char *errmsg, size_t errlen)
{
	static const char *const names[] = { "auto", "fexit", "kprobe", "procfs" };
	size_t i;

	if (strcmp(key, "method") != 0)
		return -ENOENT;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(value, names[i]) == 0) {
			((struct memavail_config *)cfg)->method = (enum method)i;
			return 0;
		}
	snprintf(errmsg, errlen, "'%s' is not one of auto, fexit, kprobe, procfs", value);
	return -EINVAL;
}

static int try_program(struct memavail_state *s, bool fexit)
{
	struct bpf_program *prog;
	int r;

	s->skel = memavail_bpf__open();
	if (!s->skel)
		return -errno;
	prog = fexit ? s->skel->progs.si_mem_available_exit : s->skel->progs.si_mem_available_ret;
	bpf_program__set_autoload(prog, true);
	r = event_channel_prepare_object(s->skel->obj, &s->skel->rodata->events_use_ringbuf);
	if (r == 0)
		r = memavail_bpf__load(s->skel);
	if (r == 0) {
		s->link = bpf_program__attach(prog);
		if (!s->link)
			r = -errno;
	}
	if (r < 0) {
		memavail_bpf__destroy(s->skel);
		s->skel = NULL;
	}
	return r;
}

static int memavail_start(void *priv, const void *cfg, struct collector_status *st)
{
	enum method method = ((const struct memavail_config *)cfg)->method;
	struct memavail_state *s = priv;
	int r_fexit = -EOPNOTSUPP, r_kprobe = -EOPNOTSUPP;

	s->page_size = sysconf(_SC_PAGESIZE);
	log_set_libbpf_quiet(true);
	if (method == METHOD_AUTO || method == METHOD_FEXIT)
		r_fexit = try_program(s, true);
	if (!s->skel && (method == METHOD_AUTO || method == METHOD_KPROBE))
		r_kprobe = try_program(s, false);
	log_set_libbpf_quiet(false);

	if (s->skel) {
		s->source = r_fexit == 0 ? MEMAVAIL_FEXIT : MEMAVAIL_KPROBE;
	} else {
		if (method == METHOD_FEXIT || method == METHOD_KPROBE) {
			collector_status_set_reason(st, "method = %s: cannot attach to si_mem_available (%s)",
						    method == METHOD_FEXIT ? "fexit" : "kprobe",
						    strerror(-(method == METHOD_FEXIT ? r_fexit : r_kprobe)));
			return -EOPNOTSUPP;
		}
		s->source = MEMAVAIL_PROCFS;
		if (method == METHOD_AUTO) {
			st->state = COLLECTOR_DEGRADED;
			collector_status_set_reason(st,
						    "fexit (%s) and kretprobe (%s) on si_mem_available unavailable: "
						    "reading /proc/meminfo as each event arrives",
						    strerror(-r_fexit), strerror(-r_kprobe));
		}
	}
	snprintf(st->mode, sizeof(st->mode), "%s", memavail_source_name(s->source));
	event_channel_set_memavail_source(s->source);
	return 0;
}

static int memavail_collect(void *priv, struct snapshot *snap)
{
	struct memavail_state *s = priv;
	uint64_t instants[EVENT_KINDS];
	double min;
	unsigned k;

	if (event_channel_take_window_min(&min))
		snapshot_add(snap, &desc_at_pressure, NULL, min);
	event_channel_instants(instants);
	for (k = 0; k < EVENT_KINDS; k++)
		snapshot_add(snap, &desc_instants, (const char *const[]){ event_kind_name(k) }, (double)instants[k]);
	if (s->skel) {
		struct memavail_latest latest;
		__u32 zero = 0;

		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.memavail), &zero, &latest) == 0 && latest.ts_ns)
			snapshot_add(snap, &desc_kernel, NULL, (double)latest.pages * (double)s->page_size);
	}
	return 0;
}

static void memavail_stop(void *priv)
{
	struct memavail_state *s = priv;

	event_channel_set_memavail_source(MEMAVAIL_NONE);
	bpf_link__destroy(s->link);
	memavail_bpf__destroy(s->skel);
}

const struct collector_ops memavail_collector = {
	.name = "memavail",
	.summary = "available memory at pressure instants (fexit/kretprobe on si_mem_available, or /proc/meminfo)",
	.default_enabled = true,
	.config_size = sizeof(struct memavail_config),
	.config_defaults = memavail_config_defaults,
	.configure = memavail_configure,
	.priv_size = sizeof(struct memavail_state),
	.start = memavail_start,
	.collect = memavail_collect,
	.stop = memavail_stop,
};
