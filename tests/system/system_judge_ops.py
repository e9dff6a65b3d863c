# SPDX-License-Identifier: GPL-2.0
"""What tests/system/guest.sh printed, judged (run_system.py), part two: the
kernel's and the user-space killers' kills, the events over a restart, the
operations (reload, watchdog, stop, socket) and the unit's memory. Stdlib only."""
import json
import re

# system_judge first: it puts tests/vm and tests/expectations on the path.
from system_judge import OOM_CG, OOM_COMM, SERIES_TTL, counter_families, kv_line, marker, props  # noqa: F401
import expectations  # noqa: E402
import run_vm  # noqa: E402
from run_vm import log, parse_events, parse_metrics, value  # noqa: E402

STOP_SECONDS = 2.0


def judge_oom_diagnosis(e, dmesg, notes):
    """The unit's memcg OOM kill: its event against the kernel's own lines
    (the limit on the unit's own cgroup, OOMScoreAdjust=300)."""
    problems = []
    pid = e.get("pid")
    killed = [run_vm.KILLED_LINE.search(l) for l in dmesg]
    killed = [k for k in killed if k and int(k.group(1)) == pid]
    cons = [run_vm.OOM_KILL_LINE.search(l) for l in dmesg]
    cons = [c.group(1) for c in cons if c and int(c.group(2)) == pid]
    memcg = [re.search(r"oom_memcg=([^,]*),task_memcg=([^,]*),", l) for l in dmesg if f",pid={pid}," in l]
    memcg = [m for m in memcg if m]
    usage = [re.search(r"memory: usage (\d+)kB, limit (\d+)kB", l) for l in dmesg]
    usage = [u for u in usage if u]
    if not killed or not cons or not memcg or not usage:
        return [f"no oom-kill, 'Killed process' and 'memory: usage' lines for pid {pid} in dmesg"]
    k, mc, u = killed[0], memcg[0], usage[-1]
    want = {"scope": run_vm.SCOPE_OF_CONSTRAINT.get(cons[0]), "oom_cgroup": mc.group(1), "cgroup": mc.group(2),
            "anon_rss_bytes": int(k.group(4)) * 1024, "file_rss_bytes": int(k.group(5)) * 1024,
            "shmem_rss_bytes": int(k.group(6)) * 1024, "oom_score_adj": int(k.group(7)),
            "oom_cgroup_limit_bytes": int(u.group(2)) * 1024}
    for key, w in want.items():
        if e.get(key) != w:
            problems.append(f"event {key} {e.get(key)!r}, the kernel's lines say {w!r}")
    if want["oom_score_adj"] != 300:
        problems.append(f"the kernel says oom_score_adj {want['oom_score_adj']}, the unit set 300")
    # The kernel prints the usage before it picks the victim: the per-CPU charge batch may differ.
    got_usage = e.get("oom_cgroup_usage_bytes")
    if not isinstance(got_usage, int) or abs(got_usage - int(u.group(1)) * 1024) > 64 * 4096:
        problems.append(f"event oom_cgroup_usage_bytes {got_usage!r}, the kernel printed {u.group(1)} kB")
    notes.append(f"scope {e.get('scope')} ({e.get('scope_source')}), oom_cgroup {e.get('oom_cgroup')}, "
                 f"rss {k.group(4)}/{k.group(5)}/{k.group(6)} kB, oom_score_adj {k.group(7)}, "
                 f"limit {u.group(2)} kB as in dmesg")
    return problems


