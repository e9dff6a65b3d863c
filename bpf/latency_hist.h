/* SPDX-License-Identifier: GPL-2.0 */
/* A stall-latency histogram as the kernel keeps it, shared by the BPF side
 * (bpf/latency_hist.bpf.h records) and user space (daemon/latency_export.c
 * exports): classic log2 slots, Prometheus native (exponential) buckets and,
 * per classic slot, the longest stall of the current window as an exemplar.
 * Plain types only, no vmlinux.h, so unit tests can include it. */
#ifndef MEMWATCH_LATENCY_HIST_H
#define MEMWATCH_LATENCY_HIST_H

/* Classic slot k counts stalls of at most 2^k ns; the last one (2^35 ns,
 * 34 s) also takes everything longer. */
#define LATENCY_CLASSIC_SLOTS 36
#define LATENCY_COMM_LEN 16

/* Native buckets, schema 3: bucket i holds (2^((i-1)/8), 2^(i/8)] seconds, a
 * width of 2^(1/8) = 9.05 %, so a value read as its bucket's midpoint is at
 * most (2^(1/8) - 1) / (2^(1/8) + 1) = 4.33 % off; schema 2 would allow 8.6 %.
 * Stalls up to 2^-20 s (0.95 us, the zero threshold) go into the zero bucket,
 * which is slot 0; slots 1 ... LATENCY_NATIVE_SLOTS - 1 are indices -159 to
 * 48 (2^6 s = 64 s), the last one also taking everything longer: 209 u64 in
 * all, whatever the workload. */
#define LATENCY_NATIVE_SCHEMA 3
#define LATENCY_NATIVE_ZERO_THRESHOLD_LOG2 (-20)
#define LATENCY_NATIVE_LOWEST_INDEX (-159)
#define LATENCY_NATIVE_HIGHEST_INDEX 48
#define LATENCY_NATIVE_SLOTS (LATENCY_NATIVE_HIGHEST_INDEX - LATENCY_NATIVE_LOWEST_INDEX + 2)

/* The longest stall that ended in a classic slot during window `window`
 * (a number user space raises at each window's end). */
struct latency_exemplar {
	__u64 window;
	__u64 ns;
	__u64 end_ktime_ns; /* CLOCK_MONOTONIC */
	__u64 cgroup_id;    /* the memory cgroup's kernfs id */
	__u32 pid;          /* tgid */
	__u32 pad;
	char comm[LATENCY_COMM_LEN];
};

struct latency_histogram {
	__u64 slots[LATENCY_CLASSIC_SLOTS];
	__u64 sum_ns;
	__u64 native[LATENCY_NATIVE_SLOTS];
	struct latency_exemplar exemplars[LATENCY_CLASSIC_SLOTS];
};

/* 1 when x >= 1, for x < 2^bits, without a branch: BPF has no conditional
 * set, and every branch here would multiply the paths the verifier walks. */
#define LATENCY_NONZERO(x, bits) ((((__u64)(x)) + ((1ULL << (bits)) - 1)) >> (bits))

/* floor(log2(v)) for v >= 1, branch-free. */
static inline __u32 latency_log2_floor(__u64 v)
{
	__u32 k = 0, s;

	s = (__u32)LATENCY_NONZERO(v >> 32, 32) << 5; v >>= s; k += s;
	s = (__u32)LATENCY_NONZERO(v >> 16, 16) << 4; v >>= s; k += s;
	s = (__u32)LATENCY_NONZERO(v >> 8, 8) << 3;   v >>= s; k += s;
	s = (__u32)LATENCY_NONZERO(v >> 4, 4) << 2;   v >>= s; k += s;
	s = (__u32)LATENCY_NONZERO(v >> 2, 2) << 1;   v >>= s; k += s;
	return k + (__u32)(v >> 1);
}

/* m > t for m, t in [2^63, 2^64), branch-free: t - m borrows exactly then,
 * and the difference is below 2^63 either way. */
#define LATENCY_ABOVE(m, t) ((__u32)(((__u64)(t) - (m)) >> 63))

/* The native slot of a stall of ns nanoseconds, in integer arithmetic. With
 * ns = 2^k * m (1 <= m < 2), the index ceil(8 * log2(ns / 1e9)) is
 * 8k - 239 + ceil(8 log2 m - f), f = 8 log2(1e9) - 239 = 0.17882...; the
 * last term is the number of thresholds 2^((q + f) / 8), q = 0 ... 7, that m
 * is above. The thresholds are floor(2^((q + f) / 8) * 2^63) (the last one
 * is 1e9 * 2^34 exactly, so 1 s falls in bucket 0, whose bound it is), and
 * m * 2^63 is ns shifted left by 63 - k, exact: the comparison is exact too. */
static inline __u32 latency_native_slot(__u64 ns)
{
	__u32 k;
	__u64 m;
	int index;

	if (ns == 0)
		return 0;
	k = latency_log2_floor(ns);
	m = ns << (63 - k);
	index = 8 * (int)k - 239 + (int)(LATENCY_ABOVE(m, 0x81ffa7a9549ca6e3ULL) + LATENCY_ABOVE(m, 0x8dc3b8960164a7d9ULL) +
					 LATENCY_ABOVE(m, 0x9a9867054d512391ULL) + LATENCY_ABOVE(m, 0xa8965f74bf065071ULL) +
					 LATENCY_ABOVE(m, 0xb7d88a12d0dd9ea0ULL) + LATENCY_ABOVE(m, 0xc87c3e7d03cdbec3ULL) +
					 LATENCY_ABOVE(m, 0xdaa17c2cd19555dbULL) + LATENCY_ABOVE(m, 0xee6b280000000000ULL));
	if (index < LATENCY_NATIVE_LOWEST_INDEX)
		return 0;
	if (index > LATENCY_NATIVE_HIGHEST_INDEX)
		index = LATENCY_NATIVE_HIGHEST_INDEX;
	return (__u32)(index - LATENCY_NATIVE_LOWEST_INDEX + 1);
}

#endif
