/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's native bucket arithmetic (bpf/latency_hist.h) against the
 * definition, ceil(8 * log2(seconds)), in floating point; and the exporter
 * (daemon/latency_export.c) on a histogram laid out as BPF keeps it. */
#include <check.h>
#include <linux/types.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "latency_export.h"
#include "metrics.pb-c.h"
#include "snapshot.h"

static int index_of(__u64 ns)
{
	__u32 slot = latency_native_slot(ns);

	ck_assert_uint_ne(slot, 0);
	return latency_native_index(slot);
}

START_TEST(test_bounds)
{
	/* 1 s is bucket 0's upper bound; a nanosecond more is bucket 1. */
	ck_assert_int_eq(index_of(1000000000), 0);
	ck_assert_int_eq(index_of(1000000001), 1);
	ck_assert_int_eq(index_of(999999999), 0);
	/* 2 s = 2^(8/8): bucket 8's bound; 0.5 s bucket -8's. */
	ck_assert_int_eq(index_of(2000000000), 8);
	ck_assert_int_eq(index_of(2000000001), 9);
	ck_assert_int_eq(index_of(500000000), -8);
	ck_assert_int_eq(index_of(500000001), -7);
	/* The zero bucket takes up to 2^-20 s = 953.67 ns. */
	ck_assert_uint_eq(latency_native_slot(0), 0);
	ck_assert_uint_eq(latency_native_slot(1), 0);
	ck_assert_uint_eq(latency_native_slot(953), 0);
	ck_assert_int_eq(index_of(954), LATENCY_NATIVE_LOWEST_INDEX);
	/* 64 s and everything longer: the last bucket. */
	ck_assert_int_eq(index_of(64000000000ULL), LATENCY_NATIVE_HIGHEST_INDEX);
	ck_assert_uint_eq(latency_native_slot(~0ULL), LATENCY_NATIVE_SLOTS - 1);
	ck_assert_uint_eq(latency_native_slot(1ULL << 63), LATENCY_NATIVE_SLOTS - 1);
}
END_TEST

/* A sweep over 1 us ... 60 s: the integer slot is the definition's, but for
 * values so close to a bound that double rounding cannot tell. */
START_TEST(test_sweep)
{
	unsigned checked = 0;

	for (double x = 1000; x < 6e10; x *= 1.0007) {
		for (int d = -1; d <= 1; d++) {
			__u64 ns = (__u64)x + (__u64)(d + 1);
			double exact = 8 * log2((double)ns / 1e9);
			int want = (int)ceil(exact);

			if (fabs(exact - nearbyint(exact)) < 1e-9)
				continue;
			ck_assert_msg(index_of(ns) == want, "%llu ns: index %d, want %d", (unsigned long long)ns,
				      index_of(ns), want);
			checked++;
		}
	}
	ck_assert_uint_gt(checked, 40000);
}
END_TEST

/* The bucket's relative width is 2^(1/8) - 1: a value read as its bucket's
 * midpoint is off by at most 4.4 %. */
START_TEST(test_resolution)
{
	double base = pow(2, 1.0 / 8);

	ck_assert(fabs((base - 1) / (base + 1) - 0.0433) < 0.0005);
	ck_assert_int_eq(LATENCY_NATIVE_SLOTS, 209);
}
END_TEST

static const double bounds[] = { 1e-6, 1e-3 };
static const char *const le[] = { "1e-06", "0.001" };
static const struct metric_desc stall = {
	.name = "memwatch_test_stall_seconds",
	.help = "Stalls.",
	.type = METRIC_HISTOGRAM,
	.unit = METRIC_UNIT_SECONDS,
	.n_bounds = 2,
	.bounds = bounds,
	.le = le,
	.flags = METRIC_FLAG_NATIVE_HISTOGRAM | METRIC_FLAG_EXEMPLARS,
};

static void record(struct latency_histogram *h, __u64 window, __u64 ns, __u64 end, __u32 pid, const char *comm)
{
	__u32 slot = ns <= 1 ? 0 : 64 - __builtin_clzll(ns - 1);
	struct latency_exemplar *e;

	if (slot >= LATENCY_CLASSIC_SLOTS)
		slot = LATENCY_CLASSIC_SLOTS - 1;
	h->slots[slot]++;
	h->native[latency_native_slot(ns)]++;
	h->sum_ns += ns;
	e = &h->exemplars[slot];
	if (e->window == window && e->ns >= ns)
		return;
	*e = (struct latency_exemplar){ .window = window, .ns = ns, .end_ktime_ns = end, .cgroup_id = 7, .pid = pid };
	strncpy(e->comm, comm, sizeof(e->comm));
}

