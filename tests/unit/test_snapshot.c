/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "snapshot.h"

static const struct metric_desc free_bytes = {
	.name = "memwatch_free_bytes",
	.help = "Free memory.",
	.type = METRIC_GAUGE,
};

static const struct metric_desc events_total = {
	.name = "memwatch_events_total",
	.help = "Events seen.",
	.type = METRIC_COUNTER,
	.n_labels = 1,
	.labels = { "kind" },
};

static const struct metric_desc pressure = {
	.name = "memwatch_pressure_ratio",
	.help = "Pressure.",
	.type = METRIC_GAUGE,
	.n_labels = 2,
	.labels = { "cgroup", "level" },
};

static const struct metric_desc stall = {
	.name = "memwatch_stall_seconds",
	.help = "Stall time.",
	.type = METRIC_HISTOGRAM,
	.n_labels = 1,
	.labels = { "dev" },
};

static const struct metric_desc plain_hist = {
	.name = "memwatch_size_bytes",
	.help = "Sizes.",
	.type = METRIC_HISTOGRAM,
};

/* Bounds that print other than expo_format_number would print them: a
 * histogram on the descriptor's bounds shows the descriptor's le text. */
static const double own_bounds[] = { 0.5, 1, 2 };
static const char *const own_le[] = { "0.50", "1.0", "2.0" };
static const struct metric_desc own_hist = {
	.name = "memwatch_own_seconds",
	.help = "Own bounds.",
	.type = METRIC_HISTOGRAM,
	.n_labels = 1,
	.labels = { "dev" },
	.n_bounds = 3,
	.bounds = own_bounds,
	.le = own_le,
};

/* Log2 slots as a BPF program keeps them: slot k counts values v with
 * 2^(k-1) < v <= 2^k raw units, scale converts to the base unit, the last
 * slot is the clamp slot (+Inf). Through the general path, bounds copied. */
static int add_log2(struct snapshot *s, const struct metric_desc *desc, const char *const *labels,
		    const uint64_t *slots, size_t n_slots, double scale, double raw_sum)
{
	double bounds[64];
	size_t i;

	ck_assert_uint_ge(n_slots, 2);
	ck_assert_uint_le(n_slots, 64);
	for (i = 0; i + 1 < n_slots; i++)
		bounds[i] = ldexp(1.0, (int)i) * scale;
	return snapshot_add_histogram(s, desc, labels, bounds, slots, n_slots - 1, raw_sum * scale);
}

static struct snapshot *new_snap(size_t max_series)
{
	struct snapshot *s = snapshot_new(NULL, max_series);

	ck_assert_ptr_nonnull(s);
	return s;
}

static const char *seal_text(struct snapshot *s)
{
	size_t len = 0;
	const char *t;

	ck_assert_int_eq(snapshot_seal(s), 0);
	t = snapshot_text(s, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(len, strlen(t));
	return t;
}

START_TEST(test_window_copied)
{
	struct snapshot_window w = {
		.seq = 7, .start_mono_usec = 100, .end_mono_usec = 200,
		.start_real_usec = 1700000000000000ULL, .end_real_usec = 1700000000000100ULL,
	};
	struct snapshot *s = snapshot_new(&w, 10);
	const struct snapshot_window *got;

	ck_assert_ptr_nonnull(s);
	w.seq = 99; /* copied, not referenced */
	got = snapshot_window(s);
	ck_assert_uint_eq(got->seq, 7);
	ck_assert_uint_eq(got->start_mono_usec, 100);
	ck_assert_uint_eq(got->end_mono_usec, 200);
	ck_assert_uint_eq(got->start_real_usec, 1700000000000000ULL);
	ck_assert_uint_eq(got->end_real_usec, 1700000000000100ULL);
	snapshot_unref(s);

	s = snapshot_new(NULL, 10);
	ck_assert_uint_eq(snapshot_window(s)->seq, 0);
	ck_assert_uint_eq(snapshot_window(s)->end_real_usec, 0);
	snapshot_unref(s);
}
END_TEST

START_TEST(test_empty_snapshot)
{
	struct snapshot *s = new_snap(10);
	size_t len = 123;

	/* Nothing rendered before seal. */
	ck_assert_ptr_null(snapshot_text(s, &len));
	ck_assert_uint_eq(len, 0);
	ck_assert_uint_eq(snapshot_series(s), 0);
	ck_assert_uint_eq(snapshot_dropped_series(s), 0);
	ck_assert_str_eq(seal_text(s), "");
	ck_assert(isnan(snapshot_value(s, "memwatch_free_bytes", NULL)));
	snapshot_unref(s);
}
END_TEST

START_TEST(test_render_exact)
{
	struct snapshot *s = new_snap(100);
	const char *const a[] = { "a" };
	const char *const b[] = { "b\"q\\\n" };

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 1024.0), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, a, 3.0), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, b, 0.5), 0);
	ck_assert_uint_eq(snapshot_series(s), 3);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_free_bytes Free memory.\n"
			 "# TYPE memwatch_free_bytes gauge\n"
			 "memwatch_free_bytes 1024\n"
			 "# HELP memwatch_events_total Events seen.\n"
			 "# TYPE memwatch_events_total counter\n"
			 "memwatch_events_total{kind=\"a\"} 3\n"
			 "memwatch_events_total{kind=\"b\\\"q\\\\\\n\"} 0.5\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_label_values_copied)
{
	struct snapshot *s = new_snap(100);
	char cg[32], lvl[32];
	const char *lv[] = { cg, lvl };

	snprintf(cg, sizeof(cg), "/user.slice");
	snprintf(lvl, sizeof(lvl), "some");
	ck_assert_int_eq(snapshot_add(s, &pressure, lv, 0.25), 0);
	/* The caller's buffers are reused at once, as collectors do. */
	snprintf(cg, sizeof(cg), "/system.slice");
	snprintf(lvl, sizeof(lvl), "full");
	ck_assert_int_eq(snapshot_add(s, &pressure, lv, 0.125), 0);
	memset(cg, 'X', sizeof(cg) - 1);
	memset(lvl, 'Y', sizeof(lvl) - 1);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_pressure_ratio Pressure.\n"
			 "# TYPE memwatch_pressure_ratio gauge\n"
			 "memwatch_pressure_ratio{cgroup=\"/user.slice\",level=\"some\"} 0.25\n"
			 "memwatch_pressure_ratio{cgroup=\"/system.slice\",level=\"full\"} 0.125\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_null_label_values)
{
	struct snapshot *s = new_snap(100);
	const char *const one_null[] = { NULL, "full" };

	ck_assert_int_eq(snapshot_add(s, &pressure, NULL, 1.0), 0);
	ck_assert_int_eq(snapshot_add(s, &pressure, one_null, 2.0), 0);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_pressure_ratio Pressure.\n"
			 "# TYPE memwatch_pressure_ratio gauge\n"
			 "memwatch_pressure_ratio{cgroup=\"\",level=\"\"} 1\n"
			 "memwatch_pressure_ratio{cgroup=\"\",level=\"full\"} 2\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_families_grouped)
{
	/* Same name, different desc object: still one family. */
	static const struct metric_desc events_copy = {
		.name = "memwatch_events_total", .help = "Other help.", .type = METRIC_COUNTER,
		.n_labels = 1, .labels = { "kind" },
	};
	struct snapshot *s = new_snap(100);
	const char *const x[] = { "x" }, *const y[] = { "y" }, *const z[] = { "z" };
	const char *const cg[] = { "/", "some" };

	ck_assert_int_eq(snapshot_add(s, &events_total, x, 1.0), 0);
	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 10.0), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, y, 2.0), 0);
	ck_assert_int_eq(snapshot_add(s, &pressure, cg, 0.5), 0);
	ck_assert_int_eq(snapshot_add(s, &events_copy, z, 3.0), 0);
	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 11.0), 0);
	ck_assert_uint_eq(snapshot_series(s), 6);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_events_total Events seen.\n"
			 "# TYPE memwatch_events_total counter\n"
			 "memwatch_events_total{kind=\"x\"} 1\n"
			 "memwatch_events_total{kind=\"y\"} 2\n"
			 "memwatch_events_total{kind=\"z\"} 3\n"
			 "# HELP memwatch_free_bytes Free memory.\n"
			 "# TYPE memwatch_free_bytes gauge\n"
			 "memwatch_free_bytes 10\n"
			 "memwatch_free_bytes 11\n"
			 "# HELP memwatch_pressure_ratio Pressure.\n"
			 "# TYPE memwatch_pressure_ratio gauge\n"
			 "memwatch_pressure_ratio{cgroup=\"/\",level=\"some\"} 0.5\n");
	snapshot_unref(s);
}
END_TEST

