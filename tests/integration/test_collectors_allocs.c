// SPDX-License-Identifier: GPL-2.0
/* Allocation failures against perf on kmem:mm_page_alloc; page allocations
 * from /proc/vmstat by default and switching to tracing by reload. Run by
 * test_collectors.c. */
#include <bpf/bpf.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/magic.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "collectors.h"

/* ---- 4. allocation failures ---- */

/* Helper mode (run under perf): inside cgroup cg, fill it with unreclaimable
 * anonymous memory, leave 512 KiB of headroom, then ask for io_uring rings
 * that need one order-9 (2 MiB) compound page charged to the cgroup
 * (GFP_KERNEL_ACCOUNT). The charge fails: reclaim finds nothing, and above
 * PAGE_ALLOC_COSTLY_ORDER the memcg OOM killer is not tried. The page
 * allocator then frees the page and fires kmem:mm_page_alloc with no page,
 * order 9, once per attempt; io_uring_setup returns ENOMEM. Prints
 * "enomem=N ok=N errno=N". */
int kmem_failure_helper(const char *cg, const char *result_path)
{
	const size_t fill = 8 * MiB;
	char file[512], value[32];
	unsigned long long usage;
	int enomem = 0, ok = 0, other = 0, i;
	char *p, *text;
	FILE *f;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (memcg_join(cg) < 0)
		return 3;
	p = mmap(NULL, fill, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return 4;
	memset(p, 1, fill);
	snprintf(file, sizeof(file), "%s/memory.usage_in_bytes", cg);
	text = mw_read_file(file, NULL);
	if (!text)
		return 5;
	usage = strtoull(text, NULL, 10);
	free(text);
	snprintf(file, sizeof(file), "%s/memory.limit_in_bytes", cg);
	snprintf(value, sizeof(value), "%llu", (usage + 512 * KiB + 4095) / 4096 * 4096);
	if (mw_write_text(file, value) < 0)
		return 6;
	for (i = 0; i < KMEM_HELPER_ATTEMPTS; i++) {
		struct io_uring_params params;
		long fd;

		memset(&params, 0, sizeof(params));
		fd = syscall(__NR_io_uring_setup, KMEM_HELPER_ENTRIES, &params);
		if (fd >= 0) {
			ok++;
			close((int)fd);
		} else if (errno == ENOMEM) {
			enomem++;
		} else {
			other = errno;
			break;
		}
	}
	f = fopen(result_path, "we");
	if (!f)
		_exit(7);
	fprintf(f, "enomem=%d ok=%d errno=%d\n", enomem, ok, other);
	/* _exit: no exit-time work (a leak check, say) inside the full cgroup. */
	_exit(fclose(f) == 0 ? 0 : 8);
}

static void alloc_failures_run(const char *attach)
{
	static const char fail_filter[] = "pfn == 0xffffffffffffffff";
	static const char fail9_filter[] = "pfn == 0xffffffffffffffff && order == 9";
	char conf[512], cg[256], exe[PATH_MAX], perf_out[512], result[512], log[512], order[32], mode[64];
	char own_filter[128], own9_filter[128], *body, *text;
	double f0[11], f1[11], a0[11], a1[11], sum = 0;
	unsigned long long perf[4];
	int enomem = -1, ok = -1, other = -1, o, st, wst, attempt;
	struct mw_daemon *d;
	struct workload w;
	bool agree = false;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ck_assert_msg(n > 0, "readlink /proc/self/exe: %s", strerror(errno));
	exe[n] = '\0';
	memcg_path(cg, sizeof(cg), "-kmem");
	snprintf(conf, sizeof(conf),
		 "[daemon]\nwindow = 200ms\nsample_interval = 50ms\n[collector.alloc]\ntrace = yes\n%s%s%s",
		 attach ? "attach = " : "", attach ? attach : "", attach ? "\n" : "");
	d = start_with_config(conf);
	snprintf(perf_out, sizeof(perf_out), "%s/perf-kmem-%s.txt", mw_tmp_root(), attach ? attach : "auto");
	snprintf(result, sizeof(result), "%s/kmem-%s.txt", mw_tmp_root(), attach ? attach : "auto");
	snprintf(log, sizeof(log), "%s/kmem-%s.log", mw_tmp_root(), attach ? attach : "auto");

	for (attempt = 1; !agree; attempt++) {
		/* A fresh cgroup each time: the helper sets its limit from what it uses. */
		memcg_create(cg, 0);
		unlink(result);
		body = next_window(d);
		for (o = 0; o <= 10; o++) {
			snprintf(order, sizeof(order), "order=\"%d\"", o);
			f0[o] = metric_or_fail(body, "memwatch_page_allocation_failures_total", order);
			a0[o] = metric_or_fail(body, "memwatch_page_allocations_total", order);
		}
		free(body);

		w = workload_spawn((const char *const[]){ exe, KMEM_HELPER_FLAG, cg, result, NULL }, log);
		snprintf(own_filter, sizeof(own_filter), "%s && common_pid == %d", fail_filter, (int)w.pid);
		snprintf(own9_filter, sizeof(own9_filter), "%s && common_pid == %d", fail9_filter, (int)w.pid);
		st = perf_around((const char *const[]){ "-e", "kmem:mm_page_alloc", "--filter", fail_filter,
						       "-e", "kmem:mm_page_alloc", "--filter", fail9_filter,
						       "-e", "kmem:mm_page_alloc", "--filter", own_filter,
						       "-e", "kmem:mm_page_alloc", "--filter", own9_filter, NULL },
				 &w, perf_out, WORKLOAD_TIMEOUT_MS, &wst);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "perf stat ended with status 0x%x", st);
		ck_assert_msg(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "%s " KMEM_HELPER_FLAG " ended with status 0x%x",
			      exe, wst);
		perf_counts(perf_out, perf, 4);
		memcg_remove(cg);
		text = mw_read_file(result, NULL);
		ck_assert_msg(text && sscanf(text, "enomem=%d ok=%d errno=%d", &enomem, &ok, &other) == 3,
			      "the helper reported '%s'", text ? text : "nothing");
		free(text);
		ck_assert_msg(other == 0,
			      "io_uring_setup failed with %s, not ENOMEM: cannot provoke kmem charge failures",
			      strerror(other));
		ck_assert_msg(enomem > 0,
			      "io_uring_setup(%d) never failed with ENOMEM in a cgroup with 512 KiB of headroom (%d "
			      "succeeded)",
			      KMEM_HELPER_ENTRIES, ok);

		body = wait_window_after(d, realtime_now());
		sum = 0;
		for (o = 0; o <= 10; o++) {
			snprintf(order, sizeof(order), "order=\"%d\"", o);
			f1[o] = metric_or_fail(body, "memwatch_page_allocation_failures_total", order);
			a1[o] = metric_or_fail(body, "memwatch_page_allocations_total", order);
			ck_assert_msg(f1[o] >= f0[o] && a1[o] >= a0[o] && f0[o] == floor(f0[o]),
				      "order %d: failures %g -> %g, allocations %g -> %g: not counters", o, f0[o], f1[o],
				      a0[o], a1[o]);
			sum += f1[o] - f0[o];
		}
		ck_assert_msg(f1[9] - f0[9] >= (double)enomem,
			      "attach=%s: memwatch_page_allocation_failures_total{order=\"9\"} grew by %.0f for %d failed "
			      "order-9 allocations",
			      attach ? attach : "auto", f1[9] - f0[9], enomem);
		assert_collector(body, "alloc", attach, mode, sizeof(mode));
		assert_promtool(body);
		free(body);

		note("allocation failures, attach=%s (mode %s), attempt %d: %d io_uring_setup ENOMEM; memwatchd order 9 "
		     "+%.0f, all orders +%.0f; perf system-wide order 9 %llu, all %llu; perf helper order 9 %llu, all %llu",
		     attach ? attach : "auto", mode, attempt, enomem, f1[9] - f0[9], sum, perf[1], perf[0], perf[3],
		     perf[2]);
		ck_assert_msg(perf[3] > 0 || strcmp(mode, "tracepoint") != 0,
			      "attach=tracepoint: perf counted no kmem:mm_page_alloc failure although %d io_uring_setup "
			      "calls failed on their order-9 allocation and memwatchd counted %.0f. The daemon's BPF "
			      "program on the classic tracepoint returns 0, and a tracepoint BPF program that returns 0 "
			      "makes perf_trace_run_bpf_submit() drop the event for every perf user of that tracepoint: "
			      "with attach = tracepoint, memwatchd blinds perf",
			      enomem, f1[9] - f0[9]);
		/* The kernel's own account of our workload. */
		ck_assert_msg(perf[3] >= (unsigned long long)enomem,
			      "perf counted %llu order-9 mm_page_alloc failures of the helper for its %d failed "
			      "io_uring_setup calls (a BPF program on the classic tracepoint that returns 0, such as any "
			      "memwatchd on this host with attach = tracepoint, hides events from perf)",
			      perf[3], enomem);
		/* The whole system: memwatchd's windows bracket perf's run, so a
		 * failure of anything else can fall in between; then try again. */
		agree = fabs((f1[9] - f0[9]) - (double)perf[1]) <= fmax(1.0, 0.02 * (double)perf[1]) &&
			fabs(sum - (double)perf[0]) <= fmax(1.0, 0.02 * (double)perf[0]);
		ck_assert_msg(agree || attempt < MAX_ATTEMPTS,
			      "attach=%s: memwatch_page_allocation_failures_total grew by %.0f (order 9: %.0f), perf "
			      "counted %llu mm_page_alloc events with no page (order 9: %llu) system-wide, in each of %d "
			      "attempts",
			      attach ? attach : "auto", sum, f1[9] - f0[9], perf[0], perf[1], attempt);
	}
	mw_assert_clean_stop(d);
}