static int path_of(uint64_t id, char *buf, size_t len, void *userdata)
{
	ck_assert_uint_eq(id, 7);
	snprintf(buf, len, "/%s", (const char *)userdata);
	return 0;
}

/* The protobuf's native buckets count the same stalls as its classic ones. */
static void check_native_matches_classic(const struct snapshot *s, uint64_t want)
{
	size_t len;
	const uint8_t *p = snapshot_body(s, EXPO_FORMAT_PROTOBUF, false, &len);
	Io__Prometheus__Client__MetricFamily *mf;
	Io__Prometheus__Client__Histogram *ph;
	int64_t running = 0;
	uint64_t native = 0;

	ck_assert_ptr_nonnull(p);
	/* one family, its length a two-byte varint */
	ck_assert(p[0] & 0x80 && !(p[1] & 0x80));
	ck_assert_uint_eq((size_t)(p[0] & 0x7f) + ((size_t)p[1] << 7) + 2, len);
	mf = io__prometheus__client__metric_family__unpack(NULL, len - 2, p + 2);
	ck_assert_ptr_nonnull(mf);
	ph = mf->metric[0]->histogram;
	ck_assert_uint_eq(ph->sample_count, want);
	ck_assert_int_eq(ph->schema, 3);
	for (size_t i = 0; i < ph->n_positive_delta; i++) {
		running += ph->positive_delta[i];
		ck_assert_int_gt(running, 0);
		native += (uint64_t)running;
	}
	ck_assert_uint_eq(native + ph->zero_count, want);
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);
}

/* Slots below 2^10 ns fold into the first bucket (le 2^10 ns, here 1e-6 for
 * short); the exemplars are the window's longest per bucket, an older
 * window's are left out, and the timestamp comes from the kernel's clock. */
START_TEST(test_export)
{
	struct latency_histogram *h = calloc(1, sizeof(*h));
	char long_name[300];
	struct latency_hist_source src = {
		.h = h, .first_slot = LATENCY_CLASSIC_SLOTS - 3, .window = 5,
		.now_mono_ns = 10000000000ULL, .now_real_ns = 1700000010000000000ULL,
		.cgroup_path = path_of, .userdata = long_name,
	};
	struct snapshot_window w = { .seq = 1 };
	struct snapshot *s = snapshot_new(&w, 100);
	struct strbuf sb;
	uint64_t count = 0;
	const char *line;

	memset(long_name, 'c', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	ck_assert_ptr_nonnull(h);
	/* first_slot 33: slots up to 2^33 ns fold into bucket 0 (8.6 s). */
	record(h, 4, 6000000000ULL, 8000000000ULL, 102, "stale");
	record(h, 5, 3000000000ULL, 9000000000ULL, 100, "short");
	record(h, 5, 5000000000ULL, 9500000000ULL, 101, "longer");
	record(h, 4, 15000000000ULL, 8100000000ULL, 104, "stale");
	record(h, 5, 100000000000ULL, 9900000000ULL, 103, "inf");
	ck_assert_int_eq(latency_hist_export(s, &stall, NULL, &src, &count), 0);
	ck_assert_uint_eq(count, 5);
	ck_assert_int_eq(snapshot_seal(s), 0);
	strbuf_init(&sb);
	ck_assert_int_eq(snapshot_render_openmetrics(s, &sb), 0);
	/* Bucket 0: 3 stalls (slots 32 and 33), its exemplar the longest of window 5. */
	line = strstr(sb.data, "memwatch_test_stall_seconds_bucket{le=\"1e-06\"} 3 # {pid=\"101\",comm=\"longer\",cgroup=\"\xe2\x80\xa6" "ccc");
	ck_assert_msg(line != NULL, "%s", sb.data);
	ck_assert_ptr_nonnull(strstr(line, "c\"} 5 1700000009.5\n"));
	ck_assert_ptr_nonnull(strstr(sb.data, "_bucket{le=\"+Inf\"} 5 # {pid=\"103\",comm=\"inf\","));
	ck_assert_ptr_nonnull(strstr(sb.data, "_bucket{le=\"0.001\"} 4\n"));
	ck_assert_ptr_null(strstr(sb.data, "stale"));
	/* The labels at OpenMetrics' bound: the cgroup cut to what is left. */
	ck_assert_uint_eq(strlen("pid101commlongercgroup") + 1 + strcspn(strstr(line, "\xe2\x80\xa6") + 3, "\""), 128);
	strbuf_free(&sb);
	check_native_matches_classic(s, 5);
	snapshot_unref(s);
	free(h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("latency_hist");
	TCase *tc = tcase_create("native buckets");

	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_sweep);
	tcase_add_test(tc, test_resolution);
	tcase_add_test(tc, test_export);
	suite_add_tcase(s, tc);
	return fixture_run_suite(s);
}
