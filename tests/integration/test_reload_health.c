// SPDX-License-Identifier: GPL-2.0
/* The daemon's own series survive max_series = 100 with thousands of memory
 * cgroups, and the series cut are counted exactly (see test_reload.c). */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "test_reload.h"

/* ---- the daemon's own series and max_series ---- */

static bool cgroup_family(const char *name, size_t len)
{
	static const char *const fams[] = {
		"memwatch_cgroup_memory_", "memwatch_cgroup_pressure_", "memwatch_cgroups_discovered",
		"memwatch_cgroup_walk_", "memwatch_cgroup_open_files", "memwatch_cgroup_info",
		"memwatch_cgroup_age_seconds", "memwatch_cgroup_reads_total",
	};

	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		if (len >= strlen(fams[i]) && strncmp(name, fams[i], strlen(fams[i])) == 0)
			return true;
	return false;
}

/* The daemon's own families (core.c's meta-metrics and the event channel). */
static bool health_family(const char *name, size_t len)
{
	static const char *const fams[] = {
		"memwatch_build_info", "memwatch_collector_", "memwatch_window_seconds",
		"memwatch_sample_interval_seconds", "memwatch_window_end_timestamp_seconds",
		"memwatch_start_time_seconds", "memwatch_series_dropped_total", "memwatch_config_reloads_total",
		"memwatch_events_", "memwatch_pressure_events_total", "memwatch_quiet_windows_total",
		"memwatch_window_length_seconds",
	};

	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		if (len >= strlen(fams[i]) && strncmp(name, fams[i], strlen(fams[i])) == 0)
			return true;
	return false;
}

struct series_count {
	size_t health, collectors, cgroup, cgroup_labelled;
	size_t per_test_cgroup[HEALTH_CGROUPS + 1]; /* [HEALTH_CGROUPS] is the root */
};

/* Counts series as max_series does: a histogram (all its lines) is one. */
static void count_series(const char *body, const char *prefix, struct series_count *c)
{
	const char *line, *next;

	memset(c, 0, sizeof(*c));
	for (line = body; line && *line; line = next) {
		const char *nl = strchr(line, '\n');
		size_t name_len = strcspn(line, "{ \n"), plen = strlen(prefix);
		char label[300] = "";
		const char *cgl;

		next = nl ? nl + 1 : NULL;
		if (*line == '#' || *line == '\n')
			continue;
		/* A histogram counts once, at its _count line. */
		if ((name_len > 7 && memcmp(line + name_len - 7, "_bucket", 7) == 0) ||
		    (name_len > 4 && memcmp(line + name_len - 4, "_sum", 4) == 0))
			continue;
		if (health_family(line, name_len)) {
			c->health++;
			continue;
		}
		c->collectors++;
		if (!cgroup_family(line, name_len))
			continue;
		c->cgroup++;
		cgl = strstr(line, "cgroup=\"");
		if (!cgl || (nl && cgl > nl))
			continue;
		cgl += 8;
		snprintf(label, sizeof(label), "%.*s", (int)strcspn(cgl, "\""), cgl);
		if (strcmp(label, "other") == 0)
			continue;
		c->cgroup_labelled++;
		if (strcmp(label, "/") == 0) {
			c->per_test_cgroup[HEALTH_CGROUPS]++;
		} else if (strncmp(label, prefix, plen) == 0) {
			long i = strtol(label + plen, NULL, 10);

			if (i >= 0 && i < HEALTH_CGROUPS)
				c->per_test_cgroup[i]++;
		}
	}
}

static const char *const collector_names[] = {
	"meminfo", "psi", "kswapd", "reclaim", "alloc", "faults", "memavail", "oom", "cgroup", "compaction",
};

