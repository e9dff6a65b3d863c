/* SPDX-License-Identifier: GPL-2.0 */
/* The alloc collector's [collector.alloc] keys through the daemon's own
 * configuration path (collector_settings_build, as at start-up and reload),
 * and its default mode, trace = no, on recorded /proc/vmstat fixtures: that
 * mode opens no BPF object, so it runs here without root. trace = yes (BPF)
 * is covered by tests/integration/test_collectors.c. Beside it, the window's
 * shared reads of /proc/vmstat and /proc/meminfo (daemon/vmstat_source.c). */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "core.h"
#include "config.h"
#include "fixture.h"
#include "snapshot.h"
#include "vmstat_source.h"

#define NAME "test.conf"

/* Where ops's settings are in collector_settings_build()'s array. */
static size_t index_of(const struct collector_ops *ops)
{
	for (size_t i = 0; i < n_all_collectors; i++)
		if (all_collectors[i] == ops)
			return i;
	ck_abort_msg("%s is not in all_collectors[]", ops->name);
	return 0;
}

/* Builds the collector settings of text; returns them (NULL on error, with err filled). */
static struct collector_settings *build(const char *text, int *ret, struct config_error *err)
{
	struct collector_settings *s = NULL;
	struct config *c = NULL;
	int r;

	memset(err, 0, sizeof(*err));
	r = config_load_string(text, NAME, &c, err);
	ck_assert_msg(r == 0, "config_load_string: %d (%s) for:\n%s", r, err->message, text);
	r = collector_settings_build(c, &s, err);
	config_free(c);
	*ret = r;
	ck_assert(r == 0 ? s != NULL : s == NULL);
	return s;
}

static void expect_error(const char *text, const char *msg)
{
	struct config_error err;
	int r;

	ck_assert_ptr_null(build(text, &r, &err));
	ck_assert_msg(r == -EINVAL, "got %d for:\n%s", r, text);
	ck_assert_str_eq(err.message, msg);
}

/* The alloc collector's configuration blob of text (freed with free()). */
static void *alloc_cfg(const char *text)
{
	struct config_error err;
	struct collector_settings *s;
	void *cfg;
	int r;

	s = build(text, &r, &err);
	ck_assert_msg(r == 0, "got %d (%s) for:\n%s", r, err.message, text);
	cfg = malloc(alloc_collector.config_size);
	ck_assert_ptr_nonnull(cfg);
	memcpy(cfg, s[index_of(&alloc_collector)].cfg, alloc_collector.config_size);
	collector_settings_free(s);
	return cfg;
}

static bool same_cfg(const void *a, const void *b)
{
	return memcmp(a, b, alloc_collector.config_size) == 0;
}

START_TEST(test_trace_bad_values)
{
	expect_error("[collector.alloc]\ntrace = maybe\n",
		     NAME ":2: [collector.alloc] trace: 'maybe' is not a boolean (yes/no, true/false, on/off, 1/0)");
	expect_error("[daemon]\nwindow = 1s\n\n[collector.alloc]\nenabled = yes\ntrace = 2\n",
		     NAME ":6: [collector.alloc] trace: '2' is not a boolean (yes/no, true/false, on/off, 1/0)");
	expect_error("[collector.alloc]\ntrace = yes please\n",
		     NAME ":2: [collector.alloc] trace: 'yes please' is not a boolean (yes/no, true/false, on/off, 1/0)");
	/* Another collector has no such key. */
	expect_error("[collector.kswapd]\ntrace = yes\n", NAME ":2: [collector.kswapd] trace: unknown key");
	/* Set twice: refused by the file parser, naming the first line. */
	{
		struct config *c = NULL;
		struct config_error err;

		ck_assert_int_eq(config_load_string("[collector.alloc]\ntrace = yes\ntrace = no\n", NAME, &c, &err),
				 -EINVAL);
		ck_assert_str_eq(err.message, NAME ":3: [collector.alloc] trace: set more than once (first on line 2)");
	}
}
END_TEST

/* Every spelling of a boolean; "no" is the built-in default, so the
 * configuration blob (which the core compares on reload to decide whether to
 * restart the collector) differs from the default exactly for the yes ones. */
