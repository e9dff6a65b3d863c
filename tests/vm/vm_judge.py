# SPDX-License-Identifier: GPL-2.0
"""Judging a tests/vm guest's run, scenario by scenario, from its serial
console: every daemon figure against the guest kernel's own count
(/proc/vmstat, /proc/meminfo, /proc/zoneinfo, tracefs histograms, dmesg)
and tests/expectations."""
import json
import os
import re
import sys

from vm_console import (blocks, compare_format, labelled, parse_events, parse_kv, parse_metrics,
                        scrape_meminfo, single, value)
from vm_guest import HOG_COMM, OOM_HOG_COMM
from vm_kernels import TRACEPOINTS, log

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "expectations"))
import expectations  # noqa: E402

# Scenario 4: the kernel's MemAvailable (fexit/kretprobe on si_mem_available)
# against /proc/meminfo's, at quiescence.
MEMAVAIL_TOLERANCE = 0.01
# Scenario 6: the counters method (computed in BPF) against MemAvailable.
COUNTERS_TOLERANCE = 0.02
# Scenario 7: direct compaction stalls the tracepoint method may not have put
# into its histogram yet at the scrape (threads still alive, see compaction_stalls).
OPEN_STALLS_MAX = 4


class Verdict:
    def __init__(self):
        self.rows = []

    def add(self, scenario, ok, detail):
        self.rows.append((scenario, bool(ok), detail))

    @property
    def ok(self):
        return bool(self.rows) and all(ok for _, ok, _ in self.rows)


TRACE_WHEN = ("baseline before", "baseline after", "reclaim before", "reclaim after")


def trace_hits(b, event, problems):
    """{when: hits} of a tracefs-counted event around the baseline and reclaim
    scrapes (init.sh trace_counts), or None (and a problem) when incomplete."""
    hits = {}
    for when in TRACE_WHEN:
        for line in b.get(f"trace {when}") or []:
            f = line.split()
            if len(f) == 3 and f[0] == event and f[1].isdigit():
                hits[when] = int(f[1])
                if f[2] != "0":
                    problems.append(f"{event} hist dropped {f[2]} at {when}")
    if len(hits) != len(TRACE_WHEN):
        problems.append(f"tracefs hits of {event} {hits}: incomplete")
        return None
    return hits


