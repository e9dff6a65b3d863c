/* SPDX-License-Identifier: GPL-2.0 */
/* lib/cgroup_walk.c on the fixture trees: patterns, the walk, reading a
 * cgroup's memory files, ranking. On a temporary tree changed under the walk:
 * test_cgroup_walk_churn.c. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_walk.h"

#include "cgroup_walk_fixture.h"
#include "suite_main.h"

/* ---- patterns ---- */

START_TEST(test_globs_parse)
{
	struct cgroup_globs g;

	ck_assert_int_eq(cgroup_globs_parse("/system.slice/*, /user.slice\t*.scope,,", &g), 0);
	ck_assert_uint_eq(g.n, 3);
	ck_assert_str_eq(g.pattern[0], "/system.slice/*");
	ck_assert_str_eq(g.pattern[1], "/user.slice");
	ck_assert_str_eq(g.pattern[2], "*.scope");
	ck_assert(cgroup_globs_match(&g, "/system.slice/a.service"));
	ck_assert(cgroup_globs_match(&g, "/system.slice/a.service/deeper")); /* no FNM_PATHNAME */
	ck_assert(cgroup_globs_match(&g, "/user.slice"));
	ck_assert(!cgroup_globs_match(&g, "/user.slice/user-0.slice"));
	ck_assert(cgroup_globs_match(&g, "/user.slice/session-1.scope"));
	ck_assert(!cgroup_globs_match(&g, "/"));
	cgroup_globs_free(&g);
	ck_assert_uint_eq(g.n, 0);

	ck_assert_int_eq(cgroup_globs_parse("", &g), 0);
	ck_assert_uint_eq(g.n, 0);
	ck_assert_int_eq(cgroup_globs_parse(" , ", NULL), 0);
	ck_assert_int_eq(cgroup_globs_parse("system.slice", NULL), -EINVAL);
	ck_assert_int_eq(cgroup_globs_parse("/ok nope", &g), -EINVAL);
	ck_assert_int_eq(cgroup_globs_parse("[ab]*", NULL), 0);
	ck_assert_int_eq(cgroup_globs_parse("?x", NULL), 0);
}
END_TEST

START_TEST(test_globs_limits)
{
	char text[CGROUP_GLOBS_MAX * 4 + 16] = "", longp[CGROUP_GLOB_LEN_MAX + 2];
	struct cgroup_globs g;
	size_t i;

	for (i = 0; i < CGROUP_GLOBS_MAX; i++)
		strcat(text, "/a ");
	ck_assert_int_eq(cgroup_globs_parse(text, &g), 0);
	ck_assert_uint_eq(g.n, CGROUP_GLOBS_MAX);
	cgroup_globs_free(&g);
	strcat(text, "/b");
	ck_assert_int_eq(cgroup_globs_parse(text, &g), -E2BIG);

	memset(longp, 'x', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	ck_assert_int_eq(cgroup_globs_parse(longp, NULL), -EINVAL);
	longp[sizeof(longp) - 2] = '\0';
	ck_assert_int_eq(cgroup_globs_parse(longp, NULL), 0);
}
END_TEST

START_TEST(test_selected)
{
	struct cgroup_globs inc, exc, none = { .n = 0 };

	ck_assert_int_eq(cgroup_globs_parse("/system.slice*", &inc), 0);
	ck_assert_int_eq(cgroup_globs_parse("*/systemd-*", &exc), 0);
	ck_assert(cgroup_path_selected(&none, &none, "/anything"));
	ck_assert(cgroup_path_selected(NULL, NULL, "/"));
	ck_assert(cgroup_path_selected(&inc, &exc, "/system.slice"));
	ck_assert(cgroup_path_selected(&inc, &exc, "/system.slice/cron.service"));
	ck_assert(!cgroup_path_selected(&inc, &exc, "/system.slice/systemd-journald.service"));
	ck_assert(!cgroup_path_selected(&inc, &exc, "/user.slice"));
	ck_assert(!cgroup_path_selected(&none, &exc, "/x/systemd-udevd.service"));
	cgroup_globs_free(&inc);
	cgroup_globs_free(&exc);
}
END_TEST

/* ---- the walk ---- */

static void walk_fixture(const char *root, const char *shadow, unsigned max_depth, size_t max_cgroups,
			 struct seen *s, struct cgroup_walk_stats *st)
{
	const struct cgroup_walk_opts opts = { .max_depth = max_depth, .max_cgroups = max_cgroups };
	int fd = open_dir(root), sfd = shadow ? open_dir(shadow) : -1;

	ck_assert_int_eq(cgroup_walk(fd, sfd, &opts, record, s, st), 0);
	/* The caller's fd is not consumed and its offset not moved: walk again. */
	ck_assert_int_eq(fcntl(fd, F_GETFD), FD_CLOEXEC);
	close(fd);
	if (sfd >= 0)
		close(sfd);
}

START_TEST(test_walk_v2_tree)
{
	static const struct {
		const char *path;
		unsigned depth;
	} want[] = {
		{ "/", 0 },
		{ "/workload", 1 },
		{ "/" ODD, 1 },
		{ "/system.slice", 1 },
		{ "/system.slice/app.service", 2 },
		{ "/broken", 1 },
		{ "/nomemory", 1 },
		{ "/nomemory/child", 2 },
	};
	struct seen s = { .stop_at = -1 };
	struct cgroup_walk_stats st;
	size_t i;

	walk_fixture(V2, NULL, 8, 10000, &s, &st);
	ck_assert_uint_eq(s.n, sizeof(want) / sizeof(want[0]));
	ck_assert_uint_eq(st.visited, s.n);
	ck_assert_uint_eq(st.vanished, 0);
	ck_assert(!st.truncated);
	ck_assert_str_eq(s.path[0], "/"); /* pre-order: the root first */
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int k = find_seen(&s, want[i].path);

		ck_assert_msg(k >= 0, "%s not visited", want[i].path);
		ck_assert_uint_eq(s.depth[k], want[i].depth);
		ck_assert(!s.shadow[k]);
	}
	ck_assert_int_lt(find_seen(&s, "/link-to-workload"), 0);
	/* A parent comes before its children. */
	ck_assert_int_lt(find_seen(&s, "/system.slice"), find_seen(&s, "/system.slice/app.service"));
}
END_TEST