/* Many families, interleaved round-robin: every family's block must be
 * contiguous, in first-seen order, with its samples in insertion order. */
START_TEST(test_many_families_interleaved)
{
	enum { NF = 70, PER = 5 };
	static struct metric_desc descs[NF];
	static char names[NF][32];
	struct snapshot *s = new_snap(NF * PER);
	struct strbuf want;
	const char *text;
	int f, k;

	for (f = 0; f < NF; f++) {
		snprintf(names[f], sizeof(names[f]), "fam_%02d", f);
		descs[f] = (struct metric_desc){ .name = names[f], .help = "h", .type = METRIC_GAUGE };
	}
	for (k = 0; k < PER; k++)
		for (f = 0; f < NF; f++)
			ck_assert_int_eq(snapshot_add(s, &descs[f], NULL, f * 100 + k), 0);
	strbuf_init(&want);
	for (f = 0; f < NF; f++) {
		strbuf_printf(&want, "# HELP %s h\n# TYPE %s gauge\n", names[f], names[f]);
		for (k = 0; k < PER; k++)
			strbuf_printf(&want, "%s %d\n", names[f], f * 100 + k);
	}
	text = seal_text(s);
	ck_assert_str_eq(text, want.data);
	ck_assert_uint_eq(snapshot_series(s), NF * PER);
	strbuf_free(&want);
	snapshot_unref(s);
}
END_TEST