def judge(series, lines, rc, timed_out, host_release, host_fmt):
    v = Verdict()
    b, singles = blocks(lines)

    guest = (b.get("guest") or ["?"])[0]
    log(f"[{series}] guest kernel {guest}")

    # Tracepoint formats, printed, and compared with the host's.
    log(f"[{series}] tracepoint formats (differences from the host's {host_release}):")
    for tp in TRACEPOINTS:
        g = b.get(f"format {tp}")
        if g is not None and any("No such file" in l for l in g):
            g = None
        diffs = compare_format(host_fmt.get(tp), g)
        log(f"  {tp}: {'same as the host' if not diffs else '; '.join(diffs)}")
    for tp in TRACEPOINTS:
        log(f"  --- {tp} (guest {guest})")
        for line in b.get(f"format {tp}") or ["(not printed)"]:
            if line.strip():
                log(f"    {line if len(line) <= 160 else line[:160] + ' ...'}")

    abort = single(singles, "ABORT")
    if abort:
        v.add("boot", False, f"guest aborted: {abort}")
    # init.sh waits for a condition (a daemon's next window), never a fixed time.
    for marker in singles:
        if marker.startswith("WAIT TIMEOUT "):
            v.add("wait", False, marker[len("WAIT TIMEOUT "):])
    if "DONE" not in singles:
        v.add("boot", False, "timed out" if timed_out else f"guest stopped early (qemu rc {rc})")

    # (5) --check
    check = b.get("check")
    check_rc = single(singles, "check rc=")
    if check is None:
        v.add("5 check", False, "no --check output")
    else:
        log(f"[{series}] memwatchd --check (rc {check_rc}):")
        for line in check:
            log(f"  {line}")
        seen = expectations.parse_check_table("\n".join(check))
        summary = ", ".join(f"{n}={st}/{mode}" for n, (st, mode, _) in sorted(seen.items()))
        try:
            # The busybox guest evaluates no condition: every row for it is unconditional.
            want = expectations.expected("busybox-guest", guest, conditions={})
            problems = expectations.compare(want, seen)
        except expectations.NoExpectation as e:
            problems = [f"{e}: add rows to tests/expectations/collectors.tsv"]
        if check_rc != "0":
            problems.append(f"exit {check_rc}, want 0")
            for line in (b.get("check-log") or [])[-15:]:
                log(f"  log: {line}")
        ok = bool(seen) and not problems
        detail = summary + ("; " + "; ".join(problems) if problems else "; as in collectors.tsv")
        v.add("5 check", ok, detail)

    base = parse_metrics(b.get("metrics baseline"))
    rec = parse_metrics(b.get("metrics reclaim"))
    oom = parse_metrics(b.get("metrics oom"))
    vm_base = parse_kv(b.get("vmstat baseline"))
    vm_rec = parse_kv(b.get("vmstat reclaim"))
    vm_oom = parse_kv(b.get("vmstat oom"))
    for name in ("baseline", "reclaim", "compaction", "oom", "quiet"):
        status = [l for l in b.get(f"metrics {name}") or [] if l.startswith("# scrape exit ")]
        if not status or not status[-1].startswith("# scrape exit 0 fresh"):
            v.add(f"scrape {name}", False, status[-1][2:] if status else "no scrape")

    # (1) global direct reclaim
    if rec is None:
        v.add("1 direct reclaim", False, "no scrape after the reclaim hog")
    else:
        total = value(rec, "memwatch_direct_reclaim_total")
        count = value(rec, "memwatch_direct_reclaim_seconds_count")
        inf = value(rec, "memwatch_direct_reclaim_seconds_bucket", le="+Inf")
        hog = value(rec, "memwatch_process_direct_reclaims_total", comm=HOG_COMM)
        stalls = sum(vm_rec.get(k, 0) - vm_base.get(k, 0) for k in vm_rec if k.startswith("allocstall_"))
        base_total = value(base or [], "memwatch_direct_reclaim_total") or 0
        problems = []
        if not total:
            problems.append("memwatch_direct_reclaim_total is not > 0")
        if count != total or inf != total:
            problems.append(f"histogram _count {count} / +Inf bucket {inf} != total {total}")
        if not hog:
            problems.append(f'no memwatch_process_direct_reclaims_total{{comm="{HOG_COMM}"}}')
        # The reference is the kernel's own count of the tracepoint, around
        # the two scrapes; allocstall_* (which also counts a reclaim's retry
        # at the root, so it may be higher) is printed beside it.
        hits = trace_hits(b, "mm_vmscan_direct_reclaim_begin", problems)
        lohi = "?"
        if hits and total is not None:
            lo = hits["reclaim before"] - hits["baseline after"]
            hi = hits["reclaim after"] - hits["baseline before"]
            lohi = f"{lo}" + (f"..{hi}" if hi != lo else "")
            if not lo <= total - base_total <= hi:
                problems.append(f"daemon counted {total - base_total:g} stalls, tracefs mm_vmscan_direct_reclaim_begin "
                                f"{lohi} (allocstall_* +{stalls})")
            if stalls < lo:
                problems.append(f"/proc/vmstat allocstall_* +{stalls} below tracefs' {lohi}")
        v.add("1 direct reclaim", not problems,
              "; ".join(problems) or
              f"total {total:g} (= histogram count, tracefs mm_vmscan_direct_reclaim_begin +{lohi}, "
              f"allocstall_* +{stalls}), {HOG_COMM} {hog:g}, pages {value(rec, 'memwatch_direct_reclaim_pages_total') or 0:g}")

    # (2) kswapd: wakeups and wake-up requests against the guest kernel's own
    # count (tracefs hist triggers on the same tracepoints, read around each scrape).
    if rec is None:
        v.add("2 kswapd", False, "no scrape after the reclaim hog")
    else:
        problems, parts = [], []
        for metric, event in (("memwatch_kswapd_wakeups_total", "mm_vmscan_kswapd_wake"),
                              ("memwatch_kswapd_wakeup_requests_total", "mm_vmscan_wakeup_kswapd")):
            got = value(rec, metric)
            got0 = value(base or [], metric)
            hits = trace_hits(b, event, problems)
            if hits is None or got is None or got0 is None:
                problems.append(f"{metric}: {got0} -> {got}, tracefs hits {hits}: incomplete")
                continue
            lo = hits["reclaim before"] - hits["baseline after"]
            hi = hits["reclaim after"] - hits["baseline before"]
            delta = got - got0
            parts.append(f"{metric} +{delta:g}, tracefs {event} +{lo}" + (f"..{hi}" if hi != lo else ""))
            if not lo <= delta <= hi:
                problems.append(f"{metric} grew by {delta:g}, tracefs counted {lo}..{hi} {event}")
            if event == "mm_vmscan_kswapd_wake" and lo == 0:
                problems.append("the reclaim hog woke kswapd no time (tracefs): the scenario proved nothing")
        awake = value(rec, "memwatch_kswapd_awake_seconds_total")
        if not awake:
            problems.append(f"memwatch_kswapd_awake_seconds_total {awake}")
        v.add("2 kswapd", not problems, "; ".join(problems + parts) if problems else
              "; ".join(parts) + f"; awake {awake} s; pageoutrun +"
              f"{vm_rec.get('pageoutrun', 0) - vm_base.get('pageoutrun', 0)}")

    # (3) global OOM kill
    child = next((s for s in lines if s.startswith("memhog: child ")), None)
    alive = "daemon alive after oom" in singles
    problems = []
    if not child or not re.search(r" signal 9$", child):
        problems.append(f"hog not killed by SIGKILL ({child or 'no status line'})")
    if not alive:
        problems.append("daemon died")
    if oom is None:
        problems.append("daemon did not serve after the OOM kill")
    else:
        # The counter is exported from the first window on (0 before any kill).
        kills_before = value(rec or [], "memwatch_oom_kills_total")
        kills_after = value(oom, "memwatch_oom_kills_total")
        if kills_before is None or kills_after is None or kills_after - kills_before != 1:
            problems.append(f"memwatch_oom_kills_total {kills_before} -> {kills_after}, not +1")
    oom_kill = vm_oom.get("oom_kill", 0) - vm_rec.get("oom_kill", 0)
    if oom_kill != 1:
        problems.append(f"/proc/vmstat oom_kill +{oom_kill}, not +1")
    v.add("3 oom kill", not problems, "; ".join(problems) or
          f"{child}; daemon served after it; vmstat oom_kill +1; memwatch_oom_kills_total +1")
    judge_events(series, v, b, singles, child, guest)
    judge_oom_diagnosis(series, v, b, child, oom, guest)
    judge_memavail(series, v, b, singles, guest)
    judge_counters(series, v, b, singles, guest)
    judge_compaction(v, b, singles, rec, vm_rec, guest)

    exit_rc = single(singles, "daemon exit rc=")
    v.add("daemon exit", exit_rc == "0", f"SIGTERM -> exit {exit_rc}")
    if exit_rc != "0":
        for line in (b.get("daemon-log") or [])[-20:]:
            log(f"  daemon: {line}")
    return v