START_TEST(test_walk_bounds)
{
	struct seen s = { .stop_at = -1 };
	struct cgroup_walk_stats st;

	walk_fixture(V2, NULL, 1, 10000, &s, &st);
	ck_assert_uint_eq(s.n, 6);
	ck_assert_int_lt(find_seen(&s, "/system.slice/app.service"), 0);
	ck_assert_int_lt(find_seen(&s, "/nomemory/child"), 0);

	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	walk_fixture(V2, NULL, 0, 10000, &s, &st);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.path[0], "/");

	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	walk_fixture(V2, NULL, 8, 3, &s, &st);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_uint_eq(st.visited, 3);
	ck_assert(st.truncated);

	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	walk_fixture(V2, NULL, 8, 8, &s, &st);
	ck_assert_uint_eq(s.n, 8);
	ck_assert(!st.truncated); /* exactly enough */
}
END_TEST

START_TEST(test_walk_prune_and_stop)
{
	const struct cgroup_walk_opts opts = { .max_depth = 8, .max_cgroups = 100 };
	struct seen s = { .stop_at = -1, .prune = "/system.slice" };
	struct cgroup_walk_stats st;
	int fd;

	walk_fixture(V2, NULL, 8, 10000, &s, &st);
	ck_assert_int_ge(find_seen(&s, "/system.slice"), 0);
	ck_assert_int_lt(find_seen(&s, "/system.slice/app.service"), 0);
	ck_assert_uint_eq(s.n, 7);

	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	fd = open_dir(V2);
	ck_assert_int_eq(cgroup_walk(fd, -1, &opts, record, &s, &st), -ECANCELED);
	ck_assert_uint_eq(s.n, 3);
	close(fd);
}
END_TEST

START_TEST(test_walk_shadow)
{
	struct seen s = { .stop_at = -1 };
	struct cgroup_walk_stats st;

	/* v1 memory tree with the v2 tree beside it, as on a hybrid host. */
	walk_fixture(V1, V2, 8, 10000, &s, &st);
	ck_assert_uint_eq(s.n, 4);
	ck_assert(s.shadow[find_seen(&s, "/")]);
	ck_assert(s.shadow[find_seen(&s, "/" ODD)]);
	ck_assert(s.shadow[find_seen(&s, "/broken")]);
	ck_assert(!s.shadow[find_seen(&s, "/fixture-rec")]);
}
END_TEST

/* ---- reading ---- */

static void read_v1_fixture(const char *sub, struct cgroup_mem *m)
{
	char path[512];
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", V1, sub);
	fd = open_dir(path);
	r = cgroup_read_v1(fd, NULL, buf, m);
	close(fd);
	ck_assert_msg(r == 0, "cgroup_read_v1(%s): %d", sub, r);
}

static void read_v2_fixture(const char *sub, struct cgroup_mem *m)
{
	char path[512];
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", V2, sub);
	fd = open_dir(path);
	r = cgroup_read_v2(fd, NULL, buf, m);
	if (r == 0)
		r = cgroup_read_pressure(fd, NULL, buf, m);
	close(fd);
	ck_assert_msg(r == 0, "cgroup_read_v2(%s): %d", sub, r);
}