START_TEST(test_histogram_explicit)
{
	struct snapshot *s = new_snap(100);
	const char *const sda[] = { "sda" };
	const double bounds[] = { 0.1, 0.5, 1.0 };
	const uint64_t counts[] = { 1, 2, 3, 4 };

	ck_assert_int_eq(snapshot_add_histogram(s, &stall, sda, bounds, counts, 3, 12.5), 0);
	ck_assert_uint_eq(snapshot_series(s), 1);
	ck_assert_double_eq(snapshot_value(s, "memwatch_stall_seconds", sda), 10.0);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_stall_seconds Stall time.\n"
			 "# TYPE memwatch_stall_seconds histogram\n"
			 "memwatch_stall_seconds_bucket{dev=\"sda\",le=\"0.1\"} 1\n"
			 "memwatch_stall_seconds_bucket{dev=\"sda\",le=\"0.5\"} 3\n"
			 "memwatch_stall_seconds_bucket{dev=\"sda\",le=\"1\"} 6\n"
			 "memwatch_stall_seconds_bucket{dev=\"sda\",le=\"+Inf\"} 10\n"
			 "memwatch_stall_seconds_sum{dev=\"sda\"} 12.5\n"
			 "memwatch_stall_seconds_count{dev=\"sda\"} 10\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_histogram_bounds_copied_and_two_series)
{
	struct snapshot *s = new_snap(100);
	const char *const a[] = { "a" }, *const b[] = { "b" };
	double bounds[] = { 1, 2 };
	uint64_t counts[] = { 0, 5, 0 };

	ck_assert_int_eq(snapshot_add_histogram(s, &stall, a, bounds, counts, 2, 7.0), 0);
	bounds[0] = 100;
	bounds[1] = 200;
	counts[0] = 9;
	counts[1] = 9;
	counts[2] = 9;
	ck_assert_int_eq(snapshot_add_histogram(s, &stall, b, bounds, counts, 2, 0.0), 0);
	ck_assert_uint_eq(snapshot_series(s), 2);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_stall_seconds Stall time.\n"
			 "# TYPE memwatch_stall_seconds histogram\n"
			 "memwatch_stall_seconds_bucket{dev=\"a\",le=\"1\"} 0\n"
			 "memwatch_stall_seconds_bucket{dev=\"a\",le=\"2\"} 5\n"
			 "memwatch_stall_seconds_bucket{dev=\"a\",le=\"+Inf\"} 5\n"
			 "memwatch_stall_seconds_sum{dev=\"a\"} 7\n"
			 "memwatch_stall_seconds_count{dev=\"a\"} 5\n"
			 "memwatch_stall_seconds_bucket{dev=\"b\",le=\"100\"} 9\n"
			 "memwatch_stall_seconds_bucket{dev=\"b\",le=\"200\"} 18\n"
			 "memwatch_stall_seconds_bucket{dev=\"b\",le=\"+Inf\"} 27\n"
			 "memwatch_stall_seconds_sum{dev=\"b\"} 0\n"
			 "memwatch_stall_seconds_count{dev=\"b\"} 27\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_histogram_no_finite_bounds)
{
	struct snapshot *s = new_snap(100);
	const uint64_t counts[] = { 4 };

	ck_assert_int_eq(snapshot_add_histogram(s, &plain_hist, NULL, NULL, counts, 0, 4096.0), 0);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_size_bytes Sizes.\n"
			 "# TYPE memwatch_size_bytes histogram\n"
			 "memwatch_size_bytes_bucket{le=\"+Inf\"} 4\n"
			 "memwatch_size_bytes_sum 4096\n"
			 "memwatch_size_bytes_count 4\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_histogram_rejects_bad_bounds)
{
	static const struct {
		double b[3];
		size_t n;
	} bad[] = {
		{ { 1, 1 }, 2 },             /* equal */
		{ { 2, 1 }, 2 },             /* decreasing */
		{ { 1, 2, 2 }, 3 },          /* equal at the end */
		{ { 1, 3, 2 }, 3 },          /* decreasing in the middle */
		{ { -1, -2 }, 2 },
		{ { 1, NAN }, 2 },
		{ { NAN, 1 }, 2 },
		{ { NAN }, 1 },              /* NaN is not a bound */
		{ { 1, INFINITY }, 2 },      /* +Inf is implicit, not a finite bound */
		{ { INFINITY }, 1 },
		{ { -INFINITY, 0 }, 2 },
	};
	const uint64_t counts[4] = { 1, 1, 1, 1 };
	struct snapshot *s = new_snap(100);
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(snapshot_add_histogram(s, &plain_hist, NULL, bad[i].b, counts, bad[i].n, 0) ==
				      -EINVAL,
			      "bad bounds #%zu accepted", i);
	/* Rejected histograms are neither stored nor counted as dropped. */
	ck_assert_uint_eq(snapshot_series(s), 0);
	ck_assert_uint_eq(snapshot_dropped_series(s), 0);
	ck_assert_str_eq(seal_text(s), "");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_type_mismatch_rejected)
{
	struct snapshot *s = new_snap(100);
	const double bounds[] = { 1 };
	const uint64_t counts[] = { 1, 1 };
	const uint64_t slots[] = { 1, 1 };
	const char *const a[] = { "a" };

	ck_assert_int_eq(snapshot_add(s, &stall, a, 1.0), -EINVAL);
	ck_assert_int_eq(snapshot_add_histogram(s, &free_bytes, NULL, bounds, counts, 1, 1.0), -EINVAL);
	ck_assert_int_eq(snapshot_add_histogram(s, &events_total, a, bounds, counts, 1, 1.0), -EINVAL);
	ck_assert_int_eq(add_log2(s, &free_bytes, NULL, slots, 2, 1.0, 0), -EINVAL);
	ck_assert_int_eq(snapshot_add_histogram_slots(s, &free_bytes, NULL, slots, 2, 0), -EINVAL);
	ck_assert_uint_eq(snapshot_series(s), 0);
	ck_assert_str_eq(seal_text(s), "");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_log2_histogram)
{
	struct snapshot *s = new_snap(100);
	const char *const nvme[] = { "nvme0n1" };
	/* slot k counts 2^(k-1) < v <= 2^k raw units; the last slot is the clamp. */
	const uint64_t slots[] = { 1, 0, 2, 3, 4 };

	ck_assert_int_eq(add_log2(s, &stall, nvme, slots, 5, 0.5, 3.0), 0);
	ck_assert_double_eq(snapshot_value(s, "memwatch_stall_seconds", nvme), 10.0);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_stall_seconds Stall time.\n"
			 "# TYPE memwatch_stall_seconds histogram\n"
			 "memwatch_stall_seconds_bucket{dev=\"nvme0n1\",le=\"0.5\"} 1\n"
			 "memwatch_stall_seconds_bucket{dev=\"nvme0n1\",le=\"1\"} 1\n"
			 "memwatch_stall_seconds_bucket{dev=\"nvme0n1\",le=\"2\"} 3\n"
			 "memwatch_stall_seconds_bucket{dev=\"nvme0n1\",le=\"4\"} 6\n"
			 "memwatch_stall_seconds_bucket{dev=\"nvme0n1\",le=\"+Inf\"} 10\n"
			 "memwatch_stall_seconds_sum{dev=\"nvme0n1\"} 1.5\n"
			 "memwatch_stall_seconds_count{dev=\"nvme0n1\"} 10\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_log2_histogram_nanoseconds)
{
	struct snapshot *s = new_snap(100);
	const uint64_t slots[] = { 0, 1, 0, 0, 7 };

	/* 1e-9 scales nanoseconds to seconds; 2^k * 1e-9 is exact in binary
	 * relative to 1e-9, so the bounds print as short decimals. */
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 5, 1e-9, 4.0), 0);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_size_bytes Sizes.\n"
			 "# TYPE memwatch_size_bytes histogram\n"
			 "memwatch_size_bytes_bucket{le=\"1e-09\"} 0\n"
			 "memwatch_size_bytes_bucket{le=\"2e-09\"} 1\n"
			 "memwatch_size_bytes_bucket{le=\"4e-09\"} 1\n"
			 "memwatch_size_bytes_bucket{le=\"8e-09\"} 1\n"
			 "memwatch_size_bytes_bucket{le=\"+Inf\"} 8\n"
			 "memwatch_size_bytes_sum 4e-09\n"
			 "memwatch_size_bytes_count 8\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_histogram_slots_descriptor_bounds)
{
	struct snapshot *s = new_snap(100);
	const char *const sda[] = { "sda" }, *const sdb[] = { "sdb" };
	const uint64_t slots[] = { 1, 2, 3, 4 };
	const char *expected =
		"# HELP memwatch_own_seconds Own bounds.\n"
		"# TYPE memwatch_own_seconds histogram\n"
		"memwatch_own_seconds_bucket{dev=\"sda\",le=\"0.50\"} 1\n"
		"memwatch_own_seconds_bucket{dev=\"sda\",le=\"1.0\"} 3\n"
		"memwatch_own_seconds_bucket{dev=\"sda\",le=\"2.0\"} 6\n"
		"memwatch_own_seconds_bucket{dev=\"sda\",le=\"+Inf\"} 10\n"
		"memwatch_own_seconds_sum{dev=\"sda\"} 2.5\n"
		"memwatch_own_seconds_count{dev=\"sda\"} 10\n"
		"memwatch_own_seconds_bucket{dev=\"sdb\",le=\"0.5\"} 1\n"
		"memwatch_own_seconds_bucket{dev=\"sdb\",le=\"1\"} 3\n"
		"memwatch_own_seconds_bucket{dev=\"sdb\",le=\"2\"} 6\n"
		"memwatch_own_seconds_bucket{dev=\"sdb\",le=\"+Inf\"} 10\n"
		"memwatch_own_seconds_sum{dev=\"sdb\"} 1\n"
		"memwatch_own_seconds_count{dev=\"sdb\"} 10\n";
	const double copy[] = { 0.5, 1, 2 };
	struct strbuf sb;

	/* one slot per bound and one above them, no other count */
	ck_assert_int_eq(snapshot_add_histogram_slots(s, &own_hist, sda, slots, 3, 0), -EINVAL);
	ck_assert_int_eq(snapshot_add_histogram_slots(s, &own_hist, sda, slots, 5, 0), -EINVAL);
	ck_assert_int_eq(snapshot_add_histogram_slots(s, &plain_hist, NULL, slots, 4, 0), -EINVAL);
	ck_assert_uint_eq(snapshot_series(s), 0);
	ck_assert_int_eq(snapshot_add_histogram_slots(s, &own_hist, sda, slots, 4, 2.5), 0);
	/* the same values from elsewhere are formatted as usual */
	ck_assert_int_eq(snapshot_add_histogram(s, &own_hist, sdb, copy, slots, 3, 1), 0);
	ck_assert_str_eq(seal_text(s), expected);
	/* compacted at seal, the descriptor's bounds still give its text */
	strbuf_init(&sb);
	ck_assert_int_eq(snapshot_render_text(s, &sb), 0);
	ck_assert_uint_eq(sb.len, strlen(expected));
	ck_assert_mem_eq(sb.data, expected, sb.len);
	strbuf_free(&sb);
	snapshot_unref(s);
}
END_TEST

START_TEST(test_log2_histogram_limits)
{
	struct snapshot *s = new_snap(100);
	uint64_t slots[65];
	const char *text;
	size_t i;

	for (i = 0; i < 65; i++)
		slots[i] = 1;
	/* scale 0 or negative cannot give increasing bounds */
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 4, 0.0, 0), -EINVAL);
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 4, -1.0, 0), -EINVAL);
	ck_assert_uint_eq(snapshot_series(s), 0);

	/* Two slots: one finite bound (2^0 * scale) and the clamp slot as +Inf. */
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 2, 1.0, 2.0), 0);
	/* 64 slots: bounds up to 2^62; slot 63 is only +Inf. */
	ck_assert_int_eq(add_log2(s, &stall, NULL, slots, 64, 1.0, 0), 0);
	text = seal_text(s);
	ck_assert_ptr_nonnull(strstr(text, "memwatch_size_bytes_bucket{le=\"1\"} 1\n"
					   "memwatch_size_bytes_bucket{le=\"+Inf\"} 2\n"
					   "memwatch_size_bytes_sum 2\n"
					   "memwatch_size_bytes_count 2\n"));
	ck_assert_ptr_null(strstr(text, "memwatch_size_bytes_bucket{le=\"2\"}"));
	ck_assert_ptr_nonnull(strstr(text, "memwatch_stall_seconds_bucket{dev=\"\",le=\"1\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "memwatch_stall_seconds_bucket{dev=\"\",le=\"4.611686018427388e+18\"} 63\n"
					   "memwatch_stall_seconds_bucket{dev=\"\",le=\"+Inf\"} 64\n"));
	ck_assert_ptr_null(strstr(text, "le=\"9.223372036854776e+18\""));
	ck_assert_ptr_null(strstr(text, "le=\"9223372036854775808\""));
	snapshot_unref(s);
}
END_TEST