def compaction_stalls(name, before, after, vm_stalls, mode):
    """Problems and a summary of one daemon's direct compaction stalls between
    two scrapes, against the /proc/vmstat compact_stall delta read around the
    same interval (the guest is idle at both ends, so the two must be equal)."""
    if before is None or after is None:
        return [f"{name}: no scrape"], ""
    got = {}
    for metric in ("memwatch_compaction_stalls_total", "memwatch_compaction_stall_seconds_count"):
        a, z = value(before, metric), value(after, metric)
        if a is None or z is None:
            return [f"{name}: {metric} {a} -> {z}"], ""
        got[metric] = z - a
    total, count = got["memwatch_compaction_stalls_total"], got["memwatch_compaction_stall_seconds_count"]
    problems = []
    if total != vm_stalls:
        problems.append(f"{name} ({mode}) counted {total:g} stalls, /proc/vmstat compact_stall +{vm_stalls}")
    # fexit observes each stall as it returns. The tracepoint method puts a
    # stall into the histogram when its thread is seen leaving: the hog has
    # exited by the scrape, but a thread still alive (the daemons', init's)
    # whose allocation gave up after compacting keeps its last stall open, one
    # at most per thread: four allowed.
    if mode == "fexit" and count != total:
        problems.append(f"{name} ({mode}) histogram _count +{count:g} != stalls +{total:g}")
    if mode != "fexit" and not total - OPEN_STALLS_MAX <= count <= total:
        problems.append(f"{name} ({mode}) histogram _count +{count:g} for {total:g} stalls "
                        f"(at most {OPEN_STALLS_MAX} left open)")
    return problems, f"{name} ({mode}) +{total:g}, histogram +{count:g}"


