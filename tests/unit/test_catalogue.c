/* SPDX-License-Identifier: GPL-2.0 */
/* The catalogue of metric families (lib/catalogue.c): its own rules, that no
 * source names a family past it, and that docs/metrics.md agrees with it. */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"

#ifndef SOURCE_DIR
#error "SOURCE_DIR must point at the source tree"
#endif

static const enum metric_unit all_units[] = {
	METRIC_UNIT_BYTES, METRIC_UNIT_SECONDS, METRIC_UNIT_RATIO, METRIC_UNIT_BYTES_PER_SECOND,
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Prometheus: [a-zA-Z_:][a-zA-Z0-9_:]* for metrics, no ':' in labels. */
static bool valid_name(const char *s, bool label)
{
	if (!s || !*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && (label || *s != ':'))
			return false;
	return true;
}

START_TEST(test_names_unique_and_valid)
{
	size_t i, j;

	for (i = 0; i < METRIC__COUNT; i++) {
		const struct metric_desc *d = &metric_catalogue[i];

		ck_assert_msg(d->name, "catalogue entry %zu is empty", i);
		ck_assert_msg(valid_name(d->name, false), "%s: not a valid metric name", d->name);
		ck_assert_msg(strncmp(d->name, "memwatch_", 9) == 0, "%s: not under memwatch_", d->name);
		ck_assert_msg(d->help && *d->help && !strchr(d->help, '\n'), "%s: help empty or on two lines", d->name);
		ck_assert_msg(d->owner && *d->owner, "%s: no owner", d->name);
		ck_assert_msg(d->source && *d->source && !strchr(d->source, '|'), "%s: no source, or a | in it", d->name);
		ck_assert_ptr_eq(metric_find(d->name), d);
		for (j = 0; j < i; j++)
			ck_assert_msg(strcmp(metric_catalogue[j].name, d->name) != 0, "%s twice", d->name);
	}
	ck_assert_ptr_null(metric_find("memwatch_no_such_family"));
	ck_assert_ptr_null(metric_find(NULL));
}
END_TEST

START_TEST(test_type_and_unit_suffixes)
{
	size_t i, u;

	for (i = 0; i < METRIC__COUNT; i++) {
		const struct metric_desc *d = &metric_catalogue[i];
		char base[256];
		size_t n = strlen(d->name);

		ck_assert_msg(ends_with(d->name, "_total") == (d->type == METRIC_COUNTER),
			      "%s: counters and only counters end in _total", d->name);
		ck_assert_uint_lt(n, sizeof(base));
		memcpy(base, d->name, n + 1);
		if (d->type == METRIC_COUNTER)
			base[n - strlen("_total")] = '\0';
		if (d->unit != METRIC_UNIT_NONE) {
			ck_assert_msg(ends_with(base, metric_unit_suffix(d->unit)), "%s: unit %s, name not ending in %s",
				      d->name, metric_unit_name(d->unit), metric_unit_suffix(d->unit));
			continue;
		}
		for (u = 0; u < sizeof(all_units) / sizeof(all_units[0]); u++)
			ck_assert_msg(!ends_with(base, metric_unit_suffix(all_units[u])),
				      "%s: the name says %s, the catalogue says no unit", d->name,
				      metric_unit_name(all_units[u]));
	}
	ck_assert_str_eq(metric_unit_name(METRIC_UNIT_BYTES_PER_SECOND), "bytes_per_second");
	ck_assert_str_eq(metric_unit_suffix(METRIC_UNIT_NONE), "");
}
END_TEST

START_TEST(test_labels_valid)
{
	size_t i;
	unsigned k, l;

	for (i = 0; i < METRIC__COUNT; i++) {
		const struct metric_desc *d = &metric_catalogue[i];

		ck_assert_uint_le(d->n_labels, METRIC_MAX_LABELS);
		for (k = 0; k < METRIC_MAX_LABELS; k++) {
			if (k >= d->n_labels) {
				ck_assert_msg(!d->labels[k], "%s: a label past n_labels", d->name);
				continue;
			}
			ck_assert_msg(valid_name(d->labels[k], true) && strncmp(d->labels[k], "__", 2) != 0,
				      "%s: label \"%s\" is not a valid label name", d->name, d->labels[k]);
			ck_assert_msg(d->type != METRIC_HISTOGRAM || strcmp(d->labels[k], "le") != 0,
				      "%s: le is the bucket label", d->name);
			for (l = 0; l < k; l++)
				ck_assert_msg(strcmp(d->labels[l], d->labels[k]) != 0, "%s: label %s twice", d->name,
					      d->labels[k]);
		}
	}
}
END_TEST

START_TEST(test_histogram_bounds)
{
	size_t i, b, histograms = 0;

	for (i = 0; i < METRIC__COUNT; i++) {
		const struct metric_desc *d = &metric_catalogue[i];

		if (d->type != METRIC_HISTOGRAM) {
			ck_assert_msg(!d->bounds && !d->le && d->n_bounds == 0, "%s: bounds on a non-histogram", d->name);
			ck_assert_msg((d->flags & (METRIC_FLAG_NATIVE_HISTOGRAM | METRIC_FLAG_EXEMPLARS)) == 0,
				      "%s: native buckets or exemplars on a non-histogram", d->name);
			ck_assert_msg(!(d->flags & METRIC_FLAG_SERIES_FROM_START) || (d->type == METRIC_COUNTER && d->n_labels),
				      "%s: series from the start on what is not a labelled counter", d->name);
			continue;
		}
		histograms++;
		/* Native buckets and exemplars are the kernel's stall histograms'
		 * (struct latency_histogram): in seconds. */
		ck_assert_msg(d->flags == 0 || d->unit == METRIC_UNIT_SECONDS, "%s: flags on a histogram not in seconds",
			      d->name);
		ck_assert_msg(d->bounds && d->le && d->n_bounds > 0, "%s: a histogram without bounds", d->name);
		for (b = 0; b < d->n_bounds; b++) {
			char text[EXPO_NUMBER_MAX];

			ck_assert_msg(isfinite(d->bounds[b]), "%s: bound %zu not finite", d->name, b);
			ck_assert_msg(b == 0 || d->bounds[b] > d->bounds[b - 1], "%s: bound %zu not above the one before",
				      d->name, b);
			expo_format_number(text, d->bounds[b]);
			ck_assert_msg(strcmp(text, d->le[b]) == 0, "%s: le text \"%s\" for bound %s", d->name, d->le[b],
				      text);
		}
	}
	ck_assert_uint_eq(histograms, 4); /* three reclaim kinds and direct compaction */
	ck_assert(METRIC(MW_DIRECT_RECLAIM_SECONDS)->flags == (METRIC_FLAG_NATIVE_HISTOGRAM | METRIC_FLAG_EXEMPLARS));
	ck_assert(METRIC(MW_MEMCG_RECLAIM_SECONDS)->flags == (METRIC_FLAG_NATIVE_HISTOGRAM | METRIC_FLAG_EXEMPLARS));
	ck_assert(METRIC(MW_MEMCG_SOFTLIMIT_RECLAIM_SECONDS)->flags == METRIC_FLAG_NATIVE_HISTOGRAM);
	ck_assert(METRIC(MW_COMPACTION_STALL_SECONDS)->flags == (METRIC_FLAG_NATIVE_HISTOGRAM | METRIC_FLAG_EXEMPLARS));
}
END_TEST

/* The reclaim buckets are the kernel's log2 slots: 2^k ns, k = 10 ... 34. */
START_TEST(test_reclaim_bounds_powers_of_two_ns)
{
	const struct metric_desc *d = METRIC(MW_DIRECT_RECLAIM_SECONDS);
	size_t b;

	ck_assert_uint_eq(d->n_bounds, RECLAIM_SECONDS_BOUNDS);
	for (b = 0; b < d->n_bounds; b++)
		ck_assert_msg(d->bounds[b] == ldexp(1.0, 10 + (int)b) * 1e-9, "bound %zu is %.17g", b, d->bounds[b]);
	ck_assert_ptr_eq(METRIC(MW_MEMCG_RECLAIM_SECONDS)->bounds, d->bounds);
	ck_assert_ptr_eq(METRIC(MW_MEMCG_SOFTLIMIT_RECLAIM_SECONDS)->bounds, d->bounds);
}
END_TEST

/* ---- sources: no family named past the catalogue ---- */

/* String literals that start like a family but name something else. */
static const char *const not_families[] = {
	"memwatch_events", /* the shared BPF ring buffer's map name */
};

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	long size;

	ck_assert_msg(f, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	ck_assert_int_ge(size, 0);
	rewind(f);
	buf = malloc((size_t)size + 1);
	ck_assert_ptr_nonnull(buf);
	len = fread(buf, 1, (size_t)size, f);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* Each "memwatch_..." literal in text, but in the file's excused list. */
static size_t scan_literals(const char *path, const char *text, char *report, size_t report_len)
{
	const char *p = text;
	size_t found = 0, i;

	while ((p = strstr(p, "\"memwatch_"))) {
		const char *end = p + 1;
		char lit[256];
		bool excused = false;

		while (*end && (isalnum((unsigned char)*end) || *end == '_'))
			end++;
		snprintf(lit, sizeof(lit), "%.*s", (int)(end - p - 1), p + 1);
		for (i = 0; i < sizeof(not_families) / sizeof(not_families[0]); i++)
			excused |= *end == '"' && strcmp(lit, not_families[i]) == 0;
		if (!excused) {
			size_t used = strlen(report);

			snprintf(report + used, report_len - used, "%s: \"%s%s\n", path, lit, *end == '"' ? "\"" : "...");
			found++;
		}
		p = end;
	}
	return found;
}

static size_t scan_dir(const char *rel, char *report, size_t report_len, size_t *files)
{
	char dir[4096];
	struct dirent *e;
	size_t found = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", SOURCE_DIR, rel);
	d = opendir(dir);
	ck_assert_msg(d, "cannot open %s", dir);
	while ((e = readdir(d))) {
		char path[4096 + 256], relpath[512];
		char *text;

		if (!ends_with(e->d_name, ".c") && !ends_with(e->d_name, ".h"))
			continue;
		snprintf(relpath, sizeof(relpath), "%s/%s", rel, e->d_name);
		if (strcmp(relpath, "lib/catalogue.c") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		text = read_all(path);
		found += scan_literals(relpath, text, report, report_len);
		free(text);
		(*files)++;
	}
	closedir(d);
	return found;
}

START_TEST(test_no_family_names_outside_catalogue)
{
	static const char *const dirs[] = { "lib", "daemon", "daemon/collectors", "daemon/top" };
	char report[8192] = "";
	size_t found = 0, files = 0, i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		found += scan_dir(dirs[i], report, sizeof(report), &files);
	ck_assert_msg(found == 0,
		      "family names written outside lib/catalogue.c (use METRIC(MW_...) or METRIC_NAME(MW_...)):\n%s",
		      report);
	ck_assert_uint_ge(files, 40);
	for (i = 0; i < sizeof(not_families) / sizeof(not_families[0]); i++)
		ck_assert_msg(!metric_find(not_families[i]), "%s is excused but is a family", not_families[i]);
}
END_TEST

START_TEST(test_scan_finds_literals)
{
	char report[1024] = "";

	ck_assert_uint_eq(scan_literals("x.c", "f(\"memwatch_memory_total_bytes\"); g(\"memwatch_events\");"
					       " h(\"memwatchd\"); i(\"memwatch_events_total\");",
					report, sizeof(report)),
			  2);
	ck_assert_str_eq(report, "x.c: \"memwatch_memory_total_bytes\"\nx.c: \"memwatch_events_total\"\n");
}
END_TEST

/* ---- docs/metrics.md ---- */

/* Splits a table row at the | that are not escaped; returns the cell count. */
static size_t split_row(char *row, char **cells, size_t max)
{
	size_t n = 0;
	char *p = row, *start;

	if (*p == '|')
		p++;
	start = p;
	for (; *p && n < max; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p != '|')
			continue;
		*p = '\0';
		cells[n++] = start;
		start = p + 1;
	}
	for (size_t i = 0; i < n; i++) {
		while (isspace((unsigned char)*cells[i]))
			cells[i]++;
		for (char *e = cells[i] + strlen(cells[i]); e > cells[i] && isspace((unsigned char)e[-1]); e--)
			e[-1] = '\0';
	}
	return n;
}

/* The label names of a labels cell: the `code` spans outside parentheses. */
static void doc_labels(const char *cell, char *out, size_t len)
{
	int depth = 0;
	bool in_code = false;
	size_t o = 0;

	for (; *cell && o + 2 < len; cell++) {
		if (!in_code && *cell == '(')
			depth++;
		else if (!in_code && *cell == ')')
			depth--;
		else if (*cell == '`' && depth == 0) {
			in_code = !in_code;
			if (!in_code)
				out[o++] = ',';
		} else if (in_code && depth == 0)
			out[o++] = *cell;
	}
	if (o && out[o - 1] == ',')
		o--;
	out[o] = '\0';
}

static void catalogue_labels(const struct metric_desc *d, char *out, size_t len)
{
	size_t o = 0;
	unsigned k;

	out[0] = '\0';
	for (k = 0; k < d->n_labels; k++)
		o += (size_t)snprintf(out + o, len - o, "%s%s", k ? "," : "", d->labels[k]);
}

/* The doc's unit column is for people ("ratio 0–1", "seconds since the
 * epoch", "stalls"); it must start with the catalogue's unit, and a family
 * without one must not read as bytes, seconds or a ratio. */
static bool doc_unit_agrees(const char *cell, enum metric_unit unit)
{
	static const char *const words[] = {
		[METRIC_UNIT_BYTES] = "bytes", [METRIC_UNIT_SECONDS] = "seconds",
		[METRIC_UNIT_RATIO] = "ratio", [METRIC_UNIT_BYTES_PER_SECOND] = "bytes/s",
	};
	size_t u;

	if (unit == METRIC_UNIT_BYTES)
		return strcmp(cell, "bytes") == 0;
	if (unit != METRIC_UNIT_NONE)
		return strncmp(cell, words[unit], strlen(words[unit])) == 0;
	for (u = 1; u < sizeof(words) / sizeof(words[0]); u++)
		if (strncmp(cell, words[u], strlen(words[u])) == 0)
			return false;
	return true;
}

/* Every family documented once, with the catalogue's type, labels and unit;
 * nothing documented that the catalogue does not have. */
static size_t check_doc(char *doc, char *report, size_t report_len)
{
	unsigned seen[METRIC__COUNT] = { 0 };
	size_t problems = 0, i;
	char *line, *save = NULL;

#define PROBLEM(...)                                                                      \
	do {                                                                              \
		size_t used_ = strlen(report);                                            \
		snprintf(report + used_, report_len - used_, __VA_ARGS__);                \
		problems++;                                                               \
	} while (0)

	for (line = strtok_r(doc, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *cells[8], name[256], labels[512], want[512];
		const struct metric_desc *d;
		size_t n;

		if (strncmp(line, "| `memwatch_", 12) != 0)
			continue;
		n = split_row(line, cells, 8);
		if (n < 5 || cells[0][0] != '`') {
			PROBLEM("a row of %zu cells: %s\n", n, line);
			continue;
		}
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(cells[0] + 1, "`"), cells[0] + 1);
		d = metric_find(name);
		if (!d) {
			PROBLEM("%s: documented, not in the catalogue\n", name);
			continue;
		}
		seen[d - metric_catalogue]++;
		if (strcmp(cells[1], metric_type_name(d->type)) != 0)
			PROBLEM("%s: documented as %s, is a %s\n", name, cells[1], metric_type_name(d->type));
		doc_labels(cells[2], labels, sizeof(labels));
		catalogue_labels(d, want, sizeof(want));
		if (strcmp(labels, want) != 0)
			PROBLEM("%s: documented labels \"%s\", catalogue \"%s\"\n", name, labels, want);
		if (!doc_unit_agrees(cells[3], d->unit))
			PROBLEM("%s: documented unit \"%s\", catalogue %s\n", name, cells[3], metric_unit_name(d->unit));
	}
	for (i = 0; i < METRIC__COUNT; i++)
		if (seen[i] != 1)
			PROBLEM("%s: documented %u times\n", metric_catalogue[i].name, seen[i]);
#undef PROBLEM
	return problems;
}

START_TEST(test_doc_agrees)
{
	char *doc = read_all(SOURCE_DIR "/docs/metrics.md");
	char report[16384] = "";
	size_t problems = check_doc(doc, report, sizeof(report));

	ck_assert_msg(problems == 0, "docs/metrics.md disagrees with lib/catalogue.c:\n%s", report);
	free(doc);
}
END_TEST

START_TEST(test_doc_check_catches_drift)
{
	char *doc = read_all(SOURCE_DIR "/docs/metrics.md");
	char report[16384] = "";
	char *p;

	/* a type, a label and a unit changed, one family renamed (so one missing) */
	p = strstr(doc, "| `memwatch_window_seconds` | gauge |");
	ck_assert_ptr_nonnull(p);
	memcpy(strstr(p, "gauge"), "count", 5);
	p = strstr(doc, "| `memwatch_collector_up` | gauge | `collector` |");
	ck_assert_ptr_nonnull(p);
	memcpy(strstr(p, "`collector`"), "`collectxr`", 11);
	p = strstr(doc, "| `memwatch_memory_free_bytes` | gauge | | bytes |");
	ck_assert_ptr_nonnull(p);
	memcpy(strstr(p, "bytes |"), "pages |", 7);
	p = strstr(doc, "| `memwatch_memory_total_bytes` |");
	ck_assert_ptr_nonnull(p);
	memcpy(strstr(p, "total"), "totl_", 5);
	ck_assert_uint_eq(check_doc(doc, report, sizeof(report)), 5);
	ck_assert_ptr_nonnull(strstr(report, "memwatch_window_seconds: documented as count, is a gauge\n"));
	ck_assert_ptr_nonnull(strstr(report, "memwatch_collector_up: documented labels \"collectxr\", catalogue \"collector\"\n"));
	ck_assert_ptr_nonnull(strstr(report, "memwatch_memory_free_bytes: documented unit \"pages\", catalogue bytes\n"));
	ck_assert_ptr_nonnull(strstr(report, "memwatch_memory_totl__bytes: documented, not in the catalogue\n"));
	ck_assert_ptr_nonnull(strstr(report, "memwatch_memory_total_bytes: documented 0 times\n"));
	free(doc);
}
END_TEST

static Suite *catalogue_suite(void)
{
	Suite *s = suite_create("catalogue");
	TCase *tc = tcase_create("catalogue");

	tcase_add_test(tc, test_names_unique_and_valid);
	tcase_add_test(tc, test_type_and_unit_suffixes);
	tcase_add_test(tc, test_labels_valid);
	tcase_add_test(tc, test_histogram_bounds);
	tcase_add_test(tc, test_reclaim_bounds_powers_of_two_ns);
	suite_add_tcase(s, tc);
	tc = tcase_create("sources");
	tcase_add_test(tc, test_no_family_names_outside_catalogue);
	tcase_add_test(tc, test_scan_finds_literals);
	suite_add_tcase(s, tc);
	tc = tcase_create("docs");
	tcase_add_test(tc, test_doc_agrees);
	tcase_add_test(tc, test_doc_check_catches_drift);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(catalogue_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