#define EV(e) (1u << CGROUP_EVENT_##e)

START_TEST(test_read_v1)
{
	struct cgroup_mem m;

	read_v1_fixture(".", &m);
	ck_assert(m.v1);
	ck_assert_uint_eq(m.usage, 361836544);
	ck_assert(!m.has_limit); /* 9223372036854771712 */
	ck_assert(!m.has_high);
	ck_assert(m.has_inactive_file);
	ck_assert_uint_eq(m.inactive_file, 122859520); /* total_inactive_file, not inactive_file */
	ck_assert_uint_eq(cgroup_working_set(m.usage, m.inactive_file), 238977024);
	ck_assert_uint_eq(m.events_present, EV(FAILCNT) | EV(OOM_KILL));
	ck_assert_uint_eq(m.events[CGROUP_EVENT_FAILCNT], 0);
	ck_assert(m.has_under_oom && !m.under_oom);
	ck_assert(!m.has_pressure);

	read_v1_fixture("fixture-rec", &m);
	ck_assert_uint_eq(m.usage, 28344320);
	ck_assert(m.has_limit);
	ck_assert_uint_eq(m.limit, 64 << 20);
	ck_assert_uint_eq(m.events[CGROUP_EVENT_FAILCNT], 140);
	ck_assert_uint_eq(m.events[CGROUP_EVENT_OOM_KILL], 1);
	ck_assert_uint_eq(cgroup_working_set(m.usage, m.inactive_file), 28344320);

	read_v1_fixture(ODD, &m);
	ck_assert_uint_eq(m.usage, 0);
	ck_assert(!m.has_limit);
	ck_assert_uint_eq(cgroup_working_set(m.usage, m.inactive_file), 0);
}
END_TEST

START_TEST(test_read_v2)
{
	struct cgroup_mem m;

	read_v2_fixture("workload", &m);
	ck_assert(!m.v1);
	ck_assert_uint_eq(m.usage, 66891776);
	ck_assert(m.has_limit);
	ck_assert_uint_eq(m.limit, 64 << 20);
	ck_assert(!m.has_high); /* "max" */
	ck_assert_uint_eq(m.inactive_file, 8654848);
	ck_assert_uint_eq(cgroup_working_set(m.usage, m.inactive_file), 58236928);
	ck_assert_uint_eq(m.events_present, EV(LOW) | EV(HIGH) | EV(MAX) | EV(OOM) | EV(OOM_KILL) | EV(OOM_GROUP_KILL));
	ck_assert_uint_eq(m.events[CGROUP_EVENT_MAX], 12);
	ck_assert_uint_eq(m.events[CGROUP_EVENT_OOM], 1);
	ck_assert_uint_eq(m.events[CGROUP_EVENT_OOM_KILL], 1);
	ck_assert_uint_eq(m.events[CGROUP_EVENT_OOM_GROUP_KILL], 0);
	ck_assert(!m.has_under_oom);
	ck_assert(m.has_pressure && m.has_pressure_full);
	ck_assert_uint_eq(m.pressure_some_usec, 1843212);
	ck_assert_uint_eq(m.pressure_full_usec, 1620931);

	read_v2_fixture(ODD, &m);
	ck_assert_uint_eq(m.usage, 8716288);
	ck_assert(!m.has_limit);
	ck_assert(m.has_high);
	ck_assert_uint_eq(m.high, 512 << 20);

	read_v2_fixture("system.slice/app.service", &m);
	ck_assert_uint_eq(m.usage, 100 << 20);
	ck_assert_uint_eq(m.limit, 128 << 20);
	ck_assert_uint_eq(m.events_present, EV(LOW) | EV(HIGH) | EV(MAX) | EV(OOM) | EV(OOM_KILL));
	ck_assert_uint_eq(m.events[CGROUP_EVENT_MAX], 2);
	ck_assert_uint_eq(cgroup_working_set(m.usage, m.inactive_file), 0); /* clamped */
	ck_assert_uint_eq(m.pressure_some_usec, 750000);
}
END_TEST

