/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_CLOCK_H
#define MEMWATCHD_CLOCK_H

#include <stdint.h>
#include <time.h>
#include "macro.h"

/* Windows, rate limits and timeouts: never jumps. bpf_ktime_get_ns() reads this clock too. */
static inline uint64_t now_mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / NSEC_PER_USEC;
}

/* Timestamps people and Prometheus read. */
static inline uint64_t now_real_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / NSEC_PER_USEC;
}

#endif
