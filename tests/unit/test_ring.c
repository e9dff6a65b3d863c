/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

static const struct metric_desc seq_desc = {
	.name = "test_seq",
	.help = "Window sequence number.",
	.type = METRIC_GAUGE,
};

static const struct metric_desc echo_desc = {
	.name = "test_echo",
	.help = "Sequence number as a label.",
	.type = METRIC_GAUGE,
	.n_labels = 1,
	.labels = { "seq" },
};

/* The exact text a snapshot made by make_snap(seq) renders to. */
static void expected_text(uint64_t seq, char *buf, size_t size)
{
	snprintf(buf, size,
		 "# HELP test_seq Window sequence number.\n"
		 "# TYPE test_seq gauge\n"
		 "test_seq %" PRIu64 "\n"
		 "# HELP test_echo Sequence number as a label.\n"
		 "# TYPE test_echo gauge\n"
		 "test_echo{seq=\"s%" PRIu64 "\"} %" PRIu64 "\n",
		 seq, seq, seq * 3);
}

/* A sealed snapshot whose window seq, gauge value and label all carry seq. */
static struct snapshot *make_snap(uint64_t seq)
{
	struct snapshot_window w = { .seq = seq, .start_mono_usec = seq * 10, .end_mono_usec = seq * 10 + 10 };
	struct snapshot *s = snapshot_new(&w, 16);
	char label[32];
	const char *lv[] = { label };

	if (!s)
		return NULL;
	snprintf(label, sizeof(label), "s%" PRIu64, seq);
	if (snapshot_add(s, &seq_desc, NULL, (double)seq) < 0 ||
	    snapshot_add(s, &echo_desc, lv, (double)(seq * 3)) < 0 || snapshot_seal(s) < 0) {
		snapshot_unref(s);
		return NULL;
	}
	return s;
}

static void publish(struct snapshot_ring *r, uint64_t seq)
{
	struct snapshot *s = make_snap(seq);

	ck_assert_ptr_nonnull(s);
	snapshot_ring_publish(r, s);
}

static uint64_t seq_of(const struct snapshot *s)
{
	return snapshot_window(s)->seq;
}

/* Whether s still has the text it was sealed with; either way its samples
 * must render to exactly that text. */
static bool has_text(const struct snapshot *s)
{
	char want[512];
	const char *text = snapshot_text(s, NULL);
	struct strbuf sb;
	bool same;

	expected_text(seq_of(s), want, sizeof(want));
	strbuf_init(&sb);
	ck_assert_int_eq(snapshot_render_text(s, &sb), 0);
	same = strcmp(sb.data, want) == 0;
	strbuf_free(&sb);
	ck_assert_msg(same, "samples of window %" PRIu64 " render differently", seq_of(s));
	if (!text) {
		ck_assert_ptr_null(snapshot_gzip(s, NULL));
		return false;
	}
	ck_assert_str_eq(text, want);
	ck_assert_ptr_nonnull(snapshot_gzip(s, NULL));
	return true;
}

/* Asserts that recent(max) yields exactly first..last, oldest first, and
 * that the newest of the ring has its text. */
static void assert_recent(struct snapshot_ring *r, size_t max, uint64_t first, size_t n)
{
	struct snapshot *out[64], *latest = snapshot_ring_latest(r);
	size_t got, i;

	ck_assert_uint_le(max, 64);
	memset(out, 0, sizeof(out));
	got = snapshot_ring_recent(r, out, max);
	ck_assert_uint_eq(got, n);
	for (i = 0; i < got; i++) {
		ck_assert_ptr_nonnull(out[i]);
		ck_assert_uint_eq(seq_of(out[i]), first + i);
		if (!has_text(out[i]))
			ck_assert_ptr_ne(out[i], latest);
		snapshot_unref(out[i]);
	}
	for (; i < 64; i++)
		ck_assert_ptr_null(out[i]); /* nothing written past the count */
	snapshot_unref(latest);
}

/* How many of the ring's windows still have their text. */
static size_t count_with_text(struct snapshot_ring *r)
{
	struct snapshot *out[64];
	size_t n = snapshot_ring_recent(r, out, 64), i, with = 0;

	for (i = 0; i < n; i++) {
		with += has_text(out[i]);
		snapshot_unref(out[i]);
	}
	return with;
}