START_TEST(test_max_series)
{
	struct snapshot *s = new_snap(3);
	const char *const k[] = { "k" };
	const double bounds[] = { 1 };
	const uint64_t counts[] = { 1, 2 };
	const uint64_t slots[] = { 1, 2, 3 };

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 1), 0);
	ck_assert_int_eq(snapshot_add_histogram(s, &stall, k, bounds, counts, 1, 1), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, k, 2), 0);
	ck_assert_uint_eq(snapshot_series(s), 3);
	ck_assert_uint_eq(snapshot_dropped_series(s), 0);

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 4), -ENOSPC);
	ck_assert_int_eq(snapshot_add(s, &pressure, NULL, 5), -ENOSPC);
	ck_assert_int_eq(snapshot_add_histogram(s, &stall, k, bounds, counts, 1, 1), -ENOSPC);
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 3, 1.0, 0), -ENOSPC);
	ck_assert_uint_eq(snapshot_series(s), 3);
	ck_assert_uint_eq(snapshot_dropped_series(s), 4);

	/* A dropped sample leaves no trace in the text, not even a header. */
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_free_bytes Free memory.\n"
			 "# TYPE memwatch_free_bytes gauge\n"
			 "memwatch_free_bytes 1\n"
			 "# HELP memwatch_stall_seconds Stall time.\n"
			 "# TYPE memwatch_stall_seconds histogram\n"
			 "memwatch_stall_seconds_bucket{dev=\"k\",le=\"1\"} 1\n"
			 "memwatch_stall_seconds_bucket{dev=\"k\",le=\"+Inf\"} 3\n"
			 "memwatch_stall_seconds_sum{dev=\"k\"} 1\n"
			 "memwatch_stall_seconds_count{dev=\"k\"} 3\n"
			 "# HELP memwatch_events_total Events seen.\n"
			 "# TYPE memwatch_events_total counter\n"
			 "memwatch_events_total{kind=\"k\"} 2\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_max_series_zero)
{
	struct snapshot *s = new_snap(0);

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 1), -ENOSPC);
	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 2), -ENOSPC);
	ck_assert_uint_eq(snapshot_series(s), 0);
	ck_assert_uint_eq(snapshot_dropped_series(s), 2);
	ck_assert_str_eq(seal_text(s), "");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_many_series_grow)
{
	enum { N = 5000 };
	struct snapshot *s = new_snap(N);
	char lbl[32];
	const char *lv[] = { lbl };
	const char *text;
	size_t i;

	for (i = 0; i < N; i++) {
		snprintf(lbl, sizeof(lbl), "k%zu", i);
		if (snapshot_add(s, &events_total, lv, (double)i) != 0)
			ck_abort_msg("add %zu failed", i);
	}
	ck_assert_int_eq(snapshot_add(s, &events_total, lv, 0), -ENOSPC);
	ck_assert_uint_eq(snapshot_series(s), N);
	ck_assert_uint_eq(snapshot_dropped_series(s), 1);
	text = seal_text(s);
	ck_assert_ptr_nonnull(strstr(text, "\nmemwatch_events_total{kind=\"k0\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nmemwatch_events_total{kind=\"k4999\"} 4999\n"));
	for (i = 0; i < N; i += 499) {
		snprintf(lbl, sizeof(lbl), "k%zu", i);
		ck_assert_double_eq(snapshot_value(s, "memwatch_events_total", lv), (double)i);
	}
	snapshot_unref(s);
}
END_TEST

START_TEST(test_add_after_seal)
{
	struct snapshot *s = new_snap(100);
	const double bounds[] = { 1 };
	const uint64_t counts[] = { 1, 2 };
	const uint64_t slots[] = { 1, 2 };
	const char *t1, *t2;
	size_t len1, len2;

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 1), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	t1 = snapshot_text(s, &len1);

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 2), -EBUSY);
	ck_assert_int_eq(snapshot_add_histogram(s, &plain_hist, NULL, bounds, counts, 1, 0), -EBUSY);
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 2, 1.0, 0), -EBUSY);
	ck_assert_uint_eq(snapshot_series(s), 1);
	ck_assert_uint_eq(snapshot_dropped_series(s), 0);

	/* Sealing again is a no-op that keeps the same text. */
	ck_assert_int_eq(snapshot_seal(s), 0);
	t2 = snapshot_text(s, &len2);
	ck_assert_ptr_eq(t1, t2);
	ck_assert_uint_eq(len1, len2);
	ck_assert_str_eq(t2, "# HELP memwatch_free_bytes Free memory.\n"
			     "# TYPE memwatch_free_bytes gauge\n"
			     "memwatch_free_bytes 1\n");
	ck_assert_ptr_nonnull(snapshot_text(s, NULL));
	snapshot_unref(s);
}
END_TEST

START_TEST(test_seal_full_snapshot_refused_too)
{
	/* Once sealed, even a full snapshot answers -EBUSY and does not count drops. */
	struct snapshot *s = new_snap(1);

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 1), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 2), -EBUSY);
	ck_assert_uint_eq(snapshot_dropped_series(s), 0);
	snapshot_unref(s);
}
END_TEST

