// SPDX-License-Identifier: GPL-2.0
/* The exhaustion ETA against a reference the test makes itself: a child in a
 * memory cgroup consumes at a fixed pace, the test reads MemAvailable at the
 * daemon's sample interval and fits, to its own samples, the line the daemon
 * fits (daemon/collectors/meminfo.c: least squares over the samples of the
 * exhaustion horizon before the window's end; ETA = the last MemAvailable over
 * minus that slope). Run by test_collectors.c. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "collectors.h"

/* ---- 5. exhaustion ETA ---- */

/* 192 MiB/s in 1 MiB chunks: fine-grained next to the 100 ms samples, and
 * steep next to the host's own drift (the residuals below measure it). */
#define RAMP_CHUNK MiB
#define RAMP_PER_SECOND 192
#define RAMP_PERIOD_NS (1000000000LL / RAMP_PER_SECOND)
#define RAMP_CHUNKS (RAMP_PER_SECOND * 10)
#define RAMP_HORIZON_S 5
/* The daemon's sample interval, set in its config and read back. */
#define SAMPLE_MS 100
#define MAX_SAMPLES 512
/* How many of MemAvailable's sample-to-sample steps one sample may differ by. */
#define NOISE_SIGMAS 4.0
/* The comparison must tell an ETA 10% off from a right one; when the host's
 * noise makes it looser, the ramp runs again rather than the bound widening. */
#define MAX_REL_TOL 0.10
#define ETA_ATTEMPTS 4
/* Windows ending this long after the free fit a horizon with the free well
 * inside it: about 1 GB back within 5 s lifts the fit by 100 MiB/s or more
 * (least squares over the ramp's end and the free), which no host drift
 * outweighs. Earlier or later, the ramp or the drift decides the sign. */
#define FREE_IN_HORIZON_FROM_S 1.5
#define FREE_IN_HORIZON_TO_S 4.0

struct ramp_report {
	int32_t step; /* chunks touched so far; -1 once freed */
	int32_t pad;
	int64_t mono_ns;
};

/* Joins cg, and on 'g' touches RAMP_CHUNK every RAMP_PERIOD_NS (reporting
 * each) until 'f' or RAMP_CHUNKS; then frees everything, reports step -1 and
 * exits when cmd closes. */