static void assert_latest(struct snapshot_ring *r, uint64_t seq)
{
	struct snapshot *s = snapshot_ring_latest(r);

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(seq_of(s), seq);
	ck_assert_double_eq(snapshot_value(s, "test_seq", NULL), (double)seq);
	snapshot_unref(s);
}

START_TEST(test_new_zero_capacity)
{
	ck_assert_ptr_null(snapshot_ring_new(0));
	snapshot_ring_free(NULL);
}
END_TEST

START_TEST(test_empty)
{
	struct snapshot_ring *r = snapshot_ring_new(3);
	struct snapshot *out[4] = { 0 };

	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(snapshot_ring_capacity(r), 3);
	ck_assert_uint_eq(snapshot_ring_count(r), 0);
	ck_assert_ptr_null(snapshot_ring_latest(r));
	ck_assert_uint_eq(snapshot_ring_recent(r, out, 4), 0);
	ck_assert_ptr_null(out[0]);
	snapshot_ring_free(r);
}
END_TEST

START_TEST(test_publish_latest)
{
	struct snapshot_ring *r = snapshot_ring_new(4);
	struct snapshot *first, *again;

	ck_assert_ptr_nonnull(r);
	publish(r, 1);
	ck_assert_uint_eq(snapshot_ring_count(r), 1);
	first = snapshot_ring_latest(r);
	ck_assert_ptr_nonnull(first);
	ck_assert_uint_eq(seq_of(first), 1);
	/* Each call hands out a new reference to the same object. */
	again = snapshot_ring_latest(r);
	ck_assert_ptr_eq(first, again);
	snapshot_unref(again);

	publish(r, 2);
	assert_latest(r, 2);
	ck_assert_uint_eq(snapshot_ring_count(r), 2);
	/* The earlier reference is unaffected. */
	ck_assert_uint_eq(seq_of(first), 1);
	snapshot_unref(first);
	assert_recent(r, 10, 1, 2);
	snapshot_ring_free(r);
}
END_TEST

START_TEST(test_wraparound)
{
	struct snapshot_ring *r = snapshot_ring_new(3);
	struct snapshot *held;
	char want[512];
	uint64_t seq;

	ck_assert_ptr_nonnull(r);
	publish(r, 1);
	held = snapshot_ring_latest(r); /* outlives its eviction */
	for (seq = 2; seq <= 7; seq++) {
		publish(r, seq);
		ck_assert_uint_eq(snapshot_ring_count(r), seq < 3 ? seq : 3);
		assert_latest(r, seq);
	}
	ck_assert_uint_eq(snapshot_ring_capacity(r), 3);
	assert_recent(r, 10, 5, 3);
	assert_recent(r, 3, 5, 3);
	assert_recent(r, 2, 6, 2); /* the newest two, oldest first */
	assert_recent(r, 1, 7, 1);
	assert_recent(r, 0, 0, 0);

	/* Evicted long ago, still readable through our reference. */
	expected_text(1, want, sizeof(want));
	ck_assert_str_eq(snapshot_text(held, NULL), want);
	snapshot_unref(held);
	snapshot_ring_free(r);
}
END_TEST

START_TEST(test_capacity_one)
{
	struct snapshot_ring *r = snapshot_ring_new(1);

	ck_assert_ptr_nonnull(r);
	for (uint64_t seq = 1; seq <= 5; seq++) {
		publish(r, seq);
		ck_assert_uint_eq(snapshot_ring_count(r), 1);
		assert_latest(r, seq);
		assert_recent(r, 4, seq, 1);
	}
	snapshot_ring_free(r);
}
END_TEST

START_TEST(test_resize_bigger)
{
	struct snapshot_ring *r = snapshot_ring_new(3);
	uint64_t seq;

	ck_assert_ptr_nonnull(r);
	for (seq = 1; seq <= 7; seq++)
		publish(r, seq);
	ck_assert_int_eq(snapshot_ring_resize(r, 5), 0);
	ck_assert_uint_eq(snapshot_ring_capacity(r), 5);
	ck_assert_uint_eq(snapshot_ring_count(r), 3);
	assert_latest(r, 7);
	assert_recent(r, 10, 5, 3);

	publish(r, 8);
	publish(r, 9);
	ck_assert_uint_eq(snapshot_ring_count(r), 5);
	assert_recent(r, 10, 5, 5);
	publish(r, 10);
	ck_assert_uint_eq(snapshot_ring_count(r), 5);
	assert_recent(r, 10, 6, 5);
	assert_latest(r, 10);
	snapshot_ring_free(r);
}
END_TEST