START_TEST(test_alloc_failures)
{
	alloc_failures_run(NULL);
	alloc_failures_run("raw_tp");
	alloc_failures_run("tracepoint");
}
END_TEST

/* ---- 4b. page allocations without tracing (the default) and switching it ---- */

/* Every page-allocation series only the opt-in BPF program produces is absent:
 * no sample, not even HELP or TYPE. */
static void assert_no_per_order(const char *body, const char *why)
{
	static const char *const traced[] = { "memwatch_page_allocations_total",
					      "memwatch_page_allocation_failures_total" };

	for (size_t i = 0; i < sizeof(traced) / sizeof(traced[0]); i++)
		ck_assert_msg(strstr(body, traced[i]) == NULL, "%s: /metrics has %s (want it absent):\n%s", why,
			      traced[i], body);
}

/* The page_alloc* programs the daemon holds; fails unless it holds some BPF
 * program, so that a count of 0 means something. */
static unsigned held_alloc_progs(const struct mw_daemon *d)
{
	unsigned total, alloc;

	held_progs(d->pid, "page_alloc", &total, &alloc);
	ck_assert_msg(total > 0,
		      "memwatchd (pid %d) holds no BPF program at all according to /proc/%d/fdinfo: its other BPF "
		      "collectors should, so that listing is not read right",
		      (int)d->pid, (int)d->pid);
	return alloc;
}