START_TEST(test_value_lookup)
{
	struct snapshot *s = new_snap(100);
	const char *const some[] = { "/a", "some" }, *const full[] = { "/a", "full" };
	const char *const other[] = { "/b", "some" }, *const prefix[] = { "/a", "som" };
	const char *const kind_x[] = { "x" };
	const double bounds[] = { 1, 2 };
	const uint64_t counts[] = { 3, 4, 5 };

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 4096), 0);
	ck_assert_int_eq(snapshot_add(s, &pressure, some, 0.25), 0);
	ck_assert_int_eq(snapshot_add(s, &pressure, full, 0.75), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, kind_x, -3), 0);
	ck_assert_int_eq(snapshot_add_histogram(s, &plain_hist, NULL, bounds, counts, 2, 99), 0);

	/* Lookups work before and after sealing. */
	for (int round = 0; round < 2; round++) {
		ck_assert_double_eq(snapshot_value(s, "memwatch_free_bytes", NULL), 4096);
		ck_assert_double_eq(snapshot_value(s, "memwatch_pressure_ratio", some), 0.25);
		ck_assert_double_eq(snapshot_value(s, "memwatch_pressure_ratio", full), 0.75);
		ck_assert_double_eq(snapshot_value(s, "memwatch_events_total", kind_x), -3);
		/* NULL label values: the first sample of the family */
		ck_assert_double_eq(snapshot_value(s, "memwatch_pressure_ratio", NULL), 0.25);
		/* histograms answer with their count */
		ck_assert_double_eq(snapshot_value(s, "memwatch_size_bytes", NULL), 12);
		ck_assert(isnan(snapshot_value(s, "memwatch_pressure_ratio", other)));
		ck_assert(isnan(snapshot_value(s, "memwatch_pressure_ratio", prefix)));
		ck_assert(isnan(snapshot_value(s, "memwatch_free", NULL)));
		ck_assert(isnan(snapshot_value(s, "memwatch_free_bytes_total", NULL)));
		ck_assert(isnan(snapshot_value(s, "", NULL)));
		ck_assert_int_eq(snapshot_seal(s), 0);
	}
	snapshot_unref(s);
}
END_TEST

START_TEST(test_refcount)
{
	struct snapshot *s = new_snap(10);
	const char *text;

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 5), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	ck_assert_ptr_eq(snapshot_ref(s), s);
	ck_assert_ptr_eq(snapshot_ref(s), s);
	snapshot_unref(s);
	snapshot_unref(s);
	/* Still alive: one reference left (ASan flags a use after free). */
	text = snapshot_text(s, NULL);
	ck_assert_str_eq(text, "# HELP memwatch_free_bytes Free memory.\n"
			       "# TYPE memwatch_free_bytes gauge\n"
			       "memwatch_free_bytes 5\n");
	snapshot_unref(s); /* frees; LeakSanitizer fails the test otherwise */

	ck_assert_ptr_null(snapshot_ref(NULL));
	snapshot_unref(NULL);
}
END_TEST

START_TEST(test_cleanup_attribute)
{
	_cleanup_(snapshot_unrefp) struct snapshot *s = new_snap(10);
	_cleanup_(snapshot_unrefp) struct snapshot *none = NULL;

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 5), 0);
	ck_assert_ptr_null(none);
}
END_TEST

/* Unsealed snapshots with arena data must be freed completely too. */
START_TEST(test_unref_unsealed)
{
	struct snapshot *s = new_snap(100000);
	char big[20000];
	const char *lv[] = { big, "x" };
	const uint64_t slots[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	/* Label values larger than an arena block, plus many small ones. */
	ck_assert_int_eq(snapshot_add(s, &pressure, lv, 1), 0);
	for (int i = 0; i < 2000; i++)
		if (add_log2(s, &stall, NULL, slots, 8, 1.0, 1) != 0)
			ck_abort_msg("histogram %d", i);
	ck_assert_uint_eq(snapshot_series(s), 2001);
	snapshot_unref(s);
}
END_TEST

struct ref_arg {
	struct snapshot *s;
	int iterations;
};

static void *ref_worker(void *p)
{
	struct ref_arg *a = p;

	for (int i = 0; i < a->iterations; i++) {
		struct snapshot *r = snapshot_ref(a->s);

		if (snapshot_text(r, NULL)[0] != '#')
			abort();
		snapshot_unref(r);
	}
	return NULL;
}

START_TEST(test_refcount_threads)
{
	struct snapshot *s = new_snap(10);
	struct ref_arg arg = { .s = s, .iterations = 50000 };
	pthread_t th[4];
	int i;

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 5), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, ref_worker, &arg), 0);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	/* Exactly our own reference is left. */
	ck_assert_str_eq(snapshot_text(s, NULL), "# HELP memwatch_free_bytes Free memory.\n"
						 "# TYPE memwatch_free_bytes gauge\n"
						 "memwatch_free_bytes 5\n");
	snapshot_unref(s);
}
END_TEST

/* --- promtool ---------------------------------------------------------- */

static char *find_in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);

		if (n > 0 && n < sizeof(buf) - strlen(prog) - 2) {
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
			if (access(buf, X_OK) == 0)
				return strdup(buf);
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return NULL;
}

/* Feeds text to `promtool check metrics` on stdin; returns its exit status
 * (-1 if it did not exit normally) and its combined output in *out. */