START_TEST(test_trace_values)
{
	static const char *const yes[] = { "yes", "YES", "true", "on", "1" };
	static const char *const no[] = { "no", "False", "off", "0" };
	void *def = alloc_cfg(""), *empty_section = alloc_cfg("[collector.alloc]\n");
	char text[128];
	size_t i;

	ck_assert(same_cfg(def, empty_section));
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		void *c;

		snprintf(text, sizeof(text), "[collector.alloc]\ntrace = %s\n", yes[i]);
		c = alloc_cfg(text);
		ck_assert_msg(!same_cfg(def, c), "trace = %s left the default configuration unchanged", yes[i]);
		free(c);
	}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		void *c;

		snprintf(text, sizeof(text), "[collector.alloc]\ntrace = %s\n", no[i]);
		c = alloc_cfg(text);
		ck_assert_msg(same_cfg(def, c), "trace = %s is not the default configuration", no[i]);
		free(c);
	}
	free(def);
	free(empty_section);
}
END_TEST

/* The shipped conf/memwatchd.conf writes out every collector's defaults, and
 * the key tables hold them in the same words: built from the file, every
 * collector's blob is the built-in one, byte for byte. */
START_TEST(test_shipped_conf_is_defaults)
{
	struct collector_settings *def, *shipped = NULL;
	struct config_error err = { 0 };
	struct config *c = NULL;
	int r;

	def = build("", &r, &err);
	ck_assert_msg(r == 0, "the built-in defaults: %s", err.message);
	r = config_load(FIXTURES_DIR "/../../conf/memwatchd.conf", false, &c, &err);
	ck_assert_msg(r == 0, "%s", err.message);
	r = collector_settings_build(c, &shipped, &err);
	ck_assert_msg(r == 0, "%s", err.message);
	for (size_t i = 0; i < n_all_collectors; i++) {
		ck_assert_msg(def[i].enabled == shipped[i].enabled, "%s: enabled differs", all_collectors[i]->name);
		ck_assert_msg(memcmp(def[i].cfg, shipped[i].cfg, all_collectors[i]->config_size) == 0,
			      "[collector.%s]: conf/memwatchd.conf and the built-in defaults differ",
			      all_collectors[i]->name);
	}
	collector_settings_free(def);
	collector_settings_free(shipped);
	config_free(c);
}
END_TEST

/* ---- trace = no: /proc/vmstat only ---- */

struct run {
	void *cfg, *priv;
	struct vmstat_sources *vmstat;
	struct collector_context ctx; /* the vmstat sources only: no event channel */
	struct collector_status st;
	int probe_r, start_r;
};

static void run_start(struct run *run, const char *vmstat_name, const char *extra)
{
	char text[1024];

	if (vmstat_name[0] == '/')
		snprintf(text, sizeof(text), "[collector.alloc]\nvmstat_path = %s\n%s", vmstat_name, extra);
	else
		snprintf(text, sizeof(text), "[collector.alloc]\nvmstat_path = %s/vmstat/%s\n%s", FIXTURES_DIR,
			 vmstat_name, extra);
	memset(run, 0, sizeof(*run));
	run->cfg = alloc_cfg(text);
	ck_assert_int_eq(vmstat_sources_new(&run->vmstat), 0);
	run->ctx = (struct collector_context){ .vmstat = run->vmstat };
	run->st.state = COLLECTOR_ACTIVE;
	run->probe_r = alloc_collector.probe(run->cfg, &run->ctx, &run->st);
	run->priv = calloc(1, alloc_collector.priv_size);
	ck_assert_ptr_nonnull(run->priv);
	run->start_r = alloc_collector.start(run->priv, run->cfg, &run->ctx, &run->st);
}

static void run_stop(struct run *run)
{
	alloc_collector.stop(run->priv);
	vmstat_sources_free(run->vmstat);
	free(run->priv);
	free(run->cfg);
}

/* One window of the collector, sealed. */
static struct snapshot *run_collect(struct run *run)
{
	struct snapshot *snap = snapshot_new(NULL, 1000);

	ck_assert_ptr_nonnull(snap);
	ck_assert_int_eq(alloc_collector.collect(run->priv, snap), 0);
	ck_assert_int_eq(snapshot_seal(snap), 0);
	return snap;
}

