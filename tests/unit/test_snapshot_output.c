/* SPDX-License-Identifier: GPL-2.0 */
/* lib/snapshot.c: what a sealed snapshot serves: the text format checked by
 * promtool, the gzip copy, and compaction and trimming of old windows. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "snapshot.h"

#include "snapshot_fixture.h"
#include "suite_main.h"

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

/* More than the intern tables' first size, so they grow while compacting. */
#define MIXED_CGROUPS 200

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
	for (i = 0; i < MIXED_CGROUPS; i++) {
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
	ck_assert_uint_eq(snapshot_series(s), 1 + 3 * MIXED_CGROUPS + 6 + 2 + 2);
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

static Suite *snapshot_output_suite(void)
{
	Suite *s = suite_create("snapshot_output");
	TCase *prom = tcase_create("promtool");
	TCase *gzip = tcase_create("gzip");
	TCase *trim = tcase_create("trim");

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
	return suite_main_run(snapshot_output_suite());
}