def judge_compaction(v, b, singles, base, vm_base, guest):
    """(7) direct compaction stalls, forced by huge-page faults in a guest whose
    free memory was left in single-page holes (from the reclaim scrape to the
    compaction scrape): both methods against /proc/vmstat compact_stall, and
    zone compactions against a tracefs count of mm_compaction_end."""
    rec = parse_metrics(b.get("metrics compaction"))
    vm_rec = parse_kv(b.get("vmstat compaction"))
    vm_stalls = vm_rec.get("compact_stall", 0) - vm_base.get("compact_stall", 0)
    problems, parts = [], []
    hog_rc = single(singles, "compaction hog rc=")
    if hog_rc != "0":
        problems.append(f"compaction hog exit {hog_rc}")
    if "compact_stall" not in vm_rec:
        problems.append("no compact_stall in /proc/vmstat")
    elif vm_stalls == 0:
        problems.append("the compaction hog caused no direct compaction (compact_stall +0): the scenario proved nothing")
    mode = None
    try:
        mode = expectations.expected("busybox-guest", guest, conditions={})["compaction"]["mode"]
    except (expectations.NoExpectation, KeyError) as e:
        problems.append(f"no compaction row for {guest}: {e}")
    p, summary = compaction_stalls("daemon", base, rec, vm_stalls, mode)
    problems += p
    parts.append(summary)
    p, summary = compaction_stalls("counters daemon", parse_metrics(b.get("metrics counters-reclaim")),
                                   parse_metrics(b.get("metrics counters-compaction")), vm_stalls, "tracepoint")
    problems += p
    parts.append(summary)
    # Every zone compaction, whoever ran it, against tracefs's count of the same tracepoint.
    # A zone compaction outside kcompactd is the daemon's task="direct" (or
    # "manual", for a write to compact_memory: none here); tracefs counts them
    # by the task that ran them.
    hits, task_hits = {}, {}
    for when in ("reclaim before", "reclaim after", "compaction before", "compaction after"):
        for line in b.get(f"trace {when}") or []:
            f = line.split()
            if len(f) == 3 and f[0] == "mm_compaction_end" and f[1].isdigit():
                hits[when] = int(f[1])
            if len(f) == 2 and f[0] == "mm_compaction_end_tasks" and f[1].isdigit():
                task_hits[when] = int(f[1])

    def runs_delta(task=None):
        labels = {"task": task} if task else {}
        a, z = value(base or [], "memwatch_compaction_runs_total", **labels), \
            value(rec or [], "memwatch_compaction_runs_total", **labels)
        return None if a is None or z is None else z - a
    runs = runs_delta()
    direct = runs_delta("direct") or 0
    in_tasks = direct + (runs_delta("manual") or 0)
    rounds = max((int(m.group(1)) for s in singles
                  for m in [re.match(r"compaction hog: .*, round (\d+)$", s)] if m), default=0)
    if len(hits) != 4 or len(task_hits) != 4 or runs is None:
        problems.append(f"zone runs +{runs}, tracefs mm_compaction_end hits {hits}, in tasks {task_hits}: incomplete")
    else:
        lo = hits["compaction before"] - hits["reclaim after"]
        hi = hits["compaction after"] - hits["reclaim before"]
        if not lo <= runs <= hi:
            problems.append(f"memwatch_compaction_runs_total grew by {runs:g}, tracefs counted {lo}..{hi}")
        tlo = task_hits["compaction before"] - task_hits["reclaim after"]
        thi = task_hits["compaction after"] - task_hits["reclaim before"]
        if not tlo <= in_tasks <= thi:
            problems.append(f'task="direct" and "manual" runs grew by {in_tasks:g}, '
                            f"tracefs counted {tlo}..{thi} outside kcompactd")
        if vm_stalls and not direct:
            problems.append(f'no zone compaction with task="direct" while compact_stall grew, '
                            f"in {rounds} rounds of the hog")
        parts.append(f"zone runs +{runs:g} (direct +{direct:g}), tracefs mm_compaction_end +{lo}"
                     + (f"..{hi}" if hi != lo else "") + f" (outside kcompactd +{tlo}"
                     + (f"..{thi}" if thi != tlo else "") + f"), hog rounds {rounds}")
    v.add("7 compaction", not problems, "; ".join(problems + parts) if problems else
          f"vmstat compact_stall +{vm_stalls}; " + "; ".join(parts))