def judge_oom(s, v, b, singles):
    problems, notes = [], []
    oom_out = " | ".join(b.get("oom") or [])
    if "oom-kill" not in oom_out:
        problems.append(f"systemd-run --wait: {oom_out!r} (no oom-kill result)")
    vb = run_vm.parse_kv(b.get("vmstat-before-oom"))
    after = b.get("oom-after") or []
    va = run_vm.parse_kv(after)
    slice_before = run_vm.parse_kv(b.get("slice-events-before-oom")).get("oom_kill")
    slice_after = kv_line(after, "slice-oom_kill")
    removed = kv_line(after, "cgroup-removed") or ""
    if not removed.startswith("yes"):
        problems.append(f"{OOM_CG} still there after the unit ended")
    kern = (va.get("oom_kill", 0) - vb.get("oom_kill", 0))
    sl = int(slice_after or 0) - int(slice_before or 0)
    if kern != 1 or sl != 1:
        problems.append(f"kernel counted {kern} OOM kills (/proc/vmstat), {sl} in system.slice memory.events")
    for name in ("oom", "after-ttl"):
        m = parse_metrics(b.get(f"metrics {name}"))
        got = value(m or [], "memwatch_cgroup_oom_kills_total", cgroup=OOM_CG)
        notes.append(f"{name}: memwatch_cgroup_oom_kills_total{{cgroup=\"{OOM_CG}\"}} {got}")
        if got != 1:
            problems.append(f"scrape {name}: memwatch_cgroup_oom_kills_total for the unit is {got}, want 1")
    waited = marker(singles, "ttl waited")
    notes.append(f"after-ttl scrape {waited} (series_ttl {SERIES_TTL} s)")
    events, why = parse_events(b.get("events oom"))
    kills = [e for e in events or [] if e.get("kind") == "oom_kill"]
    if events is None:
        problems.append(f"/api/v1/events: {why}")
    elif not [e for e in kills if e.get("comm") == OOM_COMM and e.get("cgroup") == OOM_CG]:
        problems.append(f"no oom_kill event naming {OOM_COMM} in {OOM_CG}: "
                        + json.dumps(kills)[:300])
    else:
        e = [e for e in kills if e.get("comm") == OOM_COMM and e.get("cgroup") == OOM_CG][-1]
        notes.append(f"event: pid {e.get('pid')} {e.get('comm')} {e.get('cgroup')} "
                     f"available {e.get('available_bytes')} ({e.get('available_source')})")
        problems += judge_oom_diagnosis(e, b.get("dmesg-oom") or [], notes)
    log(f"[{s}] oom: kernel {kern} (vmstat), {sl} (system.slice memory.events); " + "; ".join(notes))
    v.add("3 oom", not problems, "; ".join(problems) or "; ".join(notes))


OOMD_KILLED = re.compile(r"Killed (/\S+) due to memory pressure")
EO_SENDING = re.compile(r"sending SIG(TERM|KILL) to process (\d+)")


OOMD_AVG10 = re.compile(r"Pressure: Avg10: ([0-9.]+)")


def oomd_pressure_agrees(e, journal, notes, want_source):
    """The event's cgroup pressure against what systemd-oomd printed for its
    candidate: both are the kernel's full avg10 of that cgroup, read a moment
    apart (oomd before its kill, the BPF program at it). The kernel recomputes
    avg10 every 2 s, so the two are one or two updates apart: within 10
    points, with the cgroup at tens of percent. systemd-oomd's unit is gone
    right after the kill: the pressure must be the kill's own where the kernel
    has the cgroup's psi (kill_fields.tsv), never a read that raced removal."""
    p = e.get("cgroup_pressure") or {}
    got = p.get("full_avg10")
    ref = [float(m.group(1)) for m in (OOMD_AVG10.search(l) for l in journal) if m]
    if not ref or not isinstance(got, (int, float)):
        return [f"no pressure to compare: event {e.get('cgroup_pressure')}, systemd-oomd printed {ref}"]
    notes.append(f"full avg10 {got * 100:.2f}% ({p.get('source')}), systemd-oomd saw {ref[-1]:.2f}%")
    problems = [] if abs(got * 100 - ref[-1]) <= 10 else [f"event full avg10 {got * 100:.2f}%, systemd-oomd saw {ref[-1]:.2f}%"]
    if want_source.startswith("cgroup_psi") and p.get("source") != "kill":
        problems.append(f"pressure source {p.get('source')!r}, want 'kill' (pressure {want_source} in kill_fields.tsv)")
    return problems