static int promtool_check(const char *promtool, const char *text, size_t len, char *out, size_t out_size)
{
	char dir[] = "/tmp/test_snapshot.XXXXXX", in_path[64], out_path[64];
	int in_fd, out_fd, status;
	ssize_t n;
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(in_path, sizeof(in_path), "%s/in", dir);
	snprintf(out_path, sizeof(out_path), "%s/out", dir);
	in_fd = open(in_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_int_ge(in_fd, 0);
	ck_assert_int_eq(write(in_fd, text, len), (ssize_t)len);
	ck_assert_int_eq(lseek(in_fd, 0, SEEK_SET), 0);
	out_fd = open(out_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_int_ge(out_fd, 0);

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
			_exit(126);
		execl(promtool, "promtool", "check", "metrics", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);

	n = pread(out_fd, out, out_size - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(in_fd);
	close(out_fd);
	unlink(in_path);
	unlink(out_path);
	rmdir(dir);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static struct snapshot *every_type_snapshot(void)
{
	static const struct metric_desc up = {
		.name = "memwatch_up", .help = "Always 1.", .type = METRIC_GAUGE,
	};
	static const struct metric_desc odd_help = {
		.name = "memwatch_odd_help_ratio",
		.help = "Help with a \\ backslash,\na newline and \"quotes\".",
		.type = METRIC_GAUGE, .n_labels = 1, .labels = { "name" },
	};
	static const struct metric_desc specials = {
		.name = "memwatch_special_values_ratio", .help = "Non-finite values.",
		.type = METRIC_GAUGE, .n_labels = 1, .labels = { "which" },
	};
	struct snapshot_window w = { .seq = 1 };
	struct snapshot *s = snapshot_new(&w, 1000);
	const char *const esc[] = { "back\\slash \"quoted\"\nnewline", "some" };
	const char *const bad_utf8[] = { "bad\xff\xc3(\xed\xa0\x80\xc0\xaf\xf0\x9f\x98", "full" };
	const char *const good_utf8[] = { "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80", "some" };
	const char *const n1[] = { "trailing\\" }, *const n2[] = { "\xe2\x82" };
	const char *const nan_l[] = { "nan" }, *const pinf[] = { "pinf" }, *const ninf[] = { "ninf" };
	const char *const k1[] = { "direct" }, *const k2[] = { "kswapd" };
	const char *const sda[] = { "sda" }, *const weird_dev[] = { "dev\"\n\\\xff" };
	const double bounds[] = { 0.005, 0.01, 0.1, 1, 10 };
	const uint64_t counts[] = { 1, 2, 3, 4, 5, 6 };
	uint64_t slots[32];

	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < 32; i++)
		slots[i] = i % 3;
	ck_assert_int_eq(snapshot_add(s, &up, NULL, 1), 0);
	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 123456789012.0), 0);
	ck_assert_int_eq(snapshot_add(s, &pressure, esc, 0.1), 0);
	ck_assert_int_eq(snapshot_add(s, &pressure, bad_utf8, 1e-9), 0);
	ck_assert_int_eq(snapshot_add(s, &pressure, good_utf8, -2.5e300), 0);
	ck_assert_int_eq(snapshot_add(s, &odd_help, n1, 0), 0);
	ck_assert_int_eq(snapshot_add(s, &odd_help, n2, 1), 0);
	ck_assert_int_eq(snapshot_add(s, &specials, nan_l, NAN), 0);
	ck_assert_int_eq(snapshot_add(s, &specials, pinf, INFINITY), 0);
	ck_assert_int_eq(snapshot_add(s, &specials, ninf, -INFINITY), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, k1, 18446744073709551616.0), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, k2, 42), 0);
	ck_assert_int_eq(snapshot_add_histogram(s, &stall, sda, bounds, counts, 5, 3.25), 0);
	ck_assert_int_eq(add_log2(s, &stall, weird_dev, slots, 32, 1e-9, 123456789), 0);
	ck_assert_int_eq(snapshot_add_histogram(s, &plain_hist, NULL, NULL, counts, 0, 0), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	return s;
}

START_TEST(test_promtool_accepts)
{
	_cleanup_free_ char *promtool = find_in_path("promtool");
	char out[8192];
	struct snapshot *s;
	const char *text;
	size_t len;
	int rc;

	if (!promtool) {
		fprintf(stderr, "test_snapshot: promtool not in PATH, skipping promtool check\n");
		return;
	}
	s = every_type_snapshot();
	text = snapshot_text(s, &len);
	/* The snapshot really contains what this test is about. */
	ck_assert_ptr_nonnull(strstr(text, "# TYPE memwatch_stall_seconds histogram\n"));
	ck_assert_ptr_nonnull(strstr(text, "# TYPE memwatch_events_total counter\n"));
	ck_assert_ptr_nonnull(strstr(text, "\\\"quoted\\\"\\nnewline"));
	ck_assert_ptr_nonnull(strstr(text, "bad\xef\xbf\xbd"));
	ck_assert_ptr_nonnull(strstr(text, "} NaN\n"));
	ck_assert_ptr_nonnull(strstr(text, "le=\"+Inf\"} 21\n"));

	rc = promtool_check(promtool, text, len, out, sizeof(out));
	if (rc != 0)
		fprintf(stderr, "--- input rejected by promtool ---\n%s--- end ---\n", text);
	ck_assert_msg(rc == 0, "promtool check metrics exited with %d: %.2000s", rc, out);
	snapshot_unref(s);
}
END_TEST

/* The harness itself must be able to fail: promtool rejects raw invalid
 * UTF-8 and a malformed line. */
START_TEST(test_promtool_rejects_garbage)
{
	_cleanup_free_ char *promtool = find_in_path("promtool");
	static const char bad_utf8[] = "# HELP m h\n# TYPE m gauge\nm{a=\"\xff\"} 1\n";
	static const char bad_line[] = "# HELP m h\n# TYPE m gauge\nm{a=\"x} 1\n";
	char out[8192];

	if (!promtool) {
		fprintf(stderr, "test_snapshot: promtool not in PATH, skipping promtool check\n");
		return;
	}
	ck_assert_int_ne(promtool_check(promtool, bad_utf8, strlen(bad_utf8), out, sizeof(out)), 0);
	ck_assert_int_ne(promtool_check(promtool, bad_line, strlen(bad_line), out, sizeof(out)), 0);
}
END_TEST

/* ---- gzip copy ---- */

/* Inflates one whole gzip member (not zlib, not raw deflate); malloc'd and
 * NUL-terminated, length in *out_len. Fails the test on any error. */
static char *gunzip(const void *in, size_t len, size_t *out_len)
{
	z_stream zs = { 0 };
	size_t cap = 4096, used = 0;
	char *out = malloc(cap);
	int r;

	ck_assert_ptr_nonnull(out);
	ck_assert_uint_ge(len, 18);
	ck_assert_msg(((const unsigned char *)in)[0] == 0x1f && ((const unsigned char *)in)[1] == 0x8b,
		      "no gzip magic");
	ck_assert_int_eq(inflateInit2(&zs, 16 + 15), Z_OK); /* gzip only */
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	do {
		if (cap - used < 4096) {
			cap *= 2;
			out = realloc(out, cap);
			ck_assert_ptr_nonnull(out);
		}
		zs.next_out = (Bytef *)out + used;
		zs.avail_out = (uInt)(cap - used - 1);
		r = inflate(&zs, Z_NO_FLUSH);
		ck_assert_msg(r == Z_OK || r == Z_STREAM_END, "inflate: %d (%s)", r, zs.msg ? zs.msg : "");
		used = zs.total_out;
	} while (r != Z_STREAM_END);
	/* Exactly one member, nothing after it. */
	ck_assert_uint_eq(zs.avail_in, 0);
	inflateEnd(&zs);
	out[used] = '\0';
	*out_len = used;
	return out;
}

static void assert_gzip_is_text(const struct snapshot *s)
{
	size_t text_len, gz_len, plain_len;
	const char *text = snapshot_text(s, &text_len);
	const void *gz = snapshot_gzip(s, &gz_len);
	char *plain;

	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(gz);
	plain = gunzip(gz, gz_len, &plain_len);
	ck_assert_uint_eq(plain_len, text_len);
	ck_assert(memcmp(plain, text, text_len) == 0);
	free(plain);
}

START_TEST(test_gzip_matches_text)
{
	struct snapshot *s = new_snap(100);
	const char *const a[] = { "a" };
	const uint64_t slots[4] = { 1, 2, 0, 3 };
	size_t len = 123;

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 1024.0), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, a, 3.0), 0);
	ck_assert_int_eq(add_log2(s, &stall, a, slots, 4, 1e-9, 42), 0);
	/* Nothing compressed before seal. */
	ck_assert_ptr_null(snapshot_gzip(s, &len));
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	assert_gzip_is_text(s);
	/* Sealing again changes nothing. */
	ck_assert_int_eq(snapshot_seal(s), 0);
	assert_gzip_is_text(s);
	snapshot_unref(s);
}
END_TEST