START_TEST(test_resize_smaller)
{
	struct snapshot_ring *r = snapshot_ring_new(5);
	uint64_t seq;

	ck_assert_ptr_nonnull(r);
	for (seq = 1; seq <= 10; seq++)
		publish(r, seq);
	assert_recent(r, 10, 6, 5);
	ck_assert_int_eq(snapshot_ring_resize(r, 2), 0);
	ck_assert_uint_eq(snapshot_ring_capacity(r), 2);
	ck_assert_uint_eq(snapshot_ring_count(r), 2);
	assert_recent(r, 10, 9, 2);
	assert_latest(r, 10);
	publish(r, 11);
	assert_recent(r, 10, 10, 2);
	assert_latest(r, 11);
	snapshot_ring_free(r);
}
END_TEST

START_TEST(test_resize_invalid_and_same)
{
	struct snapshot_ring *r = snapshot_ring_new(3);

	ck_assert_ptr_nonnull(r);
	publish(r, 1);
	publish(r, 2);
	ck_assert_int_eq(snapshot_ring_resize(r, 0), -EINVAL);
	ck_assert_uint_eq(snapshot_ring_capacity(r), 3);
	ck_assert_uint_eq(snapshot_ring_count(r), 2);
	assert_recent(r, 10, 1, 2);

	ck_assert_int_eq(snapshot_ring_resize(r, 3), 0);
	ck_assert_uint_eq(snapshot_ring_capacity(r), 3);
	assert_recent(r, 10, 1, 2);
	publish(r, 3);
	publish(r, 4);
	assert_recent(r, 10, 2, 3);
	snapshot_ring_free(r);
}
END_TEST

START_TEST(test_resize_empty)
{
	struct snapshot_ring *r = snapshot_ring_new(2);

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(snapshot_ring_resize(r, 4), 0);
	ck_assert_uint_eq(snapshot_ring_count(r), 0);
	ck_assert_ptr_null(snapshot_ring_latest(r));
	publish(r, 1);
	assert_recent(r, 10, 1, 1);
	snapshot_ring_free(r);
}
END_TEST

/* Every combination of capacity, fill level (so every head position) and
 * new capacity: resize keeps the newest min(count, new capacity), and the
 * ring then keeps working. */
START_TEST(test_resize_exhaustive)
{
	size_t cap, newcap;
	uint64_t n;

	for (cap = 1; cap <= 5; cap++)
		for (n = 0; n <= 12; n++)
			for (newcap = 1; newcap <= 7; newcap++) {
				struct snapshot_ring *r = snapshot_ring_new(cap);
				size_t count = n < cap ? n : cap, keep;
				uint64_t seq;

				ck_assert_ptr_nonnull(r);
				for (seq = 1; seq <= n; seq++)
					publish(r, seq);
				ck_assert_int_eq(snapshot_ring_resize(r, newcap), 0);
				keep = count < newcap ? count : newcap;
				ck_assert_uint_eq(snapshot_ring_count(r), keep);
				ck_assert_uint_eq(snapshot_ring_capacity(r), newcap);
				assert_recent(r, 64, n - keep + 1, keep);

				/* three more: still the newest, still in order */
				for (seq = n + 1; seq <= n + 3; seq++)
					publish(r, seq);
				keep = keep + 3 < newcap ? keep + 3 : newcap;
				ck_assert_uint_eq(snapshot_ring_count(r), keep);
				assert_recent(r, 64, n + 3 - keep + 1, keep);
				assert_latest(r, n + 3);
				snapshot_ring_free(r);
			}
}
END_TEST

START_TEST(test_cleanup_attribute)
{
	_cleanup_(snapshot_ring_freep) struct snapshot_ring *r = snapshot_ring_new(2);
	_cleanup_(snapshot_ring_freep) struct snapshot_ring *none = NULL;

	ck_assert_ptr_nonnull(r);
	publish(r, 1);
	publish(r, 2);
	publish(r, 3);
	ck_assert_ptr_null(none);
	/* freed at scope exit; LeakSanitizer checks nothing is left */
}
END_TEST

/* --- trimming the text of older windows ---------------------------------- */