START_TEST(test_read_missing_file)
{
	struct cgroup_mem m, before, root = { .v1 = false };
	int fd;

	/* Bytes, not values: a failed read must not write any of them. */
	memset(&m, 0xa5, sizeof(m));
	memcpy(&before, &m, sizeof(m));
	fd = open_dir(V2 "/broken");
	ck_assert_int_eq(cgroup_read_v2(fd, NULL, buf, &m), -ENOENT);
	close(fd);
	fd = open_dir(V1 "/broken");
	ck_assert_int_eq(cgroup_read_v1(fd, NULL, buf, &m), -ENOENT);
	close(fd);
	fd = open_dir(V1);
	ck_assert_int_eq(cgroup_read_pressure(fd, NULL, buf, &m), -ENOENT);
	close(fd);
	fd = open_dir(V2); /* the root has no memory.current, but memory.pressure */
	ck_assert_int_eq(cgroup_read_v2(fd, NULL, buf, &m), -ENOENT);
	ck_assert_msg(memcmp(&m, &before, sizeof(m)) == 0, "a failed read wrote its output");
	ck_assert_int_eq(cgroup_read_pressure(fd, NULL, buf, &root), 0);
	close(fd);
	ck_assert(root.has_pressure && root.has_pressure_full);
	ck_assert_uint_eq(root.pressure_some_usec, 19187712);
	ck_assert_uint_eq(root.pressure_full_usec, 15441023);
}
END_TEST

START_TEST(test_memory_controller)
{
	int fd = open_dir(V2);

	ck_assert(cgroup_dir_has_memory_controller(fd, buf));
	close(fd);
	fd = open_dir(V2 "/nomemory");
	ck_assert(!cgroup_dir_has_memory_controller(fd, buf));
	close(fd);
	fd = open_dir(V2 "/workload");
	ck_assert(!cgroup_dir_has_memory_controller(fd, buf)); /* no such file */
	close(fd);
}
END_TEST

START_TEST(test_working_set)
{
	ck_assert_uint_eq(cgroup_working_set(100, 30), 70);
	ck_assert_uint_eq(cgroup_working_set(100, 100), 0);
	ck_assert_uint_eq(cgroup_working_set(100, 200), 0);
	ck_assert_uint_eq(cgroup_working_set(UINT64_MAX, 0), UINT64_MAX);
}
END_TEST

/* ---- ranking ---- */

START_TEST(test_rank)
{
	struct cgroup_rank r[] = {
		{ .index = 0, .path = "/idle", .usage = 10 },
		{ .index = 1, .path = "/half", .usage = 50, .limit = 100, .has_limit = true },
		{ .index = 2, .path = "/big", .usage = 900 },
		{ .index = 3, .path = "/full", .usage = 99, .limit = 100, .has_limit = true },
		{ .index = 4, .path = "/stalled", .usage = 5, .pressure_some_delta = 1000 },
		{ .index = 5, .path = "/half2", .usage = 500, .limit = 1000, .has_limit = true, .pressure_some_delta = 7 },
		{ .index = 6, .path = "/half3", .usage = 500, .limit = 1000, .has_limit = true, .pressure_some_delta = 7 },
		{ .index = 7, .path = "/huge", .usage = UINT64_MAX - 1, .limit = UINT64_MAX, .has_limit = true },
	};
	static const size_t want[] = { 7, 3, 5, 6, 1, 4, 2, 0 };
	size_t i;

	cgroup_rank_sort(r, sizeof(r) / sizeof(r[0]));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(r[i].index == want[i], "position %zu: %s, want index %zu", i, r[i].path, want[i]);
	cgroup_rank_sort(r, 0);
}
END_TEST

START_TEST(test_event_names)
{
	ck_assert_str_eq(cgroup_event_name(CGROUP_EVENT_LOW), "low");
	ck_assert_str_eq(cgroup_event_name(CGROUP_EVENT_OOM_GROUP_KILL), "oom_group_kill");
	ck_assert_str_eq(cgroup_event_name(CGROUP_EVENT_FAILCNT), "failcnt");
	ck_assert_ptr_null(cgroup_event_name(_CGROUP_EVENT_MAX));
}
END_TEST

static Suite *cgroup_walk_suite(void)
{
	Suite *s = suite_create("cgroup_walk");
	TCase *globs = tcase_create("globs");
	TCase *w = tcase_create("walk");
	TCase *rd = tcase_create("read");
	TCase *rank = tcase_create("rank");

	tcase_add_test(globs, test_globs_parse);
	tcase_add_test(globs, test_globs_limits);
	tcase_add_test(globs, test_selected);
	suite_add_tcase(s, globs);
	tcase_add_test(w, test_walk_v2_tree);
	tcase_add_test(w, test_walk_bounds);
	tcase_add_test(w, test_walk_prune_and_stop);
	tcase_add_test(w, test_walk_shadow);
	suite_add_tcase(s, w);
	tcase_add_test(rd, test_read_v1);
	tcase_add_test(rd, test_read_v2);
	tcase_add_test(rd, test_read_missing_file);
	tcase_add_test(rd, test_memory_controller);
	tcase_add_test(rd, test_working_set);
	suite_add_tcase(s, rd);
	tcase_add_test(rank, test_rank);
	tcase_add_test(rank, test_event_names);
	suite_add_tcase(s, rank);
	return s;
}

int main(void)
{
	return suite_main_run(cgroup_walk_suite());
}