/* The window whose collectors ran between the two readings of pgalloc_*: its
 * memwatch_page_allocated_pages_total in vmstat mode is pgalloc_* at that
 * instant, so it lies in the bracket. Returns it; checks bytes = pages times the page size. */
static double vmstat_pages_in_bracket(struct mw_daemon *d, const char *when)
{
	struct bracket b;
	char *body = window_bracket(d, realtime_now(), pgalloc_pages, &b);
	double pages = metric_or_fail(body, "memwatch_page_allocated_pages_total", NULL);
	double bytes = metric_or_fail(body, "memwatch_page_allocated_bytes_total", NULL);
	double frees = metric_or_fail(body, "memwatch_page_frees_total", NULL);

	assert_no_per_order(body, when);
	free(body);
	ck_assert_msg(frees >= (double)b.lo[1] && frees <= (double)b.hi[1],
		      "%s: memwatch_page_frees_total is %.0f, but /proc/vmstat's pgfree was %llu before and %llu after "
		      "that window was collected",
		      when, frees, b.lo[1], b.hi[1]);
	note("%s: memwatch_page_allocated_pages_total %.0f, /proc/vmstat pgalloc_* %llu..%llu", when, pages, b.lo[0],
	     b.hi[0]);
	ck_assert_msg(pages >= (double)b.lo[0] && pages <= (double)b.hi[0],
		      "%s: memwatch_page_allocated_pages_total is %.0f, but /proc/vmstat's pgalloc_* summed was %llu "
		      "before and %llu after that window was collected: it is not pgalloc_*",
		      when, pages, b.lo[0], b.hi[0]);
	ck_assert_msg(bytes == pages * (double)sysconf(_SC_PAGESIZE),
		      "%s: memwatch_page_allocated_bytes_total %.0f is not %.0f pages of %ld bytes", when, bytes, pages,
		      sysconf(_SC_PAGESIZE));
	return pages;
}