def judge_userspace_kills(s, v, b, singles):
    """systemd-oomd's and earlyoom's kills against their own journal lines, and
    a shell's kill -9 that must count nothing."""
    problems, notes = [], []
    m0, m1 = parse_metrics(b.get("metrics ukill-before")), parse_metrics(b.get("metrics ukill-after"))
    if m0 is None or m1 is None:
        v.add("3 userspace kills", False, "no scrape around the user-space kills")
        return
    oomd = [OOMD_KILLED.search(l) for l in b.get("oomd-journal") or []]
    oomd = [k.group(1) for k in oomd if k]
    eo = {int(k.group(2)) for k in (EO_SENDING.search(l) for l in b.get("earlyoom-journal") or []) if k}
    want = {"systemd-oomd": len(oomd), "earlyoom": len(eo)}
    for killer, n in want.items():
        got = (value(m1, "memwatch_userspace_kills_total", killer=killer) or 0) - \
            (value(m0, "memwatch_userspace_kills_total", killer=killer) or 0)
        notes.append(f"{killer}: {n} in its journal, memwatch_userspace_kills_total +{got:g}")
        if n == 0:
            problems.append(f"{killer} killed nothing (its journal: "
                            + " | ".join((b.get("oomd-journal" if killer == "systemd-oomd" else "earlyoom-journal")
                                          or [])[-5:]) + ")")
        elif got != n:
            problems.append(f"memwatch_userspace_kills_total{{killer=\"{killer}\"}} +{got:g}, its journal says {n}")
    total = (value(m1, "memwatch_userspace_kills_total") or 0) - (value(m0, "memwatch_userspace_kills_total") or 0)
    if total != sum(want.values()):
        problems.append(f"all killers +{total:g}, but only {sum(want.values())} kills were made by killers "
                        f"(the shell's kill -9 counted?)")
    unit_kills = value(m1, "memwatch_cgroup_userspace_kills_total", killer="systemd-oomd", unit="mw-oomd-hog.service")
    if oomd and unit_kills != len(oomd):
        problems.append(f"memwatch_cgroup_userspace_kills_total{{killer=\"systemd-oomd\",unit=\"mw-oomd-hog.service\"}} "
                        f"{unit_kills}, want {len(oomd)}")
    events, why = parse_events(b.get("events ukill"))
    kills = [e for e in events or [] if e.get("kind") == "userspace_kill"]
    # systemd-oomd kills the whole unit (its first signal names the event), earlyoom one process.
    # A dash in a slice's name nests it: mw-pressure.slice is /mw.slice/mw-pressure.slice.
    for killer, victim in (("systemd-oomd", lambda e: e.get("cgroup") == "/mw.slice/mw-pressure.slice/mw-oomd-hog.service"),
                           ("earlyoom", lambda e: e.get("comm") == "mw-eovictim")):
        mine = [e for e in kills if e.get("killer") == killer and victim(e)]
        if want[killer] and not mine:
            problems.append(f"no userspace_kill event by {killer} of its victim: {json.dumps(kills)[:300]}")
        elif mine:
            e = mine[0]
            notes.append(f"event {killer} -> pid {e.get('pid')} {e.get('comm')} in {e.get('cgroup')} "
                         f"(unit {e.get('unit')!r}, {e.get('signal')}, pressure {e.get('cgroup_pressure')})")
            if killer == "systemd-oomd":
                try:
                    want_source = expectations.expected_kill_fields(
                        "systemd-guest", kv_line(b.get("guest") or [], "uname") or "?").get("pressure", "")
                except expectations.NoExpectation as ex:
                    problems.append(str(ex))
                    want_source = ""
                problems += oomd_pressure_agrees(e, b.get("oomd-journal") or [], notes, want_source)
    if "mw-oomd-hog" not in " ".join(oomd) and oomd:
        problems.append(f"systemd-oomd killed {oomd}, not mw-oomd-hog.service")
    log(f"[{s}] userspace kills: " + "; ".join(problems + notes))
    v.add("3 userspace kills", not problems, "; ".join(problems) or "; ".join(notes))