def sampler_mode(guest):
    """The meminfo collector's mode on this guest's kernel in the table: bpf-cpu-clock, bpf-timer or procfs."""
    try:
        row = expectations.expected("busybox-guest", guest, conditions={}).get("meminfo")
    except expectations.NoExpectation:
        return None
    return row["mode"] if row else None


def judge_events(series, v, b, singles, child, guest):
    """(3, continued) /api/v1/events after the OOM kill: an oom_kill event for the
    victim (its comm, and the pid memhog reported), and the kernel's own available
    figure (or the in-kernel sampler's) on direct reclaim events."""
    fetch = single(singles, "events oom exit")
    log(f"[{series}] /api/v1/events after the OOM kill: exit {fetch}")
    events, why = parse_events(b.get("events oom"))
    if events is None:
        v.add("3 oom event", False, f"/api/v1/events {why} (exit {fetch})")
        return
    kinds = {}
    for e in events:
        kinds[e.get("kind")] = kinds.get(e.get("kind"), 0) + 1
    log(f"[{series}]   {len(events)} events: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=str)))
    m = re.search(r"^memhog: child (\d+) signal 9$", child or "")
    victim_pid = int(m.group(1)) if m else None
    kills = [e for e in events if e.get("kind") == "oom_kill"]
    for e in kills:
        log(f"[{series}]   {json.dumps(e)}")
    problems = []
    mine = [e for e in kills if e.get("comm") == OOM_HOG_COMM]
    if not kills:
        problems.append("no oom_kill event")
    elif not mine:
        problems.append(f"no oom_kill event with comm {OOM_HOG_COMM!r} (comms: "
                        + ", ".join(repr(e.get("comm")) for e in kills) + ")")
    elif victim_pid is not None and not any(e.get("pid") == victim_pid for e in mine):
        problems.append(f"oom_kill event pid {', '.join(str(e.get('pid')) for e in mine)}, "
                        f"memhog reported the victim as {victim_pid}")
    reclaim = [e for e in events if e.get("kind") == "direct_reclaim"]
    sources = {}
    for e in reclaim:
        sources[e.get("available_source")] = sources.get(e.get("available_source"), 0) + 1
    src_text = ", ".join(f"{k} {n}" for k, n in sorted(sources.items(), key=str))
    # The kernel's own figure, or where the meminfo collector samples in the
    # kernel (bpf-cpu-clock or bpf-timer), the sampler's computation when that is newer.
    allowed = ("fexit", "kprobe") + (("counters",) if (sampler_mode(guest) or "").startswith("bpf-") else ())
    kernel_src = [e for e in reclaim if e.get("available_source") in allowed]
    if reclaim and not kernel_src:
        problems.append(f"no direct_reclaim event has available_source {' or '.join(allowed)} ({src_text})")
    elif len(kernel_src) < len(reclaim):
        problems.append(f"direct_reclaim events with available_source other than {' or '.join(allowed)} ({src_text})")
    if problems:
        v.add("3 oom event", False, "; ".join(problems))
        return
    e = next((e for e in mine if e.get("pid") == victim_pid), mine[0])
    avail = e.get("available_bytes")
    v.add("3 oom event", True,
          f"oom_kill comm {e.get('comm')} pid {e.get('pid')}"
          + (" (= memhog's child)" if victim_pid is not None else " (victim pid not reported)")
          + (f", available {avail / 2**20:.1f} MiB ({e.get('available_source')})"
             if isinstance(avail, (int, float)) else f", available {avail} ({e.get('available_source')})")
          + (f"; direct_reclaim events {len(reclaim)}, available_source {src_text}" if reclaim
             else "; no direct_reclaim event in the history"))


KILLED_LINE = re.compile(r"Killed process (\d+) \(([^)]*)\) total-vm:(\d+)kB, anon-rss:(\d+)kB, "
                         r"file-rss:(\d+)kB, shmem-rss:(\d+)kB.* oom_score_adj:(-?\d+)")
OOM_KILL_LINE = re.compile(r"oom-kill:constraint=(CONSTRAINT_\w+),.*,pid=(\d+),")
SCOPE_OF_CONSTRAINT = {"CONSTRAINT_NONE": "global", "CONSTRAINT_MEMCG": "memcg",
                       "CONSTRAINT_CPUSET": "cpuset", "CONSTRAINT_MEMORY_POLICY": "mempolicy"}


def judge_oom_diagnosis(series, v, b, child, oom, guest):
    """(3, continued) the whole guest ran out: the oom_kill event's scope, RSS and
    oom_score_adj against the kernel's own oom-kill lines (dmesg), and where
    each part came from against tests/expectations/kill_fields.tsv."""
    problems, notes = [], []
    m = re.search(r"^memhog: child (\d+) signal 9$", child or "")
    victim = int(m.group(1)) if m else None
    dmesg = b.get("dmesg-oom") or []
    killed = [KILLED_LINE.search(l) for l in dmesg]
    killed = [k for k in killed if k and int(k.group(1)) == victim]
    constraint = [OOM_KILL_LINE.search(l) for l in dmesg]
    constraint = [c.group(1) for c in constraint if c and int(c.group(2)) == victim]
    events, why = parse_events(b.get("events oom"))
    mine = [e for e in events or [] if e.get("kind") == "oom_kill" and e.get("pid") == victim]
    seen = {lab.get("feature"): lab.get("source") for lab in labelled(oom, "memwatch_oom_feature_info")}
    try:
        want_fields = expectations.expected_kill_fields("busybox-guest", guest)
        problems += expectations.compare_kill_fields(want_fields, seen)
        notes.append("features " + ", ".join(f"{f}={s}" for f, s in sorted(seen.items())) + " as in kill_fields.tsv")
    except expectations.NoExpectation as ex:
        want_fields = {}
        problems.append(str(ex))
    # A pid-only mark_victim (5.10) gives no task to read: the fields stay null.
    no_task = want_fields.get("victim_rss") == "none"
    if victim is None or not killed or not constraint:
        problems.append(f"no 'Killed process' and oom-kill lines for the victim {victim} in dmesg")
    elif not mine:
        problems.append(f"no oom_kill event for pid {victim} ({why or 'events parsed'})")
    else:
        e, k = mine[0], killed[0]
        want = {"scope": SCOPE_OF_CONSTRAINT.get(constraint[0]), "anon_rss_bytes": int(k.group(4)) * 1024,
                "file_rss_bytes": int(k.group(5)) * 1024, "shmem_rss_bytes": int(k.group(6)) * 1024,
                "oom_score_adj": int(k.group(7)), "oom_cgroup": None}
        for key, w in want.items():
            if no_task and key != "scope" and key != "oom_cgroup":
                if e.get(key) is not None:
                    problems.append(f"event {key} {e.get(key)!r}, want null (victim_rss none in kill_fields.tsv)")
            elif e.get(key) != w:
                problems.append(f"event {key} {e.get(key)!r}, the kernel's lines say {w!r}")
        notes.append(f"scope {e.get('scope')} ({e.get('scope_source')}; kernel {constraint[0]}), "
                     + ("RSS and oom_score_adj null (victim_rss none)" if no_task else
                        f"anon/file/shmem {k.group(4)}/{k.group(5)}/{k.group(6)} kB, oom_score_adj {k.group(7)}")
                     + " as in dmesg")
    log(f"[{series}] oom diagnosis: " + "; ".join(problems + notes))
    v.add("3 oom diagnosis", not problems, "; ".join(problems) or "; ".join(notes))


def expected_memavail(environment, guest, state, mode, reason):
    """Mismatches of memavail's state, mode and reason with the table's row."""
    try:
        want = expectations.expected(environment, guest, conditions={})
    except expectations.NoExpectation as e:
        return [f"{e}: add rows to tests/expectations/collectors.tsv"]
    if "memavail" not in want:
        return [f"tests/expectations/collectors.tsv has no memavail row for {environment} on {guest}"]
    return expectations.compare({"memavail": want["memavail"]}, {"memavail": (state, mode, reason)})


def judge_memavail(series, v, b, singles, guest):
    """(4) memavail in fexit (or kprobe) mode, and at quiescence its figure, the last
    si_mem_available() return, within MEMAVAIL_TOLERANCE of /proc/meminfo's
    MemAvailable read right before and right after the scrape."""
    kp = b.get("check-kprobe")
    kp_row = next((l.split(None, 3) for l in kp or [] if l.startswith("memavail ")), None)
    kp_text = (f"forced method=kprobe: {kp_row[1]}/{kp_row[2]}"
               + (f" ({kp_row[3]})" if len(kp_row) > 3 else "")
               + f", --check exit {single(singles, 'check-kprobe rc=')}") if kp_row else "forced kprobe: no --check output"
    log(f"[{series}] memavail {kp_text}")
    fx_row = next((l.split(None, 3) for l in b.get("check-fexit") or [] if l.startswith("memavail ")), None)
    if fx_row:  # for the record, not judged
        log(f"[{series}] memavail forced method=fexit: {' '.join(fx_row[1:])}, "
            f"--check exit {single(singles, 'check-fexit rc=')}")

    log(f"[{series}] quiet scrape after {single(singles, 'quiet scrape after')}"
        " (kept when /proc/meminfo did not move by more than 0.1% across it;"
        " after the last try, the one across which it moved least)")
    quiet = parse_metrics(b.get("metrics quiet"))
    if quiet is None:
        v.add("4 memavail", False, "no scrape at quiescence")
        return
    problems = []
    info = labelled(quiet, "memwatch_collector_info", collector="memavail")
    mode = info[0].get("mode") if info else None
    state = info[0].get("state") if info else None
    if not info:
        problems.append('no memwatch_collector_info{collector="memavail"}')
    else:
        problems += expected_memavail("busybox-guest", guest, state, mode, info[0].get("reason") or "")
    kernel = value(quiet, "memwatch_memory_available_kernel_bytes")
    sampled = value(quiet, "memwatch_memory_available_bytes")
    around = scrape_meminfo(b.get("metrics quiet"))
    text = ""
    if kernel is None:
        problems.append("no memwatch_memory_available_kernel_bytes")
    if not around or not all(around):
        problems.append("no /proc/meminfo MemAvailable read around the scrape")
    if kernel is not None and around and all(around):
        diffs = [(kernel - m) / m for m in around]
        worst = max(abs(d) for d in diffs)
        text = (f"kernel (si_mem_available) {kernel:.0f} B, /proc/meminfo MemAvailable "
                f"{around[0]} B before / {around[1]} B after the scrape: "
                f"{diffs[0] * 100:+.3f}% / {diffs[1] * 100:+.3f}%")
        log(f"[{series}] memavail at quiescence: {text}"
            + (f"; daemon's sampled MemAvailable {sampled:.0f} B" if sampled is not None else ""))
        if worst > MEMAVAIL_TOLERANCE:
            problems.append(f"{text}: more than {MEMAVAIL_TOLERANCE * 100:g}% apart")
    v.add("4 memavail", not problems,
          "; ".join(problems + [kp_text]) if problems else f"mode {mode}, {state}; {text}; {kp_text}")


def zoneinfo_reserve_pages(text_lines, min_free_pages=None):
    """calculate_totalreserve_pages() from a printed /proc/zoneinfo: per zone the
    largest lowmem reserve against the zones above it plus the high watermark
    (without boost), at most the managed pages. Where the file prints no
    boost (5.10), a zone's boost is its min above its share of
    vm.min_free_kbytes (min_free_pages), as __setup_per_zone_wmarks() sets it."""
    zones, zone, prev_node, index = [], None, None, -1
    for line in text_lines or []:
        m = re.match(r"^Node (\d+), zone\s+(\S+)", line)
        if m:
            node = int(m.group(1))
            index = index + 1 if node == prev_node else 0
            prev_node = node
            zone = {"index": index, "name": m.group(2), "min": 0, "high": 0, "boost": None, "managed": 0,
                    "protection": [], "seen": set()}
            zones.append(zone)
            continue
        if zone is None:
            continue
        words = line.split()
        if len(words) == 2 and words[0] in ("min", "high", "boost", "managed") and words[1].isdigit():
            if words[0] not in zone["seen"]:
                zone[words[0]] = int(words[1])
                zone["seen"].add(words[0])
        elif words and words[0] == "protection:":
            zone["protection"] = [int(x) for x in re.findall(r"\d+", line)]
    lowmem = sum(z["managed"] for z in zones if z["name"] != "HighMem")
    total = 0
    for z in zones:
        boost = z["boost"]
        if boost is None:
            boost = 0
            if min_free_pages and lowmem:
                share = (min(max(z["managed"] // 1024, 32), 128) if z["name"] == "HighMem"
                         else min_free_pages * z["managed"] // lowmem)
                boost = max(z["min"] - share, 0)
        reserve = max(z["protection"][z["index"]:] or [0]) + max(z["high"] - boost, 0)
        total += min(reserve, z["managed"])
    return total


def judge_counters(series, v, b, singles, guest):
    """(6) memavail forced to the counters method: in use (it agrees with
    MemAvailable on a stock kernel), within COUNTERS_TOLERANCE of MemAvailable
    at quiescence, its figure on the direct reclaim events, and the total
    reserve equal to what /proc/zoneinfo implies, followed through a
    min_free_kbytes change and back."""
    problems, notes = [], []
    quiet = parse_metrics(b.get("metrics counters-quiet"))
    if quiet is None:
        v.add("6 counters", False, "no scrape of the counters daemon")
        return
    info = labelled(quiet, "memwatch_collector_info", collector="memavail")
    mode = info[0].get("mode") if info else None
    state = info[0].get("state") if info else None
    reason = info[0].get("reason") if info else None
    # Kernels without kmem:mm_setup_per_zone_wmarks re-read the reserve every
    # window instead: which kernels those are is in the expectation table.
    hook = state == "active"
    wrong = expected_memavail("busybox-guest-counters", guest, state, mode, reason or "")
    problems += wrong
    if not wrong and not hook:
        notes.append(f"degraded: {reason}")
    computed = value(quiet, "memwatch_memory_available_computed_bytes")
    around = scrape_meminfo(b.get("metrics counters-quiet"))
    if computed is None or not around or not all(around):
        problems.append("no computed figure or no MemAvailable around the scrape")
    else:
        diffs = [(computed - m) / m for m in around]
        notes.append(f"computed {computed / 2**20:.1f} MiB, MemAvailable {diffs[0] * 100:+.3f}% / "
                     f"{diffs[1] * 100:+.3f}%")
        if min(abs(d) for d in diffs) > COUNTERS_TOLERANCE:
            problems.append(f"computed {computed:.0f} B is more than {COUNTERS_TOLERANCE * 100:g}% off "
                            f"MemAvailable {around}")
    events, why = parse_events(b.get("events counters"))
    if events is None:
        problems.append(f"counters daemon /api/v1/events {why}")
    else:
        reclaim = [e for e in events if e.get("kind") == "direct_reclaim"]
        sources = sorted({str(e.get("available_source")) for e in reclaim})
        notes.append(f"{len(reclaim)} direct_reclaim events, available_source {', '.join(sources) or '-'}")
        if not reclaim:
            problems.append("no direct_reclaim event on the counters daemon")
        elif sources != ["counters"]:
            problems.append(f"direct_reclaim available_source {sources}, not all counters")
    page = 4096
    steps = {}
    # "min_free_kbytes A -> B": B while raised, A once restored.
    kib = re.findall(r"\d+", single(singles, "min_free_kbytes") or "")
    min_free = {"counters-raised": int(kib[1]) // 4 if len(kib) == 2 else None,
                "counters-restored": int(kib[0]) // 4 if len(kib) == 2 else None}
    for name in ("counters-raised", "counters-restored"):
        m = parse_metrics(b.get(f"metrics {name}"))
        expect = zoneinfo_reserve_pages(b.get(f"zoneinfo {name}"), min_free[name]) * page
        got = value(m or [], "memwatch_memavail_total_reserve_bytes")
        refreshes = value(m or [], "memwatch_memavail_reserve_refreshes_total")
        steps[name] = (got, refreshes)
        if got != expect:
            problems.append(f"{name}: total reserve {got} B, /proc/zoneinfo implies {expect} B")
    before = value(quiet, "memwatch_memavail_total_reserve_bytes")
    before_refresh = value(quiet, "memwatch_memavail_reserve_refreshes_total") or 0
    raised, restored = steps["counters-raised"], steps["counters-restored"]
    if before is None or raised[0] is None or restored[0] is None:
        problems.append("no memwatch_memavail_total_reserve_bytes")
    else:
        notes.append(f"reserve {before / 2**20:.2f} -> {raised[0] / 2**20:.2f} -> {restored[0] / 2**20:.2f} MiB "
                     f"({single(singles, 'min_free_kbytes')}), refreshes {before_refresh:g} -> "
                     f"{raised[1]} -> {restored[1]}")
        if not raised[0] > before or restored[0] != before:
            problems.append("the reserve did not rise with min_free_kbytes and come back")
        if hook and ((raised[1] or 0) < before_refresh + 1 or (restored[1] or 0) < (raised[1] or 0) + 1):
            problems.append("memwatch_memavail_reserve_refreshes_total did not count both changes")
    exit_rc = single(singles, "counters daemon exit rc=")
    if exit_rc != "0":
        problems.append(f"counters daemon SIGTERM -> exit {exit_rc}")
    v.add("6 counters", not problems, "; ".join(problems + notes))