/* Only the newest keeps its text; the others still give their samples. */
START_TEST(test_trim_older)
{
	struct snapshot_ring *r = snapshot_ring_new(4);
	struct snapshot *out[4];
	uint64_t seq;
	size_t i;

	ck_assert_ptr_nonnull(r);
	publish(r, 1);
	ck_assert_uint_eq(count_with_text(r), 1);
	for (seq = 2; seq <= 6; seq++) {
		publish(r, seq);
		ck_assert_uint_eq(count_with_text(r), 1);
		assert_latest(r, seq);
	}
	ck_assert_uint_eq(snapshot_ring_recent(r, out, 4), 4);
	for (i = 0; i < 4; i++) {
		ck_assert_uint_eq(seq_of(out[i]), 3 + i);
		ck_assert(has_text(out[i]) == (i == 3));
		ck_assert_double_eq(snapshot_value(out[i], "test_seq", NULL), (double)(3 + i));
		snapshot_unref(out[i]);
	}
	snapshot_ring_free(r);
}
END_TEST

/* A scrape holds the newest while newer windows are published: its text and
 * gzip copy stay until it lets go, and are trimmed at a later publish. */
START_TEST(test_trim_waits_for_reader)
{
	struct snapshot_ring *r = snapshot_ring_new(8);
	struct snapshot *scrape, *response, *out[8];
	const char *text, *gz;
	size_t len, gz_len;
	char want[512];

	ck_assert_ptr_nonnull(r);
	publish(r, 1);
	publish(r, 2);
	/* What serve_metrics does: a reference from the ring, a second one for
	 * the response, then the first is dropped. */
	scrape = snapshot_ring_latest(r);
	text = snapshot_text(scrape, &len);
	gz = snapshot_gzip(scrape, &gz_len);
	response = snapshot_ref(scrape);
	snapshot_unref(scrape);

	publish(r, 3);
	publish(r, 4);
	ck_assert_uint_eq(count_with_text(r), 2); /* 2 (held) and 4 (newest) */
	expected_text(2, want, sizeof(want));
	ck_assert_ptr_eq(snapshot_text(response, NULL), text);
	ck_assert_ptr_eq(snapshot_gzip(response, NULL), gz);
	ck_assert_uint_eq(len, strlen(want));
	ck_assert(memcmp(text, want, len) == 0);
	/* Every byte is still ours (AddressSanitizer checks the reads). */
	ck_assert_uint_eq((unsigned char)gz[0], 0x1f);
	ck_assert_uint_eq((unsigned char)gz[1], 0x8b);
	ck_assert_uint_eq((unsigned)(unsigned char)gz[gz_len - 4], len & 0xff);

	/* The response was sent: released by its free callback. Not trimmed
	 * yet (nothing was published since), but at the next publish. */
	snapshot_unref(response);
	ck_assert_uint_eq(count_with_text(r), 2);
	publish(r, 5);
	ck_assert_uint_eq(count_with_text(r), 1);
	ck_assert_uint_eq(snapshot_ring_recent(r, out, 8), 5);
	ck_assert_uint_eq(seq_of(out[1]), 2);
	ck_assert(!has_text(out[1]));
	ck_assert(has_text(out[4]));
	for (size_t i = 0; i < 5; i++)
		snapshot_unref(out[i]);
	snapshot_ring_free(r);
}
END_TEST

/* Many windows held at once (a slow client on each) and let go together:
 * all are trimmed within a few publishes. */
START_TEST(test_trim_many_released)
{
	enum { CAP = 40, HELD = 30 };
	struct snapshot_ring *r = snapshot_ring_new(CAP);
	struct snapshot *held[HELD];
	size_t i;

	ck_assert_ptr_nonnull(r);
	for (i = 0; i < HELD; i++) {
		publish(r, i + 1);
		held[i] = snapshot_ring_latest(r);
	}
	publish(r, HELD + 1);
	ck_assert_uint_eq(count_with_text(r), HELD + 1);
	for (i = 0; i < HELD; i++)
		snapshot_unref(held[i]);
	for (i = 0; i < 5; i++)
		publish(r, HELD + 2 + i);
	ck_assert_uint_eq(count_with_text(r), 1);
	assert_recent(r, 64, 1, HELD + 6);
	snapshot_ring_free(r);
}
END_TEST