OOM_KILL_MESSAGE_ID = "526efab35ed147918215e66aaad4cbe1"


def judge_restart_events(s, v, b):
    """After systemctl restart: every kill /api/v1/events had before, with the
    same fields (restored now true), read back from the journal; journalctl's
    JSON has them, and journalctl -x the catalog text."""
    problems, notes = [], []
    before, why0 = parse_events(b.get("events before-restart"))
    after, why1 = parse_events(b.get("events restarted"))
    if before is None or after is None:
        v.add("4 restart events", False, f"/api/v1/events before {why0}, after {why1}")
        return
    kills = [e for e in before if e.get("kind") in ("oom_kill", "userspace_kill")]
    if not kills:
        problems.append("no kill in /api/v1/events before the restart")

    def same(a, c):
        return {k: x for k, x in a.items() if k != "restored"} == {k: x for k, x in c.items() if k != "restored"}
    for e in kills:
        match = [x for x in after if same(e, x)]
        if not match:
            near = [x for x in after if x.get("pid") == e.get("pid") and x.get("kind") == e.get("kind")]
            problems.append(f"{e.get('kind')} of pid {e.get('pid')} not back after the restart"
                            + (f" as it was: {json.dumps(near[0])[:400]} vs {json.dumps(e)[:400]}" if near else ""))
        elif match[0].get("restored") is not True:
            problems.append(f"{e.get('kind')} of pid {e.get('pid')} back without restored: true")
    notes.append(f"{len(kills)} kills before the restart, all back with the same fields")
    entries = []
    for line in b.get("journal-kills") or []:
        try:
            entries.append(json.loads(line))
        except ValueError:
            pass
    jkinds = sorted({(x.get("MEMWATCH_KIND"), x.get("MEMWATCH_PID")) for x in entries})
    want = sorted({(e.get("kind"), str(e.get("pid"))) for e in kills})
    if jkinds != want:
        problems.append(f"journalctl MESSAGE_ID= -o json gives {jkinds}, /api/v1/events had {want}")
    else:
        notes.append(f"journalctl -o json: {len(entries)} entries with MEMWATCH_ fields")
    cat = " | ".join(b.get("journal-catalog") or [])
    if "-- Subject: OOM kill:" not in cat and "Subject: OOM kill:" not in cat:
        problems.append(f"journalctl -x shows no catalog text: {cat[:300]}")
    else:
        notes.append("journalctl -x shows the catalog entry")
    log(f"[{s}] restart: " + "; ".join(problems + notes))
    v.add("4 restart events", not problems, "; ".join(problems) or "; ".join(notes))


def judge_reload(s, v, b, singles, step="reload", pre_name="pre-reload", post_name="post-reload"):
    pre, post = b.get(f"metrics {pre_name}"), b.get(f"metrics {post_name}")
    m0, m1 = parse_metrics(pre), parse_metrics(post)
    if m0 is None or m1 is None:
        v.add(f"4 {step}", False, "no fresh scrape around the reload")
        return
    fams = counter_families(pre)
    before = {(n, tuple(sorted(lab.items()))): x for n, lab, x in m0 if n in fams}
    after = {(n, tuple(sorted(lab.items()))): x for n, lab, x in m1 if n in fams}
    back = [(k, before[k], after[k]) for k in sorted(before) if k in after and after[k] < before[k]]
    problems = [f"{n}{{{','.join(f'{a}={b_!r}' for a, b_ in lab)}}} {x0:g} -> {x1:g}" for (n, lab), x0, x1 in back]
    ok_reload = value(m1, "memwatch_config_reloads_total", result="success")
    ok_before = value(m0, "memwatch_config_reloads_total", result="success")
    if marker(singles, f"rc {step}") != "0":
        problems.insert(0, f"systemctl reload exit {marker(singles, f'rc {step}')}")
    if (ok_reload or 0) != (ok_before or 0) + 1:  # the scrape after must count this reload
        problems.insert(0, f"memwatch_config_reloads_total{{result=\"success\"}} {ok_before} -> {ok_reload}")
    common = len(set(before) & set(after))
    log(f"[{s}] {step}: {common} counter series in both scrapes, {len(back)} went backwards")
    for line in problems:
        log(f"[{s}]   {line}")
    v.add(f"4 {step}", not problems, (f"{len(back)} of {common} counter series went backwards: "
                                     + "; ".join(problems[:8])) if problems else
          f"{common} counter series, none went backwards; reloads_total success {ok_before} -> {ok_reload}")


