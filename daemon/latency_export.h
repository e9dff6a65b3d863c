/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_LATENCY_EXPORT_H
#define MEMWATCH_LATENCY_EXPORT_H

/* Exports a struct latency_histogram (bpf/latency_hist.h) that a BPF object
 * keeps, as one histogram sample: classic buckets, native buckets and
 * exemplars, the latter two where the family's catalogue flags ask. */

#include <linux/types.h>
#include <stdint.h>
#include "latency_hist.h"
#include "snapshot.h"

struct latency_hist_source {
	const struct latency_histogram *h; /* in the object's memory-mapped .bss */
	/* The classic slots below it are folded into the first exported bucket;
	 * the descriptor has LATENCY_CLASSIC_SLOTS - first_slot - 1 bounds. */
	unsigned first_slot;
	/* The window whose exemplars to export (latency_hist_next_window()). */
	uint64_t window;
	/* CLOCK_MONOTONIC and CLOCK_REALTIME read together, in ns: turns an
	 * exemplar's kernel time into a timestamp. */
	uint64_t now_mono_ns, now_real_ns;
	/* A cgroup id's path into buf; < 0 if unknown. */
	int (*cgroup_path)(uint64_t id, char *buf, size_t len, void *userdata);
	void *userdata;
};

/* Moves the kernel's exemplar window on (*window is shared with BPF) and
 * returns the window that just ended. */
uint64_t latency_hist_next_window(__u64 *window);

/* Adds the sample; *count (may be NULL) is its count, read with the buckets. */
int latency_hist_export(struct snapshot *snap, const struct metric_desc *desc, const char *const *labels,
			const struct latency_hist_source *src, uint64_t *count);

/* The native bucket index of slot 1 ... LATENCY_NATIVE_SLOTS - 1 (slot 0
 * being the zero bucket). */
static inline int32_t latency_native_index(unsigned slot)
{
	return (int32_t)slot - 1 + LATENCY_NATIVE_LOWEST_INDEX;
}

#endif