/* Resizing keeps the newest with its text; publishing afterwards trims as usual. */
START_TEST(test_trim_after_resize)
{
	struct snapshot_ring *r = snapshot_ring_new(3);
	struct snapshot *held;
	uint64_t seq;

	ck_assert_ptr_nonnull(r);
	for (seq = 1; seq <= 3; seq++)
		publish(r, seq);
	held = snapshot_ring_latest(r);
	publish(r, 4);
	ck_assert_int_eq(snapshot_ring_resize(r, 6), 0);
	ck_assert_uint_eq(count_with_text(r), 2);
	assert_latest(r, 4);
	snapshot_unref(held);
	publish(r, 5);
	ck_assert_uint_eq(count_with_text(r), 1);
	ck_assert_int_eq(snapshot_ring_resize(r, 1), 0);
	ck_assert_uint_eq(count_with_text(r), 1);
	assert_recent(r, 4, 5, 1);
	snapshot_ring_free(r);
}
END_TEST

/* --- concurrency -------------------------------------------------------- */

#define N_PUBLISH 20000
#define N_READERS 3
#define RECENT_MAX 6

struct shared {
	struct snapshot_ring *ring;
	atomic_bool done;
	atomic_uint errors;
	pthread_mutex_t msg_lock;
	char msg[512];
};

struct reader {
	struct shared *sh;
	int id;
	unsigned long iterations;
	uint64_t max_seen;
};

static void report(struct shared *sh, const char *what, int id, uint64_t a, uint64_t b)
{
	if (atomic_fetch_add(&sh->errors, 1) == 0) {
		pthread_mutex_lock(&sh->msg_lock);
		snprintf(sh->msg, sizeof(sh->msg), "reader %d: %s (%" PRIu64 ", %" PRIu64 ")", id, what, a, b);
		pthread_mutex_unlock(&sh->msg_lock);
	}
}

static bool check_snap(struct reader *rd, const struct snapshot *s, bool must_have_text)
{
	char want[512];
	uint64_t seq = seq_of(s);
	const char *text, *gz;
	size_t len, gz_len;

	if (seq < 1 || seq > N_PUBLISH) {
		report(rd->sh, "seq out of range", rd->id, seq, 0);
		return false;
	}
	text = snapshot_text(s, &len);
	gz = snapshot_gzip(s, &gz_len);
	expected_text(seq, want, sizeof(want));
	/* Older windows may have been trimmed; the newest never is, and what
	 * we hold is never trimmed under us (AddressSanitizer checks the reads). */
	if (!text && must_have_text) {
		report(rd->sh, "newest window without text", rd->id, seq, 0);
		return false;
	}
	if (text && (len != strlen(want) || strcmp(text, want) != 0)) {
		report(rd->sh, "text does not match seq", rd->id, seq, len);
		return false;
	}
	if (text && (!gz || gz_len < 18 || (unsigned char)gz[0] != 0x1f ||
		     (unsigned char)gz[gz_len - 4] != (len & 0xff))) {
		report(rd->sh, "gzip copy does not match the text", rd->id, seq, gz_len);
		return false;
	}
	if (!text && gz) {
		report(rd->sh, "gzip copy without text", rd->id, seq, gz_len);
		return false;
	}
	if (snapshot_value(s, "test_seq", NULL) != (double)seq) {
		report(rd->sh, "value does not match seq", rd->id, seq, 0);
		return false;
	}
	if (snapshot_window(s)->end_mono_usec != seq * 10 + 10) {
		report(rd->sh, "window does not match seq", rd->id, seq, snapshot_window(s)->end_mono_usec);
		return false;
	}
	return true;
}

static void *reader_main(void *p)
{
	struct reader *rd = p;
	struct shared *sh = rd->sh;
	struct snapshot *out[RECENT_MAX];

	for (;;) {
		/* Read done first, so one last full pass runs after the writer finished. */
		bool finished = atomic_load(&sh->done);
		struct snapshot *s = snapshot_ring_latest(sh->ring);
		size_t n, i;

		rd->iterations++;
		if (s) {
			uint64_t seq = seq_of(s);

			check_snap(rd, s, true);
			if (seq < rd->max_seen)
				report(sh, "latest went backwards", rd->id, rd->max_seen, seq);
			rd->max_seen = seq;
			snapshot_unref(s);
		}

		n = snapshot_ring_recent(sh->ring, out, (size_t)(rd->iterations % RECENT_MAX) + 1);
		for (i = 0; i < n; i++) {
			check_snap(rd, out[i], i == n - 1); /* the newest at that moment */
			/* consecutive and oldest first */
			if (i > 0 && seq_of(out[i]) != seq_of(out[i - 1]) + 1)
				report(sh, "recent not consecutive", rd->id, seq_of(out[i - 1]), seq_of(out[i]));
		}
		if (n > 0) {
			uint64_t newest = seq_of(out[n - 1]);

			if (newest < rd->max_seen)
				report(sh, "recent older than an earlier latest", rd->id, rd->max_seen, newest);
			rd->max_seen = newest;
		}
		for (i = 0; i < n; i++)
			snapshot_unref(out[i]);

		if (finished)
			break;
	}
	return NULL;
}