static void ramp_child(const void *arg, int cmd, int rep)
{
	struct pollfd pfd = { .fd = cmd, .events = POLLIN };
	struct ramp_report r = { 0, 0, 0 };
	struct timespec ts;
	int64_t start;
	char c, *p;

	child_init();
	if (memcg_join(arg) < 0)
		_exit(7);
	if (read(cmd, &c, 1) != 1)
		_exit(2);
	p = mmap(NULL, RAMP_CHUNK * RAMP_CHUNKS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		_exit(3);
	start = mono_ns();
	for (int i = 0; i < RAMP_CHUNKS && poll(&pfd, 1, 0) == 0; i++) {
		int64_t next = start + (int64_t)(i + 1) * RAMP_PERIOD_NS;

		touch(p + (size_t)i * RAMP_CHUNK, RAMP_CHUNK);
		r.step = i + 1;
		r.mono_ns = mono_ns();
		if (write(rep, &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(4);
		ts.tv_sec = next / 1000000000LL;
		ts.tv_nsec = next % 1000000000LL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	if (read(cmd, &c, 1) != 1)
		_exit(5);
	munmap(p, RAMP_CHUNK * RAMP_CHUNKS);
	r.step = -1;
	r.mono_ns = mono_ns();
	if (write(rep, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(6);
	while (read(cmd, &c, 1) > 0)
		;
	_exit(0);
}

struct own_fit {
	double slope; /* bytes/s */
	double sigma; /* spread of the samples around the line, bytes */
	double step;  /* spread of that spread's change from one sample to the next, bytes */
	double sxx;   /* the samples' spread in time, s^2 */
	int n;
};

/* The daemon's fit on the test's samples: least squares over those no older
 * than horizon_s before now (monotonic ns), and how far they scatter. */
static struct own_fit fit_horizon(const int64_t *t_ns, const double *v, int n, double now, double horizon_s)
{
	double k = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, ss = 0, sd = 0, mx, my, prev = NAN;
	struct own_fit f = { NAN, NAN, NAN, NAN, 0 };

	for (int i = 0; i < n; i++) {
		double x = ((double)t_ns[i] - now) / 1e9;

		if (x < -horizon_s || x > 0)
			continue;
		k++;
		sx += x;
		sy += v[i];
		sxx += x * x;
		sxy += x * v[i];
	}
	f.n = (int)k;
	if (k < 10)
		return f;
	mx = sx / k;
	my = sy / k;
	f.sxx = sxx - k * mx * mx;
	f.slope = (sxy - k * mx * my) / f.sxx;
	for (int i = 0; i < n; i++) {
		double x = ((double)t_ns[i] - now) / 1e9, res;

		if (x < -horizon_s || x > 0)
			continue;
		res = v[i] - (my + f.slope * (x - mx));
		ss += res * res;
		if (!isnan(prev))
			sd += (res - prev) * (res - prev);
		prev = res;
	}
	f.sigma = sqrt(ss / (k - 2));
	f.step = sqrt(sd / (k - 1));
	return f;
}

/* Waits (bounded) until MemAvailable holds within 16 MiB for 2 s: the tests
 * before this one leave the host freeing gigabytes of cache and anonymous
 * memory for a while, which a ramp of ~130 MB/s cannot be told apart from
 * (seen in CI: a rising MemAvailable while the child consumed). */
static void wait_memavailable_quiet(void)
{
	const double band = 16.0 * MiB;
	int64_t deadline = mw_mono_ms() + 60000;
	double lo = (double)meminfo_bytes("MemAvailable"), hi = lo;
	int steady = 0;

	while (mw_mono_ms() < deadline) {
		double v;

		mw_sleep_ms(250);
		v = (double)meminfo_bytes("MemAvailable");
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		if (hi - lo > band) {
			lo = hi = v;
			steady = 0;
		} else if (++steady >= 8) {
			note("exhaustion: MemAvailable steady within %.1f MiB for 2 s before the ramp", (hi - lo) / MiB);
			return;
		}
	}
	note("exhaustion: MemAvailable still moving by more than 16 MiB after 60 s; ramping anyway");
}

/* A window's end (memwatch_window_end_timestamp_seconds, realtime) on the
 * monotonic clock of the samples; *now_mono is the moment of the conversion. */
static double window_end_mono(const char *body, double *now_mono)
{
	double end = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);

	*now_mono = (double)mono_ns();
	return *now_mono - (realtime_now() - end) * 1e9;
}

/* One ramp: samples MemAvailable every SAMPLE_MS from the ramp's first
 * chunk until a window ends a horizon (and 200 ms) into it, compares that
 * window's slope and ETA with the test's own fit. Returns false, comparing
 * nothing, when the host's noise leaves the comparison looser than
 * MAX_REL_TOL. */
static bool eta_ramp(struct mw_daemon *d, const char *cg, int attempt, int64_t *freed_mono)
{
	static struct ramp_report reps[RAMP_CHUNKS + 1];
	static int64_t own_t[MAX_SAMPLES];
	static double own_avail[MAX_SAMPLES];
	double slope, eta, available, end_mono, published, rate, eta_ref, m_lo, m_hi, d_m, a_lo, a_hi, lo, hi;
	int n = 0, n_reps = 0, last = -1, i0, i1, cmd, rep, st;
	struct own_fit f;
	int64_t next;
	pid_t child;
	char *body;

	child = spawn_child(ramp_child, cg, &cmd, &rep);
	write_byte(cmd, 'g');
	read_exact(rep, &reps[n_reps++], sizeof(reps[0]), WORKLOAD_TIMEOUT_MS, "the ramp's first chunk");
	for (next = mono_ns();; next += SAMPLE_MS * 1000000LL) {
		struct timespec ts = { .tv_sec = next / 1000000000LL, .tv_nsec = next % 1000000000LL };

		ck_assert_msg(n < MAX_SAMPLES, "no window ended %d s into the ramp", RAMP_HORIZON_S);
		own_t[n] = mono_ns();
		own_avail[n++] = (double)meminfo_bytes("MemAvailable");
		body = mw_scrape(d->port);
		ck_assert_ptr_nonnull(body);
		end_mono = window_end_mono(body, &published);
		if (end_mono >= (double)reps[0].mono_ns + (RAMP_HORIZON_S + 0.2) * 1e9)
			break;
		free(body);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		/* Behind after a slow scrape: sample at once, then every interval again. */
		if (mono_ns() > next + SAMPLE_MS * 1000000LL)
			next = mono_ns() - SAMPLE_MS * 1000000LL;
	}
	ck_assert_msg(metric_or_fail(body, "memwatch_sample_interval_seconds", NULL) == SAMPLE_MS / 1000.0,
		      "the daemon samples every %g s, the test every %d ms",
		      metric_or_fail(body, "memwatch_sample_interval_seconds", NULL), SAMPLE_MS);
	slope = metric_or_fail(body, "memwatch_memory_available_slope_bytes_per_second", NULL);
	eta = metric_or_fail(body, "memwatch_memory_exhaustion_eta_seconds", NULL);
	available = metric_or_fail(body, "memwatch_memory_available_bytes", NULL);
	free(body);

	write_byte(cmd, 'f');
	do
		read_exact(rep, &reps[n_reps], sizeof(reps[0]), WORKLOAD_TIMEOUT_MS, "a ramp report");
	while (reps[n_reps++].step != -1 && n_reps <= RAMP_CHUNKS);
	*freed_mono = reps[n_reps - 1].mono_ns;
	close(cmd);
	st = wait_child(child, 10000, "the ramp child");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the ramp child ended with status 0x%x", st);
	close(rep);
	n_reps--; /* the -1 */
	ck_assert_msg((double)reps[n_reps - 1].mono_ns >= end_mono,
		      "the ramp stopped (%d chunks) before the window's end: the horizon is not all ramp", n_reps);
	/* The child's actual pace over the horizon. */
	for (i0 = 0; i0 < n_reps - 1 && (double)reps[i0].mono_ns < end_mono - RAMP_HORIZON_S * 1e9; i0++)
		;
	for (i1 = n_reps - 1; i1 > 0 && (double)reps[i1].mono_ns > end_mono; i1--)
		;
	ck_assert_msg(i1 > i0, "no ramp chunks within the horizon of the window (%d..%d)", i0, i1);
	rate = (double)(reps[i1].step - reps[i0].step) * (double)RAMP_CHUNK /
	       ((double)(reps[i1].mono_ns - reps[i0].mono_ns) / 1e9);

	/* The daemon fits the samples of the horizon before the moment it
	 * collects the window, somewhere between the window's end and the test
	 * seeing it published: the test fits every set of its own samples such a
	 * moment can select (they change as a sample crosses either edge). */
	f = fit_horizon(own_t, own_avail, n, end_mono, RAMP_HORIZON_S);
	m_lo = m_hi = -f.slope;
	for (int i = 0; i < n; i++)
		for (int edge = 0; edge < 2; edge++) {
			double c = (double)own_t[i] + edge * RAMP_HORIZON_S * 1e9 + 1;
			struct own_fit g;

			if (c <= end_mono || c > published)
				continue;
			g = fit_horizon(own_t, own_avail, n, c, RAMP_HORIZON_S);
			m_lo = fmin(m_lo, -g.slope);
			m_hi = fmax(m_hi, -g.slope);
			f.step = fmax(f.step, g.step);
		}
	ck_assert_msg(f.n >= RAMP_HORIZON_S * 1000 / SAMPLE_MS / 2, "only %d samples of MemAvailable within the horizon",
		      f.n);
	ck_assert_msg(f.slope < 0, "MemAvailable read here rose at %.0f B/s while a child consumed %.0f B/s", f.slope,
		      rate);
	for (int i = 0; i < n; i++)
		if ((double)own_t[i] <= end_mono)
			last = i;
	/* What remains between the daemon's samples and the test's is what
	 * MemAvailable does within one sample interval: each of its samples is
	 * within NOISE_SIGMAS steps of the test's line at the same moment, which
	 * moves a fit by NOISE_SIGMAS * step / sqrt(sxx). Its last sample, which
	 * the ETA divides, was taken at that moment too: the test's last sample
	 * moved along its line to the window's end, and to the publication. */
	d_m = NOISE_SIGMAS * f.step / sqrt(f.sxx);
	a_hi = own_avail[last] + f.slope * (end_mono - (double)own_t[last]) / 1e9 + NOISE_SIGMAS * f.step;
	a_lo = own_avail[last] + f.slope * (published - (double)own_t[last]) / 1e9 - NOISE_SIGMAS * f.step;
	eta_ref = (a_lo + a_hi) / 2 / ((m_lo + m_hi) / 2);
	lo = a_lo / (m_hi + d_m);
	hi = a_hi / (m_lo - d_m);
	note("exhaustion, ramp %d: daemon slope %.0f B/s, ETA %.2f s (available %.0f); own fits %.0f..%.0f B/s over %d "
	     "samples (residuals %.2f MiB, from one sample to the next %.2f MiB), own ETA %.2f s, allowed %.2f..%.2f s "
	     "(%.1f%%); the child consumed %.0f B/s",
	     attempt, slope, eta, available, -m_hi, -m_lo, f.n, f.sigma / MiB, f.step / MiB, eta_ref, lo, hi,
	     100 * (hi / eta_ref - 1), rate);
	if (m_lo - d_m <= 0 || hi / eta_ref - 1 > MAX_REL_TOL)
		return false;
	ck_assert_msg(-slope >= m_lo - d_m && -slope <= m_hi + d_m,
		      "memwatch_memory_available_slope_bytes_per_second is %.0f, the test's fits of MemAvailable over the "
		      "same horizon %.0f..%.0f B/s, give or take %.0f B/s of noise",
		      slope, -m_hi, -m_lo, d_m);
	ck_assert_msg(eta >= lo && eta <= hi,
		      "memwatch_memory_exhaustion_eta_seconds is %.3f s, the test's own MemAvailable and fit give %.3f s "
		      "(allowed %.3f..%.3f s from their noise)",
		      eta, eta_ref, lo, hi);
	/* The child drives it, but the rest of this shared host moves MemAvailable
	 * too (measured: the host's MemAvailable fell at 74% of the child's pace
	 * while both fits agreed within 2%): its pace only bounds it loosely. */
	ck_assert_msg(-slope >= rate / 2 && -slope <= rate * 2,
		      "memwatch_memory_available_slope_bytes_per_second is %.0f, the child consumed %.0f bytes/s: more "
		      "than a factor of 2 apart",
		      slope, rate);
	return true;
}

START_TEST(test_exhaustion_eta)
{
	double slope = NAN, eta = NAN, end_mono;
	bool compared = false, recovered = false;
	int64_t freed_mono = 0;
	struct mw_daemon *d;
	int judged = 0;
	char cg[256];
	char *body;

	ck_assert_msg(meminfo_bytes("MemAvailable") > RAMP_CHUNK * RAMP_CHUNKS + 4 * GiB,
		      "MemAvailable is too low for a %llu MiB ramp", RAMP_CHUNK * RAMP_CHUNKS / MiB);
	memcg_path(cg, sizeof(cg), "-eta");
	memcg_create(cg, RAMP_CHUNK * RAMP_CHUNKS + 64 * MiB);
	/* Windows at rest would last up to quiet_read_interval (5 s): after the
	 * free, the one that ends with the free well inside the horizon would be
	 * skipped (seen in CI, with the host's drift deciding the sign after). */
	d = start_with_config("[daemon]\nwindow = 500ms\nsample_interval = 100ms\nquiet_read_interval = 0\n"
			      "[collector.meminfo]\nexhaustion_horizon = 5s\n");
	for (int attempt = 1; attempt <= ETA_ATTEMPTS && !compared; attempt++) {
		wait_memavailable_quiet();
		compared = eta_ramp(d, cg, attempt, &freed_mono);
	}
	ck_assert_msg(compared, "in %d ramps, the host's noise on MemAvailable never let the test tell an ETA %.0f%% off "
		      "(see the residuals above)", ETA_ATTEMPTS, 100 * MAX_REL_TOL);

	for (;;) {
		double now_mono;

		body = next_window(d);
		end_mono = window_end_mono(body, &now_mono);
		slope = metric_or_fail(body, "memwatch_memory_available_slope_bytes_per_second", NULL);
		eta = metric_or_fail(body, "memwatch_memory_exhaustion_eta_seconds", NULL);
		free(body);
		if (end_mono > (double)freed_mono + FREE_IN_HORIZON_TO_S * 1e9)
			break;
		if (end_mono < (double)freed_mono + FREE_IN_HORIZON_FROM_S * 1e9)
			continue;
		note("exhaustion: a window ending %.2f s after the free: slope %g, ETA %g",
		     (end_mono - (double)freed_mono) / 1e9, slope, eta);
		judged++;
		/* One is enough: a burst of the host's own (seen here once: -60 MB/s
		 * 1.9 s after the free) may outweigh the free in a single window. */
		recovered |= slope > 0 && isinf(eta) && eta > 0;
	}
	ck_assert_msg(judged > 0, "no window ended %.1f to %.1f s after the child freed its memory (the last %.2f s after)",
		      FREE_IN_HORIZON_FROM_S, FREE_IN_HORIZON_TO_S, (end_mono - (double)freed_mono) / 1e9);
	ck_assert_msg(recovered, "none of the %d windows with the free inside the horizon had a rising fit and an ETA of "
		      "+Inf (see above)", judged);
	memcg_remove(cg);
	mw_assert_clean_stop(d);
}
END_TEST

void collectors_add_exhaustion_tests(Suite *s)
{
	collectors_add_test(s, "exhaustion_eta", test_exhaustion_eta, 300);
}
