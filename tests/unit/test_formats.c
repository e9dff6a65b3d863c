/* SPDX-License-Identifier: GPL-2.0 */
/* The three exposition formats of one fixed window, byte for byte against
 * tests/fixtures/formats/ (written by hand for the text formats and checked
 * with promtool; the protobuf one decoded with protoc --decode_raw). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fixture.h"
#include "snapshot.h"

static const struct metric_desc avail_bytes = {
	.name = "memwatch_test_available_bytes",
	.help = "Available \"now\", a \\ and a\nnewline.",
	.type = METRIC_GAUGE,
	.unit = METRIC_UNIT_BYTES,
};

static const struct metric_desc kills_total = {
	.name = "memwatch_test_kills_total",
	.help = "Kills.",
	.type = METRIC_COUNTER,
};

static const struct metric_desc cgroup_seconds_total = {
	.name = "memwatch_test_cgroup_seconds_total",
	.help = "Stall time by cgroup.",
	.type = METRIC_COUNTER,
	.unit = METRIC_UNIT_SECONDS,
	.n_labels = 1,
	.labels = { "cgroup" },
};

static const double bounds[] = { 0.001, 0.01, 0.1 };
static const char *const le[] = { "0.001", "0.01", "0.1" };
static const struct metric_desc stall_seconds = {
	.name = "memwatch_test_stall_seconds",
	.help = "Stalls.",
	.type = METRIC_HISTOGRAM,
	.unit = METRIC_UNIT_SECONDS,
	.n_bounds = 3,
	.bounds = bounds,
	.le = le,
};

static const struct metric_desc ratio = {
	.name = "memwatch_test_ratio",
	.help = "A ratio, by zone.",
	.type = METRIC_GAUGE,
	.unit = METRIC_UNIT_RATIO,
	.n_labels = 2,
	.labels = { "zone", "node" },
};

#define CREATED 1700000000.25

static struct snapshot *fixed_window(void)
{
	struct snapshot_window w = { .seq = 7 };
	struct snapshot *s = snapshot_new(&w, 100);
	size_t mark;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(snapshot_add(s, &avail_bytes, NULL, 123456789), 0);
	mark = snapshot_mark(s);
	ck_assert_int_eq(snapshot_add(s, &kills_total, NULL, 3), 0);
	ck_assert_int_eq(snapshot_add(s, &cgroup_seconds_total, (const char *const[]){ "/a\"b\\c\nd" }, 0.5), 0);
	ck_assert_int_eq(snapshot_add(s, &cgroup_seconds_total, (const char *const[]){ "other" }, 1e-7), 0);
	ck_assert_int_eq(snapshot_add_histogram_slots(s, &stall_seconds, NULL, (const uint64_t[]){ 1, 0, 5, 2 }, 4, 0.75), 0);
	snapshot_set_created(s, mark, CREATED);
	ck_assert_int_eq(snapshot_add(s, &ratio, (const char *const[]){ "Normal", "0" }, NAN), 0);
	ck_assert_int_eq(snapshot_add(s, &ratio, (const char *const[]){ "DMA", "0" }, INFINITY), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	return s;
}

static void check_body(enum expo_format f, const char *fixture)
{
	struct snapshot *s = fixed_window();
	size_t want_len, len, gz_len;
	char *want = fixture_read("formats", fixture, &want_len);
	const char *body = snapshot_body(s, f, false, &len);
	const unsigned char *gz = snapshot_body(s, f, true, &gz_len);
	unsigned char *plain = malloc(len + 1);
	uLongf plain_len = len + 1;
	z_stream zs = { 0 };

	ck_assert_ptr_nonnull(body);
	ck_assert_msg(len == want_len && memcmp(body, want, len) == 0, "%s: got %zu bytes:\n%.*s", fixture, len,
		      (int)len, body);
	/* Its gzip copy holds the same bytes. */
	ck_assert_ptr_nonnull(gz);
	ck_assert_int_eq(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)gz;
	zs.avail_in = (uInt)gz_len;
	zs.next_out = plain;
	zs.avail_out = (uInt)plain_len;
	ck_assert_int_eq(inflate(&zs, Z_FINISH), Z_STREAM_END);
	ck_assert_uint_eq(zs.total_out, len);
	ck_assert(memcmp(plain, body, len) == 0);
	inflateEnd(&zs);
	free(plain);
	free(want);
	snapshot_unref(s);
}

START_TEST(test_text)
{
	check_body(EXPO_FORMAT_TEXT, "window.prom");
}
END_TEST

START_TEST(test_openmetrics)
{
	check_body(EXPO_FORMAT_OPENMETRICS, "window.om");
}
END_TEST

/* Trimmed, a window has no body in any format. */
START_TEST(test_trimmed)
{
	struct snapshot *s = fixed_window();
	void *block = snapshot_trim(s);
	size_t len = 1;

	ck_assert_ptr_nonnull(block);
	for (int f = 0; f < EXPO_FORMAT__COUNT; f++) {
		ck_assert_ptr_null(snapshot_body(s, f, false, &len));
		ck_assert_uint_eq(len, 0);
		ck_assert_ptr_null(snapshot_body(s, f, true, &len));
	}
	free(block);
	snapshot_unref(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("formats");
	TCase *tc = tcase_create("fixed window");

	tcase_add_test(tc, test_text);
	tcase_add_test(tc, test_openmetrics);
	tcase_add_test(tc, test_trimmed);
	suite_add_tcase(s, tc);
	return fixture_run_suite(s);
}