START_TEST(test_alloc_vmstat_default)
{
	const size_t len = 256 * MiB;
	char cg[256], mode[64], *body;
	double pages0, pages1;
	struct mw_daemon *d;
	int cmd, rep, st;
	unsigned progs;
	pid_t child;
	char c;

	memcg_path(cg, sizeof(cg), "-vmstat");
	memcg_create(cg, 2 * len);
	/* No [collector.alloc] section: its built-in default, trace = no. */
	d = start_with_config("[daemon]\nwindow = 200ms\nsample_interval = 50ms\n");

	body = next_window(d);
	assert_collector(body, "alloc", "vmstat", mode, sizeof(mode));
	assert_no_per_order(body, "trace = no (built-in default)");
	free(body);
	progs = held_alloc_progs(d);
	ck_assert_msg(progs == 0,
		      "with the built-in default trace = no, memwatchd holds %u BPF program(s) named page_alloc*", progs);

	child = spawn_toucher(cg, len, &cmd, &rep);

	pages0 = vmstat_pages_in_bracket(d, "trace = no, before the child");
	write_byte(cmd, 'g');
	read_exact(rep, &c, 1, WORKLOAD_TIMEOUT_MS, "the child to touch 256 MiB");
	pages1 = vmstat_pages_in_bracket(d, "trace = no, after the child touched 256 MiB");
	note("allocations (trace = no): memwatchd +%.0f pages while a child in %s touched %zu pages", pages1 - pages0,
	     cg, len / 4096);
	ck_assert_msg(pages1 - pages0 >= (double)(len / 4096),
		      "memwatch_page_allocated_pages_total grew by %.0f while a child touched %zu pages",
		      pages1 - pages0, len / 4096);

	body = next_window(d);
	assert_collector(body, "alloc", "vmstat", mode, sizeof(mode));
	assert_no_per_order(body, "trace = no (built-in default)");
	assert_promtool(body);
	free(body);
	progs = held_alloc_progs(d);
	ck_assert_msg(progs == 0, "with trace = no, memwatchd holds %u BPF program(s) named page_alloc*", progs);

	close(cmd);
	st = wait_child(child, 10000, "the touching child");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the touching child ended with status 0x%x", st);
	close(rep);
	memcg_remove(cg);
	mw_assert_clean_stop(d);
}
END_TEST

/* Scrapes windows until one shows the alloc collector traced (or not): its
 * mode and the per-order series both say so. Returns that scrape. */
static char *wait_alloc_trace(struct mw_daemon *d, bool trace, char *mode, size_t mode_len)
{
	int64_t deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;

	mode[0] = '\0';
	for (;;) {
		char *body = next_window(d), labels[1024];
		bool per_order = mw_metric(body, "memwatch_page_allocations_total", "order=\"0\"", NULL, NULL, 0);
		double v;

		if (mw_metric(body, "memwatch_collector_info", "collector=\"alloc\"", &v, labels, sizeof(labels)) &&
		    mw_label(labels, "mode", mode, mode_len) && (strcmp(mode, "vmstat") != 0) == trace &&
		    per_order == trace)
			return body;
		free(body);
		ck_assert_msg(mw_mono_ms() < deadline,
			      "%d ms after the reload to trace = %s, the alloc collector is in mode '%s' and the "
			      "per-order series are %s",
			      WINDOW_TIMEOUT_MS, trace ? "yes" : "no", mode, per_order ? "there" : "absent");
	}
}