def judge_bad_reload(s, v, b):
    after = props(b.get("bad-reload-after"))
    pid_before = kv_line(b.get("bad-reload-after"), "pid-before")
    journal = [l for l in b.get("journal-err") or [] if "memwatchd" in l]
    problems = []
    if after.get("ActiveState") != "active" or after.get("SubState") != "running":
        problems.append(f"unit {after.get('ActiveState')} ({after.get('SubState')}) after a broken reload")
    if after.get("MainPID") != pid_before:
        problems.append(f"MainPID {pid_before} -> {after.get('MainPID')}: restarted")
    if not journal:
        problems.append("journalctl -p err has nothing from memwatchd")
    elif not any("window" in l or "memwatchd.conf" in l for l in journal):
        problems.append("the err lines do not name the file or the key: " + " | ".join(journal))
    v.add("4 broken reload", not problems, "; ".join(problems) or "still active, same PID; journal (err): "
          + " | ".join(journal)[:300])


def judge_watchdog(s, v, b):
    w0 = props(b.get("watchdog-before"))
    w1 = props(b.get("watchdog-after"))
    stopped = kv_line(b.get("watchdog-after"), "stopped-pid")
    journal = b.get("journal-watchdog") or []
    hits = [l for l in journal if "watchdog timeout" in l.lower()]
    problems = []
    if w0.get("WatchdogUSec") != "3s" or w0.get("NRestarts") != "0":
        problems.append(f"before: WatchdogUSec {w0.get('WatchdogUSec')}, NRestarts {w0.get('NRestarts')}")
    if w1.get("NRestarts") != "1" or w1.get("ActiveState") != "active" or w1.get("MainPID") == stopped:
        problems.append(f"after SIGSTOP of {stopped}: NRestarts {w1.get('NRestarts')}, "
                        f"{w1.get('ActiveState')}, MainPID {w1.get('MainPID')}")
    if not hits:
        problems.append("no 'watchdog timeout' in the journal: " + " | ".join(journal[-6:]))
    secs = kv_line(b.get("watchdog-after"), "seconds")
    v.add("4 watchdog", not problems, "; ".join(problems) or
          f"restarted in {secs} s, NRestarts 1; journal: {hits[0].strip()[:160]}")


def judge_stop(s, v, b, singles):
    """The stop as systemd timed it (ActiveExit to InactiveEnter, monotonic):
    the stop job from SIGTERM to the daemon's exit, without systemctl's own
    start-up and D-Bus round trips, which the wall clock around it holds."""
    st = b.get("stopped") or []
    secs = float(kv_line(st, "seconds") or "inf")
    p = props(st)
    problems = []
    if marker(singles, "rc stop") != "0":
        problems.append(f"systemctl stop exit {marker(singles, 'rc stop')}")
    try:
        stop = (int(kv_line(st, "inactive-enter-usec")) - int(kv_line(st, "active-exit-usec"))) / 1e6
    except (TypeError, ValueError):
        stop = None
        problems.append(f"no stop timestamps from systemd: {' | '.join(st)}")
    if stop is not None and not 0 <= stop <= STOP_SECONDS:
        problems.append(f"the stop took {stop:.2f} s by systemd's timestamps (limit {STOP_SECONDS:g} s)")
    if p.get("ActiveState") != "inactive" or p.get("Result") != "success":
        problems.append(f"after stop: {p.get('ActiveState')}, Result {p.get('Result')}")
    v.add("4 stop", not problems, "; ".join(problems) or
          f"stopped in {stop:.2f} s by systemd's timestamps ({secs:.2f} s around systemctl stop), Result success")


