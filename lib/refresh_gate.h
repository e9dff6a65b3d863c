/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_REFRESH_GATE_H
#define MEMWATCH_REFRESH_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* When to read an expensive source again (every process, every cgroup):
 * at the latest every `interval` window lengths (a window that went on past
 * its length while memory stood still counts as the lengths it spans), and at once when one of the
 * host's cumulative signals (/proc/vmstat counters) grew by its threshold
 * since the last read. In between, a collector exports what the last read
 * found, and says how old it is. */

#define REFRESH_SIGNALS_MAX 8

struct refresh_signal {
	uint64_t value;
	uint64_t threshold; /* growth that calls for a read; 1: any */
	bool present;       /* false: the host does not have it (never calls) */
};

struct refresh_gate {
	bool primed; /* read at least once since the last reset */
	bool expired; /* the next window reads (refresh_gate_expire) */
	uint64_t lengths_since; /* window lengths that reused the last read */
	uint64_t read_usec;     /* when the last read happened */
	uint64_t reads_total;
	size_t n_signals;
	uint64_t at_read[REFRESH_SIGNALS_MAX]; /* the signals then */
	bool had[REFRESH_SIGNALS_MAX];
};

void refresh_gate_reset(struct refresh_gate *g);

/* Whether this window, `lengths` window lengths long, must read: never read,
 * interval reached (interval <= 1: every window), a signal grew by its
 * threshold or went back (reset), or the set of signals present changed. n
 * is at most REFRESH_SIGNALS_MAX. */
bool refresh_gate_due(const struct refresh_gate *g, uint64_t interval, uint64_t lengths,
		      const struct refresh_signal *sig, size_t n);

/* The window read: remembers the signals and when. */
void refresh_gate_read(struct refresh_gate *g, const struct refresh_signal *sig, size_t n, uint64_t now_usec);
/* The next refresh_gate_due() says due, whatever the interval and signals. */
void refresh_gate_expire(struct refresh_gate *g);
/* The window, `lengths` window lengths long, reused the last read. */
void refresh_gate_reuse(struct refresh_gate *g, uint64_t lengths);

/* Seconds since the last read (0 when there was none). */
double refresh_gate_age_seconds(const struct refresh_gate *g, uint64_t now_usec);

#endif