START_TEST(test_alloc_trace_reload)
{
	static const char base[] = "[daemon]\nwindow = 200ms\nsample_interval = 50ms\n";
	static const char traced[] =
		"[daemon]\nwindow = 200ms\nsample_interval = 50ms\n[collector.alloc]\ntrace = yes\n";
	const size_t len = 16 * MiB;
	char *conf, mode[64], *body, *p;
	double reloads0, reloads1, pages0, pages1;
	struct mw_daemon *d;
	unsigned progs;

	conf = mw_write_temp_file("memwatchd.conf", base);
	ck_assert_msg(conf != NULL, "cannot write a temporary config");
	d = mw_start(conf, NULL, false);
	ck_assert_msg(d != NULL, "memwatchd with config\n%s\ndid not start serving /metrics (log above)", base);
	body = next_window(d);
	assert_collector(body, "alloc", "vmstat", mode, sizeof(mode));
	assert_no_per_order(body, "trace = no, before the reload");
	reloads0 = metric_or_fail(body, "memwatch_config_reloads_total", "result=\"success\"");
	free(body);
	progs = held_alloc_progs(d);
	ck_assert_msg(progs == 0, "trace = no: memwatchd holds %u BPF program(s) named page_alloc*", progs);

	/* no -> yes: the program is loaded, the per-order series appear. */
	reload_config(d, conf, traced);
	body = wait_alloc_trace(d, true, mode, sizeof(mode));
	assert_collector(body, "alloc", NULL, mode, sizeof(mode));
	assert_traced_mode("alloc", mode);
	reloads1 = metric_or_fail(body, "memwatch_config_reloads_total", "result=\"success\"");
	ck_assert_msg(reloads1 == reloads0 + 1, "memwatch_config_reloads_total{result=\"success\"} went from %g to %g",
		      reloads0, reloads1);
	metric_or_fail(body, "memwatch_page_allocation_failures_total", "order=\"0\"");
	metric_or_fail(body, "memwatch_page_allocations_total", "order=\"10\"");
	pages0 = metric_or_fail(body, "memwatch_page_allocated_pages_total", NULL);
	assert_promtool(body);
	free(body);
	progs = held_alloc_progs(d);
	note("reload to trace = yes: alloc mode %s, %u page_alloc* program(s) held", mode, progs);
	ck_assert_msg(progs > 0, "after the reload to trace = yes, memwatchd holds no BPF program named page_alloc*");

	/* The program counts: pages we allocate show up. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_msg(p != MAP_FAILED, "mmap: %s", strerror(errno));
	touch(p, len);
	munmap(p, len);
	body = next_window(d);
	pages1 = metric_or_fail(body, "memwatch_page_allocated_pages_total", NULL);
	free(body);
	ck_assert_msg(pages1 - pages0 >= (double)(len / 4096),
		      "trace = yes: memwatch_page_allocated_pages_total grew by %.0f while this test touched %zu pages",
		      pages1 - pages0, len / 4096);

	/* yes -> no: the program is unloaded, the series are gone, pages come from /proc/vmstat again. */
	reload_config(d, conf, base);
	body = wait_alloc_trace(d, false, mode, sizeof(mode));
	assert_collector(body, "alloc", "vmstat", mode, sizeof(mode));
	assert_no_per_order(body, "trace = no, after the reload");
	ck_assert_msg(metric_or_fail(body, "memwatch_config_reloads_total", "result=\"success\"") == reloads0 + 2,
		      "memwatch_config_reloads_total{result=\"success\"} did not count the second reload");
	free(body);
	progs = held_alloc_progs(d);
	ck_assert_msg(progs == 0, "after the reload back to trace = no, memwatchd still holds %u BPF program(s) named "
		      "page_alloc*", progs);
	vmstat_pages_in_bracket(d, "trace = no, after the reload");

	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

void collectors_add_allocs_tests(Suite *s)
{
	collectors_add_test(s, "alloc_failures", test_alloc_failures, 120);
	collectors_add_test(s, "alloc_vmstat_default", test_alloc_vmstat_default, 120);
	collectors_add_test(s, "alloc_trace_reload", test_alloc_trace_reload, 120);
}