/* Direct compaction as the fixture's kernel counted it; NAN: not printed. */
struct compaction_want {
	double stall, success, fail, daemon_wake;
	unsigned series; /* of the four families' series */
};

static void assert_same(double got, double want, const char *what)
{
	if (isnan(want))
		ck_assert_msg(isnan(got), "%s is %g, want absent", what, got);
	else
		ck_assert_msg(got == want, "%s is %g, want %g", what, got, want);
}

static void assert_vmstat_window(const char *fixture, uint64_t pgalloc, uint64_t pgfree, struct compaction_want c)
{
	const double page = (double)sysconf(_SC_PAGESIZE);
	struct snapshot *snap;
	struct run run;
	const char *text;
	size_t len;

	run_start(&run, fixture, "");
	ck_assert_int_eq(run.probe_r, 0);
	ck_assert_msg(run.start_r == 0, "%s: start returned %d (%s)", fixture, run.start_r, run.st.reason);
	ck_assert_str_eq(run.st.mode, "vmstat");
	ck_assert_int_eq(run.st.state, COLLECTOR_ACTIVE);
	ck_assert_str_eq(run.st.reason, "");

	snap = run_collect(&run);
	ck_assert_double_eq(snapshot_value(snap, "memwatch_page_allocated_pages_total", NULL), (double)pgalloc);
	ck_assert_double_eq(snapshot_value(snap, "memwatch_page_allocated_bytes_total", NULL), (double)pgalloc * page);
	ck_assert_double_eq(snapshot_value(snap, "memwatch_page_frees_total", NULL), (double)pgfree);
	/* Absent, not zero: not a single line of the per-order families. */
	text = snapshot_text(snap, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(strstr(text, "memwatch_page_allocations_total") == NULL, "%s: per-order series in:\n%s", fixture,
		      text);
	ck_assert_msg(strstr(text, "memwatch_page_allocation_failures_total") == NULL, "%s: failure series in:\n%s",
		      fixture, text);
	assert_same(snapshot_value(snap, "memwatch_compaction_kernel_stalls_total", NULL), c.stall, "compact_stall");
	assert_same(snapshot_value(snap, "memwatch_compaction_kernel_results_total", (const char *const[]){ "success" }),
		    c.success, "compact_success");
	assert_same(snapshot_value(snap, "memwatch_compaction_kernel_results_total", (const char *const[]){ "fail" }),
		    c.fail, "compact_fail");
	assert_same(snapshot_value(snap, "memwatch_kcompactd_wakeups_total", NULL), c.daemon_wake, "compact_daemon_wake");
	ck_assert_uint_eq(snapshot_series(snap), 3 + c.series);
	snapshot_unref(snap);
	run_stop(&run);
}

/* Linux 6.18: pgalloc_dma 0, dma32 0, normal 25739609, movable 0, device 0. */
START_TEST(test_vmstat_6_18)
{
	assert_vmstat_window("real-6.18.txt", 25739609, 26815768, (struct compaction_want){ 0, 0, 0, 0, 4 });
}
END_TEST

START_TEST(test_vmstat_crlf)
{
	assert_vmstat_window("crlf.txt", 25739609, 26815768, (struct compaction_want){ 0, 0, 0, 0, 4 });
}
END_TEST

/* 3.10 (CentOS 7): dma, dma32, normal and movable zones. */
START_TEST(test_vmstat_3_10)
{
	/* compact_stall 42 = compact_success 35 + compact_fail 7; no kcompactd before 4.6 */
	assert_vmstat_window("linux-3.10-centos7.txt", UINT64_C(1024) + 98765432 + 1234567890 + 0, 1333400000,
			     (struct compaction_want){ 42, 35, 7, NAN, 3 });
}
END_TEST

/* 32-bit ARM: a highmem zone (pgalloc_high). */
START_TEST(test_vmstat_arm32_highmem)
{
	/* no CONFIG_COMPACTION */
	assert_vmstat_window("linux-5.4-arm32-highmem.txt", UINT64_C(51234567) + 8765432 + 0, 60123456,
			     (struct compaction_want){ NAN, NAN, NAN, NAN, 0 });
}
END_TEST

/* The probe does not look for kmem:mm_page_alloc at all without trace: it
 * neither fails nor degrades, whatever the kernel has. */
START_TEST(test_vmstat_probe_needs_no_tracepoint)
{
	struct collector_status st = { .state = COLLECTOR_ACTIVE };
	void *cfg = alloc_cfg("[collector.alloc]\ntrace = no\n");

	ck_assert_int_eq(alloc_collector.probe(cfg, &(struct collector_context){ 0 }, &st), 0);
	ck_assert_int_eq(st.state, COLLECTOR_ACTIVE);
	ck_assert_str_eq(st.reason, "");
	free(cfg);
}
END_TEST

/* No vmstat: degraded (not running), with a reason naming the file. */
START_TEST(test_vmstat_missing)
{
	struct run run;

	run_start(&run, "/nonexistent/vmstat", "");
	ck_assert_int_eq(run.probe_r, 0);
	ck_assert_int_eq(run.start_r, -ENOENT);
	ck_assert_str_eq(run.st.mode, "vmstat");
	ck_assert_msg(strstr(run.st.reason, "/nonexistent/vmstat") != NULL, "reason '%s'", run.st.reason);
	run_stop(&run);
}
END_TEST

/* A file without any pgalloc_<zone> line: no page counts rather than a 0. */
START_TEST(test_vmstat_without_pgalloc)
{
	struct snapshot *snap;
	struct run run;

	run_start(&run, "garbage.bin", "");
	ck_assert_int_eq(run.start_r, 0);
	snap = run_collect(&run);
	ck_assert(isnan(snapshot_value(snap, "memwatch_page_allocated_pages_total", NULL)));
	ck_assert(isnan(snapshot_value(snap, "memwatch_page_allocated_bytes_total", NULL)));
	snapshot_unref(snap);
	run_stop(&run);
}
END_TEST

/* ---- /proc/vmstat read once per window, shared with faults ---- */

static void copy_fixture_of(const char *dir, const char *name, const char *dst)
{
	size_t len;
	char *data = fixture_read(dir, name, &len);
	FILE *f = fopen(dst, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	free(data);
}

static void copy_fixture(const char *name, const char *dst)
{
	copy_fixture_of("vmstat", name, dst);
}

/* alloc (vmstat_path) and faults (proc_root/vmstat) name the same file: one
 * read a window between them, the same figures as each read on its own. */
START_TEST(test_vmstat_read_once_per_window)
{
	char dir[256], path[300], text[1024];
	struct collector_settings *settings;
	struct vmstat_source *probe;
	struct collector_status st_alloc = { 0 }, st_faults = { 0 };
	struct vmstat_sources *vmstat;
	struct collector_context ctx; /* the vmstat sources only: no event channel */
	struct config_error err;
	void *alloc_priv, *faults_priv;
	struct snapshot *snap;
	int r;

	fixture_tmpdir_make(dir, sizeof(dir), "vmstat-once");
	snprintf(path, sizeof(path), "%s/vmstat", dir);
	copy_fixture("real-6.18.txt", path);
	snprintf(text, sizeof(text),
		 "[collector.alloc]\nvmstat_path = %s\n[collector.faults]\nsource = procfs\nproc_root = %s\n", path,
		 dir);
	settings = build(text, &r, &err);
	ck_assert_msg(r == 0, "%s", err.message);
	ck_assert_int_eq(vmstat_sources_new(&vmstat), 0);
	ctx = (struct collector_context){ .vmstat = vmstat };
	alloc_priv = calloc(1, alloc_collector.priv_size);
	faults_priv = calloc(1, faults_collector.priv_size);
	ck_assert(alloc_priv && faults_priv);
	ck_assert_int_eq(alloc_collector.start(alloc_priv, settings[index_of(&alloc_collector)].cfg, &ctx, &st_alloc), 0);
	ck_assert_int_eq(faults_collector.start(faults_priv, settings[index_of(&faults_collector)].cfg, &ctx, &st_faults), 0);
	ck_assert_int_eq(vmstat_source_open(vmstat, path, &probe), 0);
	ck_assert_uint_eq(vmstat_source_reads(probe), 0); /* opening reads nothing */

	vmstat_sources_next_window(vmstat);
	snap = snapshot_new(NULL, 1000);
	ck_assert_int_eq(alloc_collector.collect(alloc_priv, snap), 0);
	/* Changed between the two collects: faults still sees the window's table. */
	copy_fixture("linux-3.10-centos7.txt", path);
	ck_assert_int_eq(faults_collector.collect(faults_priv, snap), 0);
	ck_assert_int_eq(snapshot_seal(snap), 0);
	ck_assert_uint_eq(vmstat_source_reads(probe), 1);
	ck_assert_double_eq(snapshot_value(snap, "memwatch_page_allocated_pages_total", NULL), 25739609);
	ck_assert_double_eq(snapshot_value(snap, "memwatch_page_frees_total", NULL), 26815768);
	ck_assert_double_eq(snapshot_value(snap, "memwatch_major_faults_total", NULL), 3174);
	ck_assert_double_eq(snapshot_value(snap, "memwatch_minor_faults_total", NULL), 24827184 - 3174);
	snapshot_unref(snap);

	/* The next window reads it again, once. */
	vmstat_sources_next_window(vmstat);
	snap = snapshot_new(NULL, 1000);
	ck_assert_int_eq(faults_collector.collect(faults_priv, snap), 0);
	ck_assert_int_eq(alloc_collector.collect(alloc_priv, snap), 0);
	ck_assert_int_eq(snapshot_seal(snap), 0);
	ck_assert_uint_eq(vmstat_source_reads(probe), 2);
	ck_assert_double_eq(snapshot_value(snap, "memwatch_page_frees_total", NULL), 1333400000);
	snapshot_unref(snap);

	vmstat_source_unref(probe);
	alloc_collector.stop(alloc_priv);
	faults_collector.stop(faults_priv);
	vmstat_sources_free(vmstat);
	free(alloc_priv);
	free(faults_priv);
	collector_settings_free(settings);
	fixture_tmpdir_remove(dir);
}
END_TEST

/* The meminfo collector's window-end read of /proc/meminfo is the window's
 * one read for every collector that compares with it (memavail): read once,
 * the same figures for both, and apart from a vmstat source of that path. */
START_TEST(test_meminfo_read_once_per_window)
{
	char dir[256], path[300], text[512];
	struct collector_settings *settings;
	struct vmstat_source *probe, *as_vmstat;
	struct collector_status st = { 0 };
	struct vmstat_sources *sources;
	struct collector_context ctx;
	struct config_error err;
	const struct meminfo *m;
	struct snapshot *snap;
	void *priv;
	int r;

	fixture_tmpdir_make(dir, sizeof(dir), "meminfo-once");
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	copy_fixture_of("meminfo", "real-6.18.txt", path);
	snprintf(text, sizeof(text), "[collector.meminfo]\npath = %s\nsampler = procfs\n", path);
	settings = build(text, &r, &err);
	ck_assert_msg(r == 0, "%s", err.message);
	ck_assert_int_eq(vmstat_sources_new(&sources), 0);
	ctx = (struct collector_context){ .vmstat = sources };
	priv = calloc(1, meminfo_collector.priv_size);
	ck_assert_ptr_nonnull(priv);
	ck_assert_int_eq(meminfo_collector.start(priv, settings[index_of(&meminfo_collector)].cfg, &ctx, &st), 0);
	ck_assert_int_eq(meminfo_source_open(sources, path, &probe), 0);
	ck_assert_int_eq(vmstat_source_open(sources, path, &as_vmstat), 0);
	ck_assert_ptr_ne(probe, as_vmstat);

	vmstat_sources_next_window(sources);
	snap = snapshot_new(NULL, 1000);
	ck_assert_int_eq(meminfo_collector.collect(priv, snap), 0);
	ck_assert_int_eq(snapshot_seal(snap), 0);
	ck_assert_uint_eq(vmstat_source_reads(probe), 1);
	/* Changed after the collector's read: the window's table stands. */
	copy_fixture_of("meminfo", "linux-3.2-no-memavailable.txt", path);
	ck_assert_int_eq(meminfo_source_get(probe, &m), 0);
	ck_assert_uint_eq(vmstat_source_reads(probe), 1);
	ck_assert_uint_eq(m->available, 24371328ULL * 1024);
	ck_assert_double_eq(snapshot_value(snap, "memwatch_memory_available_bytes", NULL), 24371328.0 * 1024);
	ck_assert_uint_eq(vmstat_source_reads(as_vmstat), 0);
	snapshot_unref(snap);

	/* The next window reads the file as it is now, once. */
	vmstat_sources_next_window(sources);
	ck_assert_int_eq(meminfo_source_get(probe, &m), 0);
	ck_assert(!(m->present & MEMINFO_HAS_AVAILABLE));
	snap = snapshot_new(NULL, 1000);
	ck_assert_int_eq(meminfo_collector.collect(priv, snap), 0);
	ck_assert_int_eq(snapshot_seal(snap), 0);
	ck_assert_uint_eq(vmstat_source_reads(probe), 2);
	ck_assert(isnan(snapshot_value(snap, "memwatch_memory_available_bytes", NULL)));
	snapshot_unref(snap);

	vmstat_source_unref(probe);
	vmstat_source_unref(as_vmstat);
	meminfo_collector.stop(priv);
	vmstat_sources_free(sources);
	free(priv);
	collector_settings_free(settings);
	fixture_tmpdir_remove(dir);
}
END_TEST

/* Two sets share nothing: each has its own windows and its own open file of a path. */
START_TEST(test_vmstat_sets_independent)
{
	char path[300];
	struct vmstat_sources *a, *b;
	struct vmstat_source *in_a, *in_b;
	const struct vmstat *vm;

	snprintf(path, sizeof(path), "%s/vmstat/real-6.18.txt", FIXTURES_DIR);
	ck_assert_int_eq(vmstat_sources_new(&a), 0);
	ck_assert_int_eq(vmstat_sources_new(&b), 0);
	ck_assert_int_eq(vmstat_source_open(a, path, &in_a), 0);
	ck_assert_int_eq(vmstat_source_open(b, path, &in_b), 0);
	ck_assert_ptr_ne(in_a, in_b);
	ck_assert_int_eq(vmstat_source_get(in_a, &vm), 0);
	ck_assert_int_eq(vmstat_source_get(in_b, &vm), 0);
	/* A new window of a: a reads again, b keeps its table. */
	vmstat_sources_next_window(a);
	ck_assert_int_eq(vmstat_source_get(in_a, &vm), 0);
	ck_assert_int_eq(vmstat_source_get(in_b, &vm), 0);
	ck_assert_uint_eq(vmstat_source_reads(in_a), 2);
	ck_assert_uint_eq(vmstat_source_reads(in_b), 1);
	vmstat_source_unref(in_a);
	vmstat_source_unref(in_b);
	vmstat_sources_free(a);
	vmstat_sources_free(b);
	/* Without a set (a context that has none) nothing opens. */
	ck_assert_int_eq(vmstat_source_open(NULL, path, &in_a), -ENOMEM);
}
END_TEST

static Suite *collector_alloc_suite(void)
{
	Suite *s = suite_create("collector_alloc");
	TCase *tc = tcase_create("config");

	tcase_add_test(tc, test_trace_bad_values);
	tcase_add_test(tc, test_trace_values);
	tcase_add_test(tc, test_shipped_conf_is_defaults);
	suite_add_tcase(s, tc);

	tc = tcase_create("vmstat");
	tcase_add_test(tc, test_vmstat_6_18);
	tcase_add_test(tc, test_vmstat_crlf);
	tcase_add_test(tc, test_vmstat_3_10);
	tcase_add_test(tc, test_vmstat_arm32_highmem);
	tcase_add_test(tc, test_vmstat_probe_needs_no_tracepoint);
	tcase_add_test(tc, test_vmstat_missing);
	tcase_add_test(tc, test_vmstat_without_pgalloc);
	tcase_add_test(tc, test_vmstat_read_once_per_window);
	tcase_add_test(tc, test_meminfo_read_once_per_window);
	tcase_add_test(tc, test_vmstat_sets_independent);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(collector_alloc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