START_TEST(test_health_budget)
{
	char root[256], path[400], *conf, *text;
	struct series_count *cnt = calloc(1, sizeof(*cnt));
	struct scrape a, b, c;
	double windows, discovered, dropped_a, dropped_b, win_s;
	size_t per_cgroup, would_be, cut_per_window;
	struct mw_daemon *d;

	ck_assert(cnt != NULL);
	test_root(root, sizeof(root));
	memcg_make(root, 0);
	for (int i = 0; i < HEALTH_CGROUPS; i++) {
		snprintf(path, sizeof(path), "%s/c%04d", root, i);
		memcg_make(path, 0);
	}
	/* Uncapped first: what the cgroup collector exports for these cgroups. */
	ck_assert(asprintf(&text,
			   "[daemon]\nwindow = 1s\nquiet_read_interval = 0\nmax_series = 1000000\n"
			   "[collector.cgroup]\nv1_root = %s\nv2_root = none\ntop_k = 10000\nmax_cgroups = 100000\n",
			   root) >= 0);
	conf = mw_write_temp_file("memwatchd.conf", text);
	free(text);
	ck_assert(conf != NULL);
	d = mw_start(conf, NULL, false);
	ck_assert(d != NULL);
	scrape_after(d, realtime_now(), &a);
	ck_assert_msg(mw_metric(a.body, "memwatch_cgroups_discovered", NULL, &discovered, NULL, 0),
		      "no memwatch_cgroups_discovered");
	/* Our cgroups and the root of the walk: nothing else below it. */
	ck_assert_msg(discovered == HEALTH_CGROUPS + 1, "the cgroup collector read %.0f cgroups; we made %d and a root",
		      discovered, HEALTH_CGROUPS);
	count_series(a.body, "/c", cnt);
	per_cgroup = cnt->per_test_cgroup[0];
	ck_assert_msg(per_cgroup > 0, "no series for cgroup /c0000");
	for (int i = 0; i < HEALTH_CGROUPS; i++)
		ck_assert_msg(cnt->per_test_cgroup[i] == per_cgroup, "cgroup /c%04d has %zu series, /c0000 %zu", i,
			      cnt->per_test_cgroup[i], per_cgroup);
	ck_assert_msg(cnt->cgroup_labelled == (HEALTH_CGROUPS + 1) * per_cgroup,
		      "%zu series name one of our %d cgroups or the root; %zu each would be %zu", cnt->cgroup_labelled,
		      HEALTH_CGROUPS, per_cgroup, (size_t)(HEALTH_CGROUPS + 1) * per_cgroup);
	would_be = cnt->cgroup;
	note("uncapped: %zu collector series, %zu of the cgroup collector (%zu per cgroup), %zu of the daemon's own",
	     cnt->collectors, cnt->cgroup, per_cgroup, cnt->health);
	for (size_t i = 0; i < sizeof(collector_names) / sizeof(collector_names[0]); i++) {
		char m[64];
		double v;

		snprintf(m, sizeof(m), "collector=\"%s\"", collector_names[i]);
		ck_assert_msg(mw_metric(a.body, "memwatch_series_dropped_total", m, &v, NULL, 0) && v == 0,
			      "uncapped: memwatch_series_dropped_total{%s} is not 0", m);
	}

	/* The smallest cap: the daemon's own series must all stay. */
	ck_assert(asprintf(&text,
			   "[daemon]\nwindow = 1s\nquiet_read_interval = 0\nmax_series = 100\n"
			   "[collector.cgroup]\nv1_root = %s\nv2_root = none\ntop_k = 10000\nmax_cgroups = 100000\n",
			   root) >= 0);
	reload_to(d, conf, text, &a, &b);
	free(text);
	scrape_after(d, b.window_end, &c);
	count_series(c.body, "/c", cnt);
	note("max_series = 100: %zu collector series (%zu of the cgroup collector), %zu of the daemon's own",
	     cnt->collectors, cnt->cgroup, cnt->health);
	ck_assert_msg(cnt->collectors == 100, "with max_series = 100 the window has %zu collector series",
		      cnt->collectors);
	ck_assert_msg(mw_metric(c.body, "memwatch_build_info", NULL, NULL, NULL, 0), "no memwatch_build_info");
	ck_assert_msg(mw_metric(c.body, "memwatch_config_reloads_total", "result=\"success\"", NULL, NULL, 0),
		      "no memwatch_config_reloads_total");
	ck_assert_msg(mw_metric(c.body, "memwatch_events_received_total", NULL, NULL, NULL, 0),
		      "no memwatch_events_received_total");
	for (size_t i = 0; i < sizeof(collector_names) / sizeof(collector_names[0]); i++) {
		char m[64];

		snprintf(m, sizeof(m), "collector=\"%s\"", collector_names[i]);
		ck_assert_msg(mw_metric(c.body, "memwatch_collector_up", m, NULL, NULL, 0), "no memwatch_collector_up{%s}",
			      m);
		ck_assert_msg(mw_metric(c.body, "memwatch_collector_info", m, NULL, NULL, 0),
			      "no memwatch_collector_info{%s}", m);
		ck_assert_msg(mw_metric(c.body, "memwatch_series_dropped_total", m, NULL, NULL, 0),
			      "no memwatch_series_dropped_total{%s}", m);
	}
	/* Per window, the cgroup collector loses exactly what did not fit. */
	ck_assert(mw_metric(b.body, "memwatch_series_dropped_total", "collector=\"cgroup\"", &dropped_a, NULL, 0));
	ck_assert(mw_metric(c.body, "memwatch_series_dropped_total", "collector=\"cgroup\"", &dropped_b, NULL, 0));
	ck_assert(mw_metric(c.body, "memwatch_window_seconds", NULL, &win_s, NULL, 0));
	windows = round((c.window_end - b.window_end) / win_s);
	cut_per_window = would_be - cnt->cgroup;
	note("memwatch_series_dropped_total{collector=\"cgroup\"} %.0f -> %.0f over %.0f window(s); %zu would be, %zu "
	     "exported",
	     dropped_a, dropped_b, windows, would_be, cnt->cgroup);
	ck_assert_msg(windows >= 1, "the two scrapes are of the same window");
	ck_assert_msg(dropped_b > 0, "the cgroup collector's cut series are not counted");
	ck_assert_msg(dropped_b - dropped_a == windows * (double)cut_per_window,
		      "the cgroup collector would export %zu series and exports %zu, yet its dropped count grew by "
		      "%.0f in %.0f window(s)",
		      would_be, cnt->cgroup, dropped_b - dropped_a, windows);
	{
		char *out = NULL;
		int rc = mw_promtool_check(c.body, strlen(c.body), &out);

		ck_assert_msg(rc == 0, "promtool check metrics failed (%d):\n%s", rc, out ? out : "");
		free(out);
	}
	scrape_free(&a);
	scrape_free(&b);
	scrape_free(&c);
	mw_assert_clean_stop(d);
	free(conf);
	free(cnt);
}
END_TEST


void reload_add_health_tests(Suite *s, void (*add)(Suite *s, const char *name, const TTest *test, double timeout))
{
	add(s, "health_budget", test_health_budget, 180);
}
