/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_MEMAVAIL_SAMPLER_H
#define MEMWATCHD_MEMAVAIL_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Available memory sampled in the kernel (bpf/memavail_sampler.bpf.c): a
 * timer computes it from the kernel's counters every sample interval, so the
 * daemon need not wake up ten times a second to read /proc/meminfo. It is
 * used only where one computation agrees with MemAvailable. */
struct memavail_sampler;
struct bpf_shared_maps;
struct procfile;

/* Loads, checks the computation against MemAvailable read from meminfo
 * (within tolerance, a ratio) and starts sampling: from a cpu-clock perf
 * event of one CPU, or where that is refused from a bpf_timer. -EOPNOTSUPP with why set
 * when the kernel cannot run it or the figures disagree. */
int memavail_sampler_start(struct memavail_sampler **ret, struct bpf_shared_maps *shared, uint64_t interval_msec,
			   double tolerance, struct procfile *meminfo, char *why, size_t whylen);
void memavail_sampler_free(struct memavail_sampler *s);
/* What runs the samples: "bpf-cpu-clock" (with its CPU) or "bpf-timer"
 * (cpu -1), with why the perf event was refused where it is the timer
 * (else NULL). */
const char *memavail_sampler_method(const struct memavail_sampler *s, const char **refused, int *cpu);

/* The cpu-clock event again, on the lowest CPU the daemon may run on now: a
 * CPU taken offline stops its events for good (hrtimers migrate, perf events
 * do not). -EOPNOTSUPP where the bpf_timer runs the samples. */
int memavail_sampler_move_clock(struct memavail_sampler *s, uint64_t interval_msec, int *from_cpu, int *to_cpu);

/* Takes effect at the next sample. */
void memavail_sampler_set_interval(struct memavail_sampler *s, uint64_t interval_msec);

/* MemTotal as /proc/meminfo says it now, where the sampler counts memory no
 * zone manages yet as free (see memavail_sampler_start); otherwise nothing. */
void memavail_sampler_note_memtotal(struct memavail_sampler *s, uint64_t bytes);

/* Calls fn for every sample taken since the last call, oldest first, with
 * its CLOCK_MONOTONIC time in µs. Returns how many; samples the timer
 * overwrote before they were read are skipped. */
typedef void (*memavail_sample_fn)(void *userdata, uint64_t t_usec, double bytes);
size_t memavail_sampler_drain(struct memavail_sampler *s, memavail_sample_fn fn, void *userdata);

/* Sets the mark, the free, file (LRU) and dirty pages of a /proc/meminfo read
 * just made: from then on each sample notes how far memory moved from it,
 * and how far available memory moved from the first sample after it. */
void memavail_sampler_mark(struct memavail_sampler *s, uint64_t free_pages, uint64_t file_pages, uint64_t dirty_pages);
/* The largest distance of free, file or dirty pages from the mark over the samples
 * since it was set, in pages; and the samples taken since start (a timer
 * that stopped leaves it still). No system call: both are in mapped memory. */
uint64_t memavail_sampler_moved_pages(const struct memavail_sampler *s);
/* Until the next call: the first sample that finds memory moved further
 * than pages from the mark writes into the shared stir ring (daemon/stir.h);
 * 0 disarms. Returns whether the ring is the shared one that the daemon polls. */
bool memavail_sampler_stir_above(struct memavail_sampler *s, uint64_t pages);
uint64_t memavail_sampler_samples_taken(const struct memavail_sampler *s);
/* One computation now, in bytes. */
int memavail_sampler_compute_now(struct memavail_sampler *s, double *bytes);

/* Time spent sampling, in irq or softirq, since start; and the
 * computation's last error (enum memavail_calc_error), 0 for none. */
uint64_t memavail_sampler_callback_ns(const struct memavail_sampler *s);
int memavail_sampler_last_error(const struct memavail_sampler *s);

#endif