static void *resizer_main(void *p)
{
	struct shared *sh = p;
	size_t caps[] = { 1, 7, 3, 16, 2, 5 };
	unsigned i = 0;

	while (!atomic_load(&sh->done)) {
		if (snapshot_ring_resize(sh->ring, caps[i++ % 6]) != 0)
			report(sh, "resize failed", -1, i, 0);
		sched_yield();
	}
	return NULL;
}

static void run_concurrent(bool with_resizer)
{
	struct shared sh = { 0 };
	struct reader readers[N_READERS];
	pthread_t rth[N_READERS], resizer;
	uint64_t seq;
	int i;

	sh.ring = snapshot_ring_new(8);
	ck_assert_ptr_nonnull(sh.ring);
	atomic_init(&sh.done, false);
	atomic_init(&sh.errors, 0);
	pthread_mutex_init(&sh.msg_lock, NULL);

	for (i = 0; i < N_READERS; i++) {
		readers[i] = (struct reader){ .sh = &sh, .id = i };
		ck_assert_int_eq(pthread_create(&rth[i], NULL, reader_main, &readers[i]), 0);
	}
	if (with_resizer)
		ck_assert_int_eq(pthread_create(&resizer, NULL, resizer_main, &sh), 0);

	/* This thread is the single writer. */
	for (seq = 1; seq <= N_PUBLISH; seq++) {
		struct snapshot *s = make_snap(seq);

		if (!s)
			ck_abort_msg("make_snap(%" PRIu64 ") failed", seq);
		snapshot_ring_publish(sh.ring, s);
	}
	atomic_store(&sh.done, true);

	for (i = 0; i < N_READERS; i++)
		ck_assert_int_eq(pthread_join(rth[i], NULL), 0);
	if (with_resizer)
		ck_assert_int_eq(pthread_join(resizer, NULL), 0);

	ck_assert_msg(atomic_load(&sh.errors) == 0, "%u errors, first: %s", atomic_load(&sh.errors), sh.msg);
	for (i = 0; i < N_READERS; i++) {
		ck_assert_uint_gt(readers[i].iterations, 0);
		/* The last pass ran after the final publish. */
		ck_assert_uint_eq(readers[i].max_seen, N_PUBLISH);
	}
	assert_latest(sh.ring, N_PUBLISH);
	if (!with_resizer) {
		ck_assert_uint_eq(snapshot_ring_count(sh.ring), 8);
		assert_recent(sh.ring, 64, N_PUBLISH - 7, 8);
	}
	snapshot_ring_free(sh.ring);
	pthread_mutex_destroy(&sh.msg_lock);
}

START_TEST(test_concurrent_readers)
{
	run_concurrent(false);
}
END_TEST

START_TEST(test_concurrent_readers_with_resize)
{
	run_concurrent(true);
}
END_TEST

static Suite *ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("core");
	TCase *conc = tcase_create("concurrency");

	tcase_add_test(tc, test_new_zero_capacity);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_publish_latest);
	tcase_add_test(tc, test_wraparound);
	tcase_add_test(tc, test_capacity_one);
	tcase_add_test(tc, test_resize_bigger);
	tcase_add_test(tc, test_resize_smaller);
	tcase_add_test(tc, test_resize_invalid_and_same);
	tcase_add_test(tc, test_resize_empty);
	tcase_add_test(tc, test_resize_exhaustive);
	tcase_add_test(tc, test_cleanup_attribute);
	tcase_add_test(tc, test_trim_older);
	tcase_add_test(tc, test_trim_waits_for_reader);
	tcase_add_test(tc, test_trim_many_released);
	tcase_add_test(tc, test_trim_after_resize);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tcase_add_test(conc, test_concurrent_readers);
	tcase_add_test(conc, test_concurrent_readers_with_resize);
	/* generous: sanitizers slow this down a lot; not a timing assertion */
	tcase_set_timeout(conc, 50);
	suite_add_tcase(s, conc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ring_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