def judge_socket(s, v, b):
    sb = b.get("socket-before") or []
    sa = b.get("socket-after") or []
    problems = []
    if kv_line(sb, "service") != "inactive" or kv_line(sb, "socket") != "active":
        problems.append(f"before the scrape: service {kv_line(sb, 'service')}, socket {kv_line(sb, 'socket')}")
    curl = kv_line(sa, "curl") or ""
    if not re.match(r"0 http 200 ", curl):
        problems.append(f"first scrape: curl {curl}")
    if kv_line(sa, "service") != "active":
        problems.append(f"service {kv_line(sa, 'service')} after the first scrape")
    if kv_line(sa, "build_info") != "1":
        problems.append("the first scrape has no memwatch_build_info")
    if "memwatchd.socket" not in (kv_line(sa, "triggered-by") or ""):
        problems.append(f"TriggeredBy {kv_line(sa, 'triggered-by')}")
    v.add("4 socket", not problems, "; ".join(problems) or f"first scrape started the service: curl {curl}")


MEMORY_KEYS = ("MemoryCurrent", "memory.current", "anon", "file", "kernel", "RssAnon", "RssFile", "VmRSS", "Pss")
MIB = 1 << 20


def parse_memory(text_lines):
    """A memory_figures block: bytes by key (the kB lines of /proc converted), and 'running' in seconds."""
    out = {}
    for line in text_lines or []:
        m = re.match(r"^([A-Za-z_.]+):?\s+(\d+)(\s+kB)?$", line.strip())
        if m:
            out[m.group(1)] = int(m.group(2)) * (1024 if m.group(3) else 1)
    return out


def judge_memory(s, v, b, figures, stages):
    """The unit's memory.current as systemctl shows it, against the cgroup's file, and the
    daemon's anonymous memory in /proc against memory.stat's anon: two of the kernel's own
    figures each, which must agree; the figures go to the report."""
    for stage in stages:
        m = parse_memory(b.get(stage))
        missing = [k for k in MEMORY_KEYS if k not in m]
        if missing:
            v.add("5 memory", False, f"{stage}: no {', '.join(missing)} in the guest's figures")
            continue
        problems = []
        # Read a moment apart: the unit's charge moves by a few pages in between.
        if abs(m["MemoryCurrent"] - m["memory.current"]) > MIB + m["memory.current"] // 20:
            problems.append(f"systemctl's MemoryCurrent {m['MemoryCurrent']} is not the cgroup's memory.current "
                            f"{m['memory.current']}")
        # The daemon is the unit's only process: its resident anonymous pages are the cgroup's anon.
        if abs(m["anon"] - m["RssAnon"]) > MIB + m["RssAnon"] // 10:
            problems.append(f"memory.stat anon {m['anon']} is not the daemon's RssAnon {m['RssAnon']}")
        if m["memory.current"] < m["RssAnon"]:
            problems.append(f"memory.current {m['memory.current']} is below the daemon's RssAnon {m['RssAnon']}")
        figures[stage] = m
        detail = (f"{stage} ({m.get('running', 0)} s up): MemoryCurrent {m['MemoryCurrent'] / MIB:.1f} MiB "
                  f"(anon {m['anon'] / MIB:.1f}, file {m['file'] / MIB:.1f}, kernel {m['kernel'] / MIB:.1f}); "
                  f"daemon RssAnon {m['RssAnon'] / MIB:.1f}, PSS {m['Pss'] / MIB:.1f}, RSS {m['VmRSS'] / MIB:.1f} MiB")
        log(f"[{s}] memory: {detail}")
        v.add("5 memory", not problems, "; ".join(problems) if problems else detail)