START_TEST(test_gzip_empty)
{
	struct snapshot *s = new_snap(10);
	size_t len;

	ck_assert_str_eq(seal_text(s), "");
	ck_assert_ptr_nonnull(snapshot_gzip(s, &len));
	ck_assert_uint_gt(len, 0);
	assert_gzip_is_text(s);
	snapshot_unref(s);
}
END_TEST

/* Many series with long, varied labels: several MB of text, and a copy that
 * is much smaller (the point of it). */
START_TEST(test_gzip_huge)
{
	enum { N = 60000 };
	struct snapshot *s = new_snap(N);
	char cg[160], lvl[16];
	const char *lv[] = { cg, lvl };
	size_t i, text_len, gz_len;

	for (i = 0; i < N; i++) {
		snprintf(cg, sizeof(cg), "/sys/fs/cgroup/system.slice/unit-%zu.service/payload/%zx", i, i * 2654435761u);
		snprintf(lvl, sizeof(lvl), "%s", i % 2 ? "some" : "full");
		if (snapshot_add(s, &pressure, lv, (double)i / 7.0) != 0)
			ck_abort_msg("add %zu failed", i);
	}
	ck_assert_int_eq(snapshot_seal(s), 0);
	snapshot_text(s, &text_len);
	ck_assert_ptr_nonnull(snapshot_gzip(s, &gz_len));
	ck_assert_uint_gt(text_len, 5u << 20);
	ck_assert_msg(gz_len < text_len / 4, "gzip %zu bytes for %zu of text", gz_len, text_len);
	assert_gzip_is_text(s);
	snapshot_unref(s);
}
END_TEST

/* --- compaction and trimming ------------------------------------------- */

static const struct metric_desc cg_usage = {
	.name = "memwatch_cgroup_usage_bytes",
	.help = "Usage.",
	.type = METRIC_GAUGE,
	.n_labels = 1,
	.labels = { "cgroup" },
};

/* One compressor for every window, as the daemon keeps it: each window's copy
 * is a whole gzip member of its own text, whatever the windows before it were
 * (big, small, empty). */
START_TEST(test_gzip_reused_across_windows)
{
	struct snapshot_renderer *gz = snapshot_renderer_new();
	const unsigned series[] = { 3, 5000, 0, 1, 20000, 7 };
	char cg[64];
	const char *lv[] = { cg };
	size_t w, i;

	ck_assert_ptr_nonnull(gz);
	for (w = 0; w < sizeof(series) / sizeof(series[0]); w++) {
		struct snapshot *s = new_snap(series[w] + 1);

		for (i = 0; i < series[w]; i++) {
			snprintf(cg, sizeof(cg), "/w%zu/cg-%zu", w, i * 2654435761u);
			ck_assert_int_eq(snapshot_add(s, &cg_usage, lv, (double)(w * i)), 0);
		}
		ck_assert_int_eq(snapshot_seal_with(s, gz), 0);
		assert_gzip_is_text(s);
		snapshot_unref(s);
	}
	snapshot_renderer_unref(gz);
}
END_TEST


/* What a window of a busy host looks like: label values repeated across
 * families, runs of histograms with equal bounds broken by other bounds,
 * histograms without finite buckets, empty and missing label values. */
static struct snapshot *mixed_snapshot(uint64_t seq, unsigned scale)
{
	struct snapshot_window w = { .seq = seq, .end_real_usec = seq * 1000000 };
	struct snapshot *s = snapshot_new(&w, 10000);
	const double bounds[] = { 0.5, 1, 2 };
	const uint64_t counts[] = { 1, 2, 3, 4 };
	uint64_t slots[8];
	char cg[64], dev[16];
	const char *cgl[] = { cg }, *devl[] = { dev }, *lv[] = { cg, "some" };
	unsigned i;

	ck_assert_ptr_nonnull(s);
	for (i = 0; i < 8; i++)
		slots[i] = (i + seq) * scale;
	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 4096.0 * (double)seq), 0);
	for (i = 0; i < 20; i++) {
		snprintf(cg, sizeof(cg), "/system.slice/unit-%u.service", i);
		ck_assert_int_eq(snapshot_add(s, &cg_usage, cgl, (double)(i * scale)), 0);
		ck_assert_int_eq(snapshot_add(s, &pressure, lv, (double)i / 8), 0);
		ck_assert_int_eq(snapshot_add(s, &events_total, cgl, (double)(i * seq * scale)), 0);
	}
	for (i = 0; i < 6; i++) {
		snprintf(dev, sizeof(dev), "sd%c", 'a' + i);
		if (i == 3)
			ck_assert_int_eq(snapshot_add_histogram(s, &stall, devl, bounds, counts, 3, 1.5 * seq), 0);
		else
			ck_assert_int_eq(add_log2(s, &stall, devl, slots, i == 5 ? 6 : 8,
								     1e-9, (double)(seq * 100 + i)), 0);
	}
	ck_assert_int_eq(snapshot_add_histogram(s, &plain_hist, NULL, NULL, counts, 0, 0), 0);
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 8, 1.0, 7), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, (const char *const[]){ "" }, 1), 0);
	ck_assert_int_eq(snapshot_add(s, &pressure, NULL, 2), 0);
	return s;
}

static char *render_text(const struct snapshot *s)
{
	struct strbuf sb;

	strbuf_init(&sb);
	ck_assert_int_eq(snapshot_render_text(s, &sb), 0);
	return strbuf_steal(&sb, NULL);
}

static char *render_json(const struct snapshot *s, const struct snapshot *prev)
{
	struct strbuf sb;

	strbuf_init(&sb);
	ck_assert_int_eq(snapshot_render_json(&sb, s, prev), 0);
	return strbuf_steal(&sb, NULL);
}

static void collect_labels(const char *const *labels, unsigned n_labels, double value, double sum, void *ud)
{
	const char **first = ud;

	if (n_labels && strcmp(labels[0], "/system.slice/unit-7.service") == 0)
		*first = labels[0];
}

static void collect_label_vector(const char *const *labels, unsigned n_labels, double value, double sum, void *ud)
{
	const char *const **vector = ud;

	if (n_labels == 1 && strcmp(labels[0], "/system.slice/unit-7.service") == 0)
		*vector = labels;
}

