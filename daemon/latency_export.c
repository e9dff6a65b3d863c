// SPDX-License-Identifier: GPL-2.0
/* A stall histogram from the kernel's struct latency_histogram: the classic
 * and native buckets, read so that both count the same stalls, and the
 * exemplars of the window that just ended. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "latency_export.h"
#include "macro.h"
#include "utf8.h"

/* Reading while stalls are being recorded can see one in the classic slots
 * and not yet in the native ones; a few tries find a moment between two. */
#define CONSISTENT_READ_TRIES 8
#define EXEMPLAR_READ_TRIES 3

uint64_t latency_hist_next_window(__u64 *window)
{
	return __atomic_fetch_add(window, 1, __ATOMIC_RELAXED);
}

static uint64_t read_slots(const __u64 *from, uint64_t *to, size_t n)
{
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++) {
		to[i] = __atomic_load_n(&from[i], __ATOMIC_RELAXED);
		total += to[i];
	}
	return total;
}

static void read_consistent(const struct latency_histogram *h, uint64_t classic[static LATENCY_CLASSIC_SLOTS],
			    uint64_t native[static LATENCY_NATIVE_SLOTS])
{
	uint64_t again[LATENCY_CLASSIC_SLOTS];

	for (int t = 0; t < CONSISTENT_READ_TRIES; t++) {
		uint64_t n_classic = read_slots(h->slots, classic, LATENCY_CLASSIC_SLOTS);
		uint64_t n_native = read_slots(h->native, native, LATENCY_NATIVE_SLOTS);

		(void)read_slots(h->slots, again, LATENCY_CLASSIC_SLOTS);
		if (n_classic == n_native && memcmp(classic, again, sizeof(again)) == 0)
			return;
	}
}

/* One exemplar slot, seen the same twice (BPF may be writing it); false if
 * it is not of this window or never settled. */
static bool read_exemplar(const struct latency_exemplar *from, uint64_t window, struct latency_exemplar *e)
{
	struct latency_exemplar again;

	for (int t = 0; t < EXEMPLAR_READ_TRIES; t++) {
		memcpy(e, (const void *)from, sizeof(*e));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		memcpy(&again, (const void *)from, sizeof(again));
		if (memcmp(e, &again, sizeof(again)) == 0)
			return e->window == window && e->ns > 0;
	}
	return false;
}

struct exemplar_text {
	char pid[16];
	char comm[LATENCY_COMM_LEN + 1];
	char cgroup[SNAPSHOT_EXEMPLAR_LABEL_CHARS * 4 + 4];
	const char *values[3];
};

static const char *const exemplar_label_names[] = { "pid", "comm", "cgroup" };

/* The cgroup's path, cut at the front (keeping its most specific end, behind
 * "…") so that the labels fit OpenMetrics' 128 characters. */
static void exemplar_labels(const struct latency_exemplar *e, const struct latency_hist_source *src,
			    struct exemplar_text *t)
{
	char path[PATH_MAX];
	size_t budget = SNAPSHOT_EXEMPLAR_LABEL_CHARS, used;

	snprintf(t->pid, sizeof(t->pid), "%" PRIu32, e->pid);
	memcpy(t->comm, e->comm, LATENCY_COMM_LEN);
	t->comm[LATENCY_COMM_LEN] = '\0';
	if (!src->cgroup_path || src->cgroup_path(e->cgroup_id, path, sizeof(path), src->userdata) < 0)
		path[0] = '\0';
	used = strlen("pid") + strlen(t->pid) + strlen("comm") + utf8_chars(t->comm) + strlen("cgroup");
	budget = used < budget ? budget - used : 0;
	if (utf8_chars(path) <= budget)
		snprintf(t->cgroup, sizeof(t->cgroup), "%s", path);
	else if (budget > 0)
		snprintf(t->cgroup, sizeof(t->cgroup), "\u2026%s", utf8_tail(path, budget - 1));
	else
		t->cgroup[0] = '\0';
	t->values[0] = t->pid;
	t->values[1] = t->comm;
	t->values[2] = t->cgroup;
}

int latency_hist_export(struct snapshot *snap, const struct metric_desc *desc, const char *const *labels,
			const struct latency_hist_source *src, uint64_t *count)
{
	uint64_t classic[LATENCY_CLASSIC_SLOTS], native[LATENCY_NATIVE_SLOTS], slots[LATENCY_CLASSIC_SLOTS] = { 0 };
	struct latency_exemplar best[LATENCY_CLASSIC_SLOTS] = { 0 };
	struct exemplar_text texts[LATENCY_CLASSIC_SLOTS];
	struct histogram_exemplar exemplars[LATENCY_CLASSIC_SLOTS];
	struct histogram_native nat = {
		.schema = LATENCY_NATIVE_SCHEMA,
		.first_index = LATENCY_NATIVE_LOWEST_INDEX,
		.zero_threshold = ldexp(1.0, LATENCY_NATIVE_ZERO_THRESHOLD_LOG2),
		.n = LATENCY_NATIVE_SLOTS - 1,
		.counts = native + 1,
	};
	size_t n_slots = LATENCY_CLASSIC_SLOTS - src->first_slot, n_exemplars = 0, i;
	uint64_t total = 0;

	if (src->first_slot >= LATENCY_CLASSIC_SLOTS)
		return -EINVAL;
	read_consistent(src->h, classic, native);
	nat.zero_count = native[0];
	/* Only the populated range is kept: a window stays in the ring for
	 * `history` windows, and most of the 208 buckets are empty. */
	while (nat.n > 0 && nat.counts[0] == 0) {
		nat.counts++;
		nat.first_index++;
		nat.n--;
	}
	while (nat.n > 0 && nat.counts[nat.n - 1] == 0)
		nat.n--;
	for (i = 0; i < LATENCY_CLASSIC_SLOTS; i++) {
		size_t b = i < src->first_slot ? 0 : i - src->first_slot;
		struct latency_exemplar e;

		slots[b] += classic[i];
		total += classic[i];
		if ((desc->flags & METRIC_FLAG_EXEMPLARS) && read_exemplar(&src->h->exemplars[i], src->window, &e) &&
		    e.ns > best[b].ns)
			best[b] = e;
	}
	for (i = 0; i < n_slots; i++) {
		const struct latency_exemplar *e = &best[i];
		uint64_t age = src->now_mono_ns > e->end_ktime_ns ? src->now_mono_ns - e->end_ktime_ns : 0;

		if (e->ns == 0)
			continue;
		exemplar_labels(e, src, &texts[n_exemplars]);
		exemplars[n_exemplars] = (struct histogram_exemplar){
			.bucket = i,
			.n_labels = ARRAY_SIZE(exemplar_label_names),
			.label_names = exemplar_label_names,
			.label_values = texts[n_exemplars].values,
			.value = (double)e->ns / 1e9,
			/* whole milliseconds: what Prometheus keeps */
			.timestamp_seconds = (double)((src->now_real_ns - age) / 1000000) / 1e3,
		};
		n_exemplars++;
	}
	if (count)
		*count = total;
	return snapshot_add_histogram_full(snap, desc, labels, slots, n_slots,
					   (double)__atomic_load_n(&src->h->sum_ns, __ATOMIC_RELAXED) * 1e-9,
					   (desc->flags & METRIC_FLAG_NATIVE_HISTOGRAM) ? &nat : NULL, exemplars,
					   n_exemplars);
}
