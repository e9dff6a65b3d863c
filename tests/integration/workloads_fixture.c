// SPDX-License-Identifier: GPL-2.0
/* What the per-workload view's tests share (workloads_test.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "workloads_test.h"

#define PYTHON_PATH "/usr/bin/python3"
#define PY_TIMEOUT_MS 30000

const char *const wl_classes[WL_FIELDS] = { "usage", "ratio", "limit", "eta",
					    "reclaims", "reclaim-seconds", "psi-some", "oom-kills" };

double wl_field(const struct wl_numbers *n, size_t i)
{
	const double v[WL_FIELDS] = { n->usage, n->ratio, n->limit, n->eta,
				      n->reclaims, n->reclaim_seconds, n->psi_some, n->oom_kills };

	return i < WL_FIELDS ? v[i] : NAN;
}

void wl_fixture_start(struct wl_fixture *f)
{
	char config[2048], file[1200];
	bool v1 = access(MEMCG_V1_ROOT "/cgroup.procs", F_OK) == 0;
	int r;

	memset(f, 0, sizeof(*f));
	memcg_create(&f->cg[0], "wl-a");
	memcg_create(&f->cg[1], "wl-b");
	/* A different limit for the second: 256 MiB. */
	snprintf(file, sizeof(file), "%s/%s", f->cg[1].path, v1 ? "memory.limit_in_bytes" : "memory.max");
	r = mw_write_text(file, "268435456");
	ck_assert_msg(r == 0, "cannot write 256 MiB to %s: %s", file, strerror(-r));
	for (int i = 0; i < 2; i++)
		snprintf(f->label[i], sizeof(f->label[i]), "%s",
			 f->cg[i].path + strlen(v1 ? MEMCG_V1_ROOT : CGROUP_V2_ROOT));
	/* history: room for every window a test looks at, however slow the browser. */
	snprintf(config, sizeof(config),
		 "# memwatchd per-workload view tests\n[daemon]\nwindow = 500ms\nquiet_read_interval = 0\nhistory = 240\n\n"
		 "[collector.memavail]\nmethod = procfs\n\n"
		 "[collector.cgroup]\ninclude = %s %s\ntop_k = 1000\n",
		 f->label[0], f->label[1]);
	f->d = start_daemon_with(config);
	sparse_create(f->sparse, sizeof(f->sparse), "wl-sparse");
	f->workers[0] = spawn_worker("mw-wl-read", WORK_READ, f->cg[0].procs, f->sparse);
	f->workers[1] = spawn_worker("mw-wl-touch", WORK_TOUCH, f->cg[1].procs, NULL);
}

void wl_fixture_stop(struct wl_fixture *f)
{
	stop_worker(f->workers[0]);
	stop_worker(f->workers[1]);
	mw_assert_clean_stop(f->d);
	memcg_remove(&f->cg[0]);
	memcg_remove(&f->cg[1]);
	drop_file(f->sparse);
}

char *wl_fetch_windows(int port, const char *tag)
{
	struct mw_http_response resp;
	char path[400];
	int r = mw_http_get(port, "/api/v1/windows", &resp);

	ck_assert_msg(r == 0 && resp.status == 200, "GET /api/v1/windows: r=%d status %d", r, resp.status);
	snprintf(path, sizeof(path), "%s/windows-%s.json", mw_tmp_root(), tag);
	ck_assert_msg(mw_write_file(path, resp.body) == 0, "cannot write %s", path);
	mw_http_response_free(&resp);
	return strdup(path);
}

/* Prints "seq has_prev usage ratio limit eta reclaims reclaim_s psi_some
 * oom_kills" for every window exporting the cgroup; the changes are the
 * window's value less the one before's (all of it after a fall: a restart). */
static const char py_numbers[] =
	"import json, sys\n"
	"d = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))\n"
	"label = sys.argv[2]\n"
	"ws = {w['seq']: w for w in d['windows']}\n"
	"def val(w, name, summed=False):\n"
	"    if w is None:\n"
	"        return None\n"
	"    v = [s['value'] for s in w['metrics'].get(name, [])\n"
	"         if s['labels'].get('cgroup') == label and s.get('value') is not None]\n"
	"    if not v:\n"
	"        return None\n"
	"    return sum(v) if summed else v[0]\n"
	"def change(seq, name):\n"
	"    a, b = val(ws.get(seq), name), val(ws.get(seq - 1), name)\n"
	"    if a is None or b is None:\n"
	"        return None\n"
	"    return a - b if a >= b else a\n"
	"for seq in sorted(ws):\n"
	"    w = ws[seq]\n"
	"    if val(w, 'memwatch_cgroup_info') is None:\n"
	"        continue\n"
	"    out = [val(w, 'memwatch_cgroup_memory_usage_bytes'), val(w, 'memwatch_cgroup_memory_usage_ratio'),\n"
	"           val(w, 'memwatch_cgroup_memory_limit_bytes'), val(w, 'memwatch_cgroup_memory_limit_eta_seconds'),\n"
	"           change(seq, 'memwatch_cgroup_reclaims_total'), change(seq, 'memwatch_cgroup_reclaim_seconds_total'),\n"
	"           change(seq, 'memwatch_cgroup_pressure_memory_some_seconds_total'),\n"
	"           val(w, 'memwatch_cgroup_oom_kills_total', True)]\n"
	"    print(seq, int(seq - 1 in ws), ' '.join('nan' if v is None else repr(float(v)) for v in out))\n";

size_t wl_numbers_all(const char *json_path, const char *label, struct wl_numbers *out, size_t max)
{
	char out_path[450], err_path[450], *text, *line, *save = NULL;
	const char *argv[] = { PYTHON_PATH, "-c", py_numbers, json_path, label, NULL };
	size_t n = 0;
	int st;

	snprintf(out_path, sizeof(out_path), "%s.numbers", json_path);
	snprintf(err_path, sizeof(err_path), "%s.err", json_path);
	st = run_bounded(argv, out_path, err_path, mw_tmp_root(), PY_TIMEOUT_MS);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *err = mw_read_file(err_path, NULL);

		fprintf(stderr, "---- python3 on %s ----\n%s\n----\n", json_path, err ? err : "");
		free(err);
		ck_abort_msg("python3 could not read %s (status 0x%x)", json_path, st);
	}
	text = mw_read_file(out_path, NULL);
	ck_assert_msg(text != NULL, "no output of python3 in %s", out_path);
	for (line = strtok_r(text, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save)) {
		struct wl_numbers *w = &out[n];
		unsigned long long seq;
		int has_prev;

		ck_assert_msg(sscanf(line, "%llu %d %lf %lf %lf %lf %lf %lf %lf %lf", &seq, &has_prev, &w->usage, &w->ratio,
				     &w->limit, &w->eta, &w->reclaims, &w->reclaim_seconds, &w->psi_some,
				     &w->oom_kills) == 10,
			      "python3 printed \"%s\"", line);
		w->seq = seq;
		w->has_prev = has_prev;
		n++;
	}
	free(text);
	return n;
}

struct wl_numbers wl_numbers_of(const char *json_path, const char *label, uint64_t seq)
{
	static struct wl_numbers all[512];
	size_t n = wl_numbers_all(json_path, label, all, sizeof(all) / sizeof(all[0]));

	for (size_t i = 0; i < n; i++)
		if (all[i].seq == seq) {
			ck_assert_msg(all[i].has_prev, "window %llu of /api/v1/windows has no window before it",
				      (unsigned long long)seq);
			return all[i];
		}
	ck_abort_msg("/api/v1/windows (%s) has no window %llu exporting %s", json_path, (unsigned long long)seq, label);
	return all[0];
}