/* Sealing moves the samples into one block; nothing a reader sees changes. */
START_TEST(test_compact_keeps_everything)
{
	struct snapshot *prev = mixed_snapshot(1, 1), *s = mixed_snapshot(2, 3);
	_cleanup_free_ char *text = render_text(s), *json = render_json(s, prev), *after = NULL, *json_after = NULL;
	const char *usage_label = NULL, *events_label = NULL;
	const char *const *usage_vector = NULL, *const *events_vector = NULL;
	size_t len;

	ck_assert_int_eq(snapshot_seal(prev), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	ck_assert_str_eq(snapshot_text(s, &len), text);
	ck_assert_uint_eq(len, strlen(text));
	assert_gzip_is_text(s);
	after = render_text(s);
	ck_assert_str_eq(after, text);
	json_after = render_json(s, prev);
	ck_assert_str_eq(json_after, json);
	ck_assert_uint_eq(snapshot_series(s), 1 + 60 + 6 + 2 + 2);
	ck_assert_double_eq(snapshot_value(s, "memwatch_events_total", (const char *const[]){ "" }), 1);
	ck_assert_double_eq(snapshot_value(s, "memwatch_stall_seconds", (const char *const[]){ "sdd" }), 10);

	/* A value repeated across families is stored once. */
	snapshot_foreach(s, "memwatch_cgroup_usage_bytes", collect_labels, &usage_label);
	snapshot_foreach(s, "memwatch_events_total", collect_labels, &events_label);
	ck_assert_ptr_nonnull(usage_label);
	ck_assert_ptr_eq(usage_label, events_label);
	/* And so is a vector of label values repeated across families. */
	snapshot_foreach(s, "memwatch_cgroup_usage_bytes", collect_label_vector, &usage_vector);
	snapshot_foreach(s, "memwatch_events_total", collect_label_vector, &events_vector);
	ck_assert_ptr_nonnull(usage_vector);
	ck_assert_ptr_eq(usage_vector, events_vector);

	/* Sealed (and compacted) means read-only. */
	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 1), -EBUSY);
	snapshot_unref(prev);
	snapshot_unref(s);
}
END_TEST

START_TEST(test_trim_keeps_samples)
{
	struct snapshot *prev = mixed_snapshot(1, 1), *s = mixed_snapshot(2, 3);
	_cleanup_free_ char *text = NULL, *json = NULL, *again = NULL, *json_again = NULL;
	void *blocks[SNAPSHOT_TRIM_BLOCKS];
	size_t len = 123;

	ck_assert_int_eq(snapshot_seal(prev), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	text = strdup(snapshot_text(s, NULL));
	json = render_json(s, prev);

	/* Nobody asked for a body of prev: nothing to hand over. */
	ck_assert_uint_eq(snapshot_trim(prev, blocks), 0);
	/* The plain text only: nobody asked for anything else. */
	ck_assert_uint_eq(snapshot_trim(s, blocks), 1);
	ck_assert_ptr_null(snapshot_text(s, &len));
	ck_assert_uint_eq(len, 0);
	len = 123;
	ck_assert_ptr_null(snapshot_gzip(s, &len));
	ck_assert_uint_eq(len, 0);
	free(blocks[0]);
	/* Once is enough, and nothing is rendered again. */
	ck_assert_uint_eq(snapshot_trim(s, blocks), 0);
	ck_assert_ptr_null(snapshot_body(s, EXPO_FORMAT_OPENMETRICS, false, NULL));

	/* The samples answer as before, deltas against a trimmed window too. */
	again = render_text(s);
	ck_assert_str_eq(again, text);
	json_again = render_json(s, prev);
	ck_assert_str_eq(json_again, json);
	ck_assert_double_eq(snapshot_value(s, "memwatch_free_bytes", NULL), 8192);
	ck_assert_double_eq(snapshot_value(s, "memwatch_cgroup_usage_bytes",
					   (const char *const[]){ "/system.slice/unit-19.service" }), 57);
	ck_assert_uint_eq(snapshot_window(s)->seq, 2);
	snapshot_unref(prev);
	snapshot_unref(s); /* LeakSanitizer: nothing left behind */
}
END_TEST

/* Someone else's reference (a scrape being sent) keeps the text. */
START_TEST(test_trim_refused_while_shared)
{
	struct snapshot *s = mixed_snapshot(1, 1), *other;
	const char *text, *gz;
	void *blocks[SNAPSHOT_TRIM_BLOCKS];
	size_t len, gz_len;

	/* Before seal there is nothing to trim. */
	ck_assert_uint_eq(snapshot_trim(s, blocks), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	text = snapshot_text(s, &len);
	gz = snapshot_gzip(s, &gz_len);
	other = snapshot_ref(s);
	ck_assert_uint_eq(snapshot_trim(s, blocks), 0);
	ck_assert_ptr_eq(snapshot_text(other, NULL), text);
	ck_assert_ptr_eq(snapshot_gzip(other, NULL), gz);
	assert_gzip_is_text(other);
	snapshot_unref(other);
	/* The text, and its gzip member asked for after it. */
	ck_assert_uint_eq(snapshot_trim(s, blocks), 2);
	free(blocks[0]);
	free(blocks[1]);
	ck_assert_ptr_null(snapshot_text(s, NULL));
	snapshot_unref(s);
}
END_TEST

static Suite *snapshot_suite(void)
{
	Suite *s = suite_create("snapshot");
	TCase *core = tcase_create("core");
	TCase *hist = tcase_create("histogram");
	TCase *life = tcase_create("lifetime");
	TCase *prom = tcase_create("promtool");
	TCase *gzip = tcase_create("gzip");
	TCase *trim = tcase_create("trim");

	tcase_add_test(core, test_window_copied);
	tcase_add_test(core, test_empty_snapshot);
	tcase_add_test(core, test_render_exact);
	tcase_add_test(core, test_label_values_copied);
	tcase_add_test(core, test_null_label_values);
	tcase_add_test(core, test_families_grouped);
	tcase_add_test(core, test_many_families_interleaved);
	tcase_add_test(core, test_max_series);
	tcase_add_test(core, test_max_series_zero);
	tcase_add_test(core, test_many_series_grow);
	tcase_add_test(core, test_add_after_seal);
	tcase_add_test(core, test_seal_full_snapshot_refused_too);
	tcase_add_test(core, test_value_lookup);
	suite_add_tcase(s, core);

	tcase_add_test(hist, test_histogram_explicit);
	tcase_add_test(hist, test_histogram_bounds_copied_and_two_series);
	tcase_add_test(hist, test_histogram_no_finite_bounds);
	tcase_add_test(hist, test_histogram_rejects_bad_bounds);
	tcase_add_test(hist, test_type_mismatch_rejected);
	tcase_add_test(hist, test_log2_histogram);
	tcase_add_test(hist, test_log2_histogram_nanoseconds);
	tcase_add_test(hist, test_log2_histogram_limits);
	tcase_add_test(hist, test_histogram_slots_descriptor_bounds);
	suite_add_tcase(s, hist);

	tcase_add_test(life, test_refcount);
	tcase_add_test(life, test_cleanup_attribute);
	tcase_add_test(life, test_unref_unsealed);
	tcase_add_test(life, test_refcount_threads);
	tcase_set_timeout(life, 60);
	suite_add_tcase(s, life);

	tcase_add_test(gzip, test_gzip_matches_text);
	tcase_add_test(gzip, test_gzip_empty);
	tcase_add_test(gzip, test_gzip_huge);
	tcase_add_test(gzip, test_gzip_reused_across_windows);
	tcase_set_timeout(gzip, 60);
	suite_add_tcase(s, gzip);

	tcase_add_test(trim, test_compact_keeps_everything);
	tcase_add_test(trim, test_trim_keeps_samples);
	tcase_add_test(trim, test_trim_refused_while_shared);
	suite_add_tcase(s, trim);

	tcase_add_test(prom, test_promtool_accepts);
	tcase_add_test(prom, test_promtool_rejects_garbage);
	tcase_set_timeout(prom, 60);
	suite_add_tcase(s, prom);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(snapshot_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
