# SPDX-License-Identifier: GPL-2.0
"""What tests/system/guest.sh printed, judged (run_system.py): reading its
blocks, and the checks of the install, the collectors, available memory,
reclaim, the per-cgroup files and the per-process faults. The kills, the
operations (reload, watchdog, stop, socket) and the memory figures are in
system_judge_ops.py. Each check adds a row to the Verdict. Stdlib only."""
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "vm"))
sys.path.insert(0, os.path.join(HERE, "..", "expectations"))
import expectations  # noqa: E402
import run_vm  # noqa: E402
from run_vm import labelled, log, parse_events, parse_metrics, value  # noqa: E402

ENVIRONMENT = "systemd-guest"
SERIES_TTL = 10          # seconds, set in the guest's memwatchd.conf
OOM_COMM = "mw-oomvictim"
MEMAVAIL_TOLERANCE = 0.01
RECLAIM_TOLERANCE = 0.02
CAPS = (1 << 38) | (1 << 39) | (1 << 2)  # CAP_PERFMON, CAP_BPF, CAP_DAC_READ_SEARCH (container names)
DYNAMIC_UIDS = range(61184, 65520)
CACHE_CG = "/system.slice/mw-cache.service"
OOM_CG = "/system.slice/mw-oom.service"
IDLE_CG = "/system.slice/mw-idle.service"
SELF_CG = "/system.slice/mw-systemtest.service"
# The daemon's own unit: it reads its cgroup while it builds the window.
DAEMON_CG = "/system.slice/memwatchd.service"


# ---------------------------------------------------------------- parsing

def kv_line(lines, key):
    """Value of "key value..." in a block, or None."""
    for line in lines or []:
        if line.startswith(key + " "):
            return line[len(key) + 1:].strip()
    return None


def props(lines):
    """{Key: value} of every "Key=value" word in a block."""
    out = {}
    for line in lines or []:
        for m in re.finditer(r"(\w+)=(\S*)", line):
            out.setdefault(m.group(1), m.group(2))
    return out


def marker(singles, prefix):
    return run_vm.single(singles, prefix)


def counter_families(text_lines):
    """Names of the samples of counter and histogram families."""
    names = set()
    for line in text_lines or []:
        m = re.match(r"^# TYPE (\S+) (counter|histogram)$", line)
        if m:
            fam = m.group(1)
            names.add(fam)
            if m.group(2) == "histogram":
                names.update({fam + "_bucket", fam + "_sum", fam + "_count"})
    return names


def parse_cgroups(text_lines):
    """({path: {file-key: int}}, first time, last time) of a `cgroups` block."""
    out, cur, times = {}, None, []
    for line in text_lines or []:
        w = line.split()
        if not w:
            continue
        if w[0] == "time":
            times.append(float(w[1]))
        elif w[0] == "cg":
            cur = out.setdefault(w[1] if len(w) > 1 else "/", {})
        elif cur is None:
            continue
        elif w[0] in ("current", "max", "high") and len(w) == 2:
            cur[w[0]] = None if w[1] == "max" else int(w[1])
        elif w[0] in ("event", "pressure") and len(w) == 3:
            cur[f"{w[0]} {w[1]}"] = int(w[2])
    return out, (times[0] if times else None), (times[-1] if times else None)


def samples_by_label(samples, name, label):
    out = {}
    for n, lab, v in samples or []:
        if n == name and label in lab:
            out.setdefault(lab[label], []).append((lab, v))
    return out


# ---------------------------------------------------------------- judging

class Verdict(run_vm.Verdict):
    pass


def expected_status(want):
    """The STATUS= line the daemon should send for these expectations."""
    enabled = [r for r in want.values() if r["state"] != "disabled"]
    active = [r for r in enabled if r["state"] == "active"]
    return f"{len(active)}/{len(enabled)} collectors active"


def judge_install(s, v, b, singles, want, unit_sha):
    problems, notes = [], []
    apt = b.get("apt") or []
    if marker(singles, "rc apt") != "0" or not any(l.startswith("Inst memwatchd ") for l in apt):
        problems.append(f"apt-get install --simulate exit {marker(singles, 'rc apt')}: " + " | ".join(apt[-5:]))
    if marker(singles, "rc dpkg") != "0":
        problems.append(f"dpkg -i exit {marker(singles, 'rc dpkg')}: " + " | ".join((b.get("dpkg") or [])[-5:]))
    uf = b.get("unit-file") or []
    sha = (kv_line(uf, "sha256") or "").split()
    if not sha or sha[0] != unit_sha:
        problems.append(f"installed unit sha256 {sha[:1]} differs from systemd/memwatchd.service {unit_sha[:12]}")
    if (kv_line(uf, "dropins") or "") != "":
        problems.append(f"drop-ins present: {kv_line(uf, 'dropins')}")
    if kv_line(uf, "type") != "notify":
        problems.append(f"Type={kv_line(uf, 'type')}, not notify")
    if kv_line(uf, "state-before-start") != "inactive":
        problems.append(f"before enable --now the unit was {kv_line(uf, 'state-before-start')} (policy-rc.d?)")
    if marker(singles, "rc enable") != "0":
        problems.append(f"systemctl enable --now exit {marker(singles, 'rc enable')}: "
                        + " | ".join(b.get("enable") or []))
    st = b.get("started") or []
    p = props(st)
    # Type=notify: `systemctl start` returns once READY=1 arrived; active
    # (running) right after it means READY=1 was sent.
    if p.get("ActiveState") != "active" or p.get("SubState") != "running":
        problems.append(f"after enable --now: {p.get('ActiveState')} ({p.get('SubState')})")
    status_text = next((l.split("=", 1)[1] for l in st if l.startswith("StatusText=")), "")
    want_status = expected_status(want)
    if not status_text.startswith(want_status):
        problems.append(f"StatusText {status_text!r}, want it to start with {want_status!r}")
    if kv_line(st, "enabled") != "enabled":
        problems.append(f"is-enabled: {kv_line(st, 'enabled')}")
    status = b.get("status") or []
    if not any(re.search(r"Active: active \(running\)", l) for l in status):
        problems.append("systemctl status shows no 'Active: active (running)'")
    if not any(re.search(r'Status: "' + re.escape(want_status), l) for l in status):
        problems.append(f"systemctl status has no Status: \"{want_status}...\" line")
    uid = p.get("UID")
    log(f"[{s}] the running unit: {' '.join(st)}")
    for line in b.get("procstatus") or []:
        log(f"[{s}]   /proc/MainPID/status {line}")
    ps = {}
    for line in b.get("procstatus") or []:
        k, _, rest = line.partition(":")
        ps[k] = rest.split()
    ids = ps.get("Uid", []) + ps.get("Gid", [])
    if not uid or not uid.isdigit() or int(uid) not in DYNAMIC_UIDS:
        problems.append(f"UID={uid}: not a dynamic user (61184-65519)")
    elif ps.get("Uid") != [uid] * 4:
        problems.append(f"/proc/PID/status Uid {ps.get('Uid')}, systemd says UID={uid}")
    for cap in ("CapPrm", "CapEff", "CapAmb", "CapBnd"):
        got = int(ps[cap][0], 16) if ps.get(cap) else None
        if got != CAPS:
            problems.append(f"{cap} {ps.get(cap)}, want {CAPS:016x} (CAP_BPF, CAP_PERFMON, CAP_DAC_READ_SEARCH)")
    if ps.get("NoNewPrivs") != ["1"]:
        problems.append(f"NoNewPrivs {ps.get('NoNewPrivs')}")
    notes.append(f"enable --now {kv_line(st, 'seconds')} s, {status_text!r}, uid {uid}, "
                 f"CapEff {(ps.get('CapEff') or ['?'])[0]}")
    v.add("1 install", not problems, "; ".join(problems or notes))


def judge_collectors(s, v, b, want):
    m = parse_metrics(b.get("metrics collectors"))
    if m is None:
        v.add("2 collectors", False, "no fresh scrape")
        return
    seen = {}
    for lab in labelled(m, "memwatch_collector_info"):
        seen[lab.get("collector")] = (lab.get("state"), lab.get("mode"), lab.get("reason", ""))
    log(f"[{s}] collector table (memwatch_collector_info of the running unit; table: tests/expectations/collectors.tsv):")
    log(f"[{s}]   {'collector':<10} {'state':<9} {'mode':<9} {'expected':<18} reason")
    for name in sorted(set(seen) | set(want)):
        st, mode, reason = seen.get(name, ("-", "-", ""))
        r = want.get(name)
        log(f"[{s}]   {name:<10} {st:<9} {mode:<9} {(r['state'] + '/' + r['mode']) if r else '(no row)':<18} {reason}")
    problems = expectations.compare(want, seen)
    fields = {lab.get("feature"): lab.get("source") for lab in labelled(m, "memwatch_oom_feature_info")}
    log(f"[{s}]   kill fields: " + ", ".join(f"{f}={x}" for f, x in sorted(fields.items())))
    try:
        problems += expectations.compare_kill_fields(
            expectations.expected_kill_fields(ENVIRONMENT, kv_line(b.get("guest") or [], "uname") or "?"), fields)
    except expectations.NoExpectation as ex:
        problems.append(str(ex))
    v.add("2 collectors", not problems, "; ".join(problems) or
          f"{len(seen)} collectors as in the table, kill fields as in kill_fields.tsv")


def judge_metrics_lint(s, v, b):
    """The guest's scrape through `promtool check metrics` on the host:
    Prometheus' own parser and its naming lint."""
    text = [l for l in b.get("metrics collectors") or [] if not l.startswith("# scrape exit")]
    promtool = shutil.which("promtool")
    if not promtool:
        v.add("2 promtool", False, "promtool not found: install the Debian package prometheus")
        return
    if not text:
        v.add("2 promtool", False, "no scrape to check")
        return
    r = subprocess.run([promtool, "check", "metrics"], input="\n".join(text) + "\n",
                       capture_output=True, text=True, timeout=60)
    out = (r.stdout + r.stderr).strip()
    v.add("2 promtool", r.returncode == 0 and not out,
          f"promtool check metrics: {len(text)} lines, clean" if r.returncode == 0 and not out
          else f"promtool check metrics exit {r.returncode}: {out[:600]}")


def judge_memavail(s, v, b, want):
    """memcg reclaim instants of mw-cache: the fexit figure stamped on each (or,
    where the meminfo collector samples in the kernel, the sampler's when it is
    newer: counters) against MemAvailable the guest sampled (50 ms apart) just
    before and after."""
    sampler = (want.get("meminfo") or {}).get("mode")
    allowed = ("fexit", "counters") if (sampler or "").startswith("bpf-") else ("fexit",)
    samples = []
    for line in b.get("memavail-samples") or []:
        w = line.split()
        if len(w) == 2:
            samples.append((float(w[0]), int(w[1])))
    events, why = parse_events(b.get("events cache"))
    if events is None:
        v.add("2 memavail", False, f"/api/v1/events: {why}")
        return
    ev = [e for e in events if e.get("kind") == "memcg_reclaim" and e.get("cgroup") == CACHE_CG]
    problems, worst, checked, gaps = [], 0.0, 0, []
    for e in ev:
        t, avail = e.get("timestamp"), e.get("available_bytes")
        if e.get("available_source") not in allowed:
            problems.append(f"event at {t}: available_source {e.get('available_source')}, want "
                            + " or ".join(allowed))
            continue
        before = [x for x in samples if x[0] <= t]
        after = [x for x in samples if x[0] > t]
        if not before or not after:
            continue
        # MemAvailable at the instant lies between the reads around it (it can
        # step between two reads, e.g. when dd closes the device and its page
        # cache goes), so the figure must be within 1% of that range.
        lo, hi = sorted((before[-1][1], after[0][1]))
        d = (avail - hi) / hi if avail > hi else (avail - lo) / lo if avail < lo else 0.0
        nearest = min((before[-1], after[0]), key=lambda x: abs(x[0] - t))
        worst = max(worst, abs(d))
        if abs(d) > MEMAVAIL_TOLERANCE:
            problems.append(f"event at {t:.3f}: {avail} B, MemAvailable {before[-1][1]} B at "
                            f"{before[-1][0]:.3f} and {after[0][1]} B at {after[0][0]:.3f} ({d * 100:+.2f}%)")
        gaps.append(abs(nearest[0] - t))
        checked += 1
    if not ev:
        problems.append(f"no memcg_reclaim event of {CACHE_CG} in /api/v1/events")
    elif not checked:
        problems.append(f"{len(ev)} events, none between two MemAvailable samples")
    detail = (f"{checked} of {len(ev)} memcg_reclaim instants of mw-cache ({'/'.join(allowed)}) within "
              f"{worst * 100:.3f}% of the MemAvailable reads around them ({len(samples)} reads, "
              f"nearest {max(gaps or [0]) * 1000:.0f} ms away at most)")
    log(f"[{s}] memavail at pressure: {detail}")
    for e in ev[:3]:
        t = e.get("timestamp")
        near = [m for x, m in samples if abs(x - t) < 0.1]
        log(f"[{s}]   memcg_reclaim {e.get('time')} pid {e.get('pid')} {e.get('comm')}: "
            f"available_bytes {e.get('available_bytes')} ({e.get('available_source')}); "
            f"MemAvailable samples within 100 ms: {near[:4]}")
    v.add("2 memavail", not problems, "; ".join(problems[:5]) or detail)


def judge_reclaim(s, v, b):
    # Scraped right after the dd, within its series_ttl; mw-cache is idle from
    # then on, as its memory.events read around the per-cgroup scrape show.
    m = parse_metrics(b.get("metrics reclaim"))
    after, _, _ = parse_cgroups(b.get("cgroups after"))
    before, _, _ = parse_cgroups(b.get("cgroups before"))
    if m is None:
        v.add("3 memcg reclaim", False, "no fresh scrape")
        return
    got = value(m, "memwatch_cgroup_reclaims_total", cgroup=CACHE_CG)
    files = [c.get(CACHE_CG) or {} for c in (before, after)]
    kernel = [f.get("event max", 0) + f.get("event high", 0) for f in files]
    dd = " ".join(b.get("cache-dd") or [])
    detail = (f'memwatch_cgroup_reclaims_total{{cgroup="{CACHE_CG}"}} {got}; kernel memory.events '
              f"max+high {kernel[0]} / {kernel[1]} (read around the per-cgroup scrape, after it); dd: {dd}")
    log(f"[{s}] memcg reclaim: {detail}")
    problems = []
    if got is None:
        problems.append("no series for the cgroup")
    elif kernel[0] != kernel[1]:
        problems.append(f"memory.events moved across the scrape ({kernel}): mw-cache not idle")
    elif not kernel[1]:
        problems.append("the kernel counted no max/high event: no reclaim at the limit happened")
    elif abs(got - kernel[1]) > RECLAIM_TOLERANCE * kernel[1]:
        problems.append(f"{got} vs {kernel[1]}: {(got - kernel[1]) / kernel[1] * 100:+.2f}%, "
                        f"more than {RECLAIM_TOLERANCE * 100:g}% apart")
    v.add("3 memcg reclaim", not problems, "; ".join(problems) or detail)


CG_METRICS = [
    ("memwatch_cgroup_memory_usage_bytes", "current", 1),
    ("memwatch_cgroup_memory_limit_bytes", "max", 1),
    ("memwatch_cgroup_memory_high_bytes", "high", 1),
    ("memwatch_cgroup_pressure_memory_some_seconds_total", "pressure some", 1e-6),
    ("memwatch_cgroup_pressure_memory_full_seconds_total", "pressure full", 1e-6),
]


def judge_cgroup_files(s, v, b):
    """Every exported cgroup's figures lie between the guest's own reads before
    and after the scrape (equal where the file did not move); the idle unit's
    files must not move, so its figures are compared exactly."""
    m = parse_metrics(b.get("metrics cgroups"))
    before, t0, _ = parse_cgroups(b.get("cgroups before"))
    after, _, _ = parse_cgroups(b.get("cgroups after"))
    if m is None or not before or not after:
        v.add("3 cgroup files", False, "no fresh scrape or no cgroup reads")
        return
    end = value(m, "memwatch_window_end_timestamp_seconds")
    exported = {lab["cgroup"] for n, lab, _ in m if n.startswith("memwatch_cgroup_memory_usage_bytes")}
    exported -= {"/", "other"}
    problems, compared, exact, moved, usage_exact = [], 0, 0, 0, 0
    shown = {IDLE_CG, CACHE_CG, DAEMON_CG, "/system.slice"}
    for cg in sorted(exported):
        a, z = before.get(cg), after.get(cg)
        if a is None or z is None:
            problems.append(f"{cg}: exported, but not in the guest's reads")
            continue
        rows = [(name, key, scale, value(m, name, cgroup=cg)) for name, key, scale in CG_METRICS]
        for ev in sorted(k for k in z if k.startswith("event ")):
            rows.append(("memwatch_cgroup_memory_events_total", ev, 1,
                         value(m, "memwatch_cgroup_memory_events_total", cgroup=cg, event=ev.split()[1])))
        for name, key, scale, got in rows:
            ka, kz = a.get(key), z.get(key)
            if key in ("max", "high") and ka is None and kz is None:
                if got is not None:
                    problems.append(f"{cg} {name} {got:.0f}, but memory.{key} is max")
                continue
            if ka is None or kz is None:
                continue
            lo, hi = min(ka, kz), max(ka, kz)
            mine = None if got is None else (round(got / scale) if scale != 1 else got)
            gauge = key in ("current", "max", "high")
            # The test's own unit runs the reads and the scrape (curl, awk):
            # its memory.current moves while the window is taken and can be
            # back where it was by the second read. So does the daemon's:
            # it reads its own cgroup while it allocates the window, and a
            # charge takes a batch of 64 pages per CPU (seen: +256 KiB on 6.1).
            if cg in (SELF_CG, DAEMON_CG) and key == "current":
                moved += 1
                continue
            if gauge and lo != hi:
                # A gauge that moved may have been anywhere in between, or
                # outside, at the window's end: not comparable.
                moved += 1
                if cg in shown:
                    log(f"[{s}]   {cg:<34} {name:<52} {key:<16} daemon {mine!s:>12}  kernel {ka} / {kz}  (moved)")
                # memory.current of even an idle cgroup moves when a CPU's
                # charge stock is drained; its limits must not.
                if cg == IDLE_CG and key != "current":
                    problems.append(f"{cg} {key} moved ({ka} -> {kz}): the idle unit is not idle")
                continue
            # Counters only grow: between the two reads, or equal when they agree.
            ok = mine is not None and lo <= mine <= hi
            compared += 1
            exact += lo == hi
            usage_exact += key == "current"
            if cg == IDLE_CG and lo != hi:
                problems.append(f"{cg} {key} moved ({ka} -> {kz}): the idle unit is not idle")
            if not ok:
                problems.append(f"{cg} {name}{'' if key in ('current', 'max', 'high') else ' ' + key}: daemon "
                                f"{got}, kernel {ka} / {kz}")
            if cg in shown:
                log(f"[{s}]   {cg:<34} {name:<52} {key:<16} daemon {mine!s:>12}  kernel {ka} / {kz}"
                    f"{'' if ok else '  MISMATCH'}")
    if not usage_exact:
        problems.append("no cgroup's memory.current stood still across the scrape: usage not compared")
    for need in (IDLE_CG, CACHE_CG):
        if need not in exported:
            problems.append(f"{need} not exported")
    detail = (f"{len(exported)} cgroups, {compared} figures equal to ({exact}) or between (counters) the "
              f"guest's reads at {t0:.2f} and after the window ending {end} ({usage_exact} of them usage); "
              f"{moved} gauges moved between "
              f"the reads, not compared")
    v.add("3 cgroup files", not problems, "; ".join(problems[:6]) or detail)


def parse_procs(text_lines):
    """{pid: (comm, minflt, majflt)} of a `procs` block (/proc/PID/stat lines)."""
    out = {}
    for line in text_lines or []:
        if line.startswith("time ") or ")" not in line:
            continue
        head, _, tail = line.rpartition(")")
        pid, _, comm = head.partition(" (")
        f = tail.split()
        # After the comm: state(0) ppid pgrp session tty_nr tpgid flags minflt(7) cminflt majflt(9).
        if pid.strip().isdigit() and len(f) > 9:
            out[int(pid)] = (comm, int(f[7]), int(f[9]))
    return out


def judge_process_faults(s, v, b, want):
    """Both sources give every process that stood still between the guest's two
    reads of /proc/PID/stat exactly the counts it printed; auto in the mode the
    expectation table gives this kernel (kfunc from 6.7, else iter)."""
    before, after = parse_procs(b.get("procs before")), parse_procs(b.get("procs after"))
    problems, details = [], []
    idle = int(kv_line(b.get("idle-process"), "pid") or 0)
    if not before or not after or not idle:
        v.add("3 process faults", False, "no /proc/PID/stat reads or no idle sleeper")
        return
    auto_mode = want.get("faults", {}).get("mode", "(no row)")
    for source, mode in (("auto", auto_mode), ("procfs", "procfs")):
        m = parse_metrics(b.get(f"metrics faults-{source}"))
        if not m:
            problems.append(f"source={source}: no scrape after a walk")
            continue
        modes = [lab.get("mode") for n, lab, _ in m if n == "memwatch_collector_info" and lab.get("collector") == "faults"]
        if modes != [mode]:
            problems.append(f"source={source}: faults mode {modes}, expected {mode}")
        compared = moved = 0
        seen_idle = False
        for pid, (comm, minflt, majflt) in sorted(before.items()):
            z = after.get(pid)
            if z is None or z[1:] != (minflt, majflt) or z[0] != comm:
                moved += 1
                continue
            got_min = value(m, "memwatch_process_minor_faults_total", pid=str(pid))
            got_maj = value(m, "memwatch_process_major_faults_total", pid=str(pid))
            if got_min is None and got_maj is None:
                continue  # never faulted while the instance ran: not exported
            compared += 1
            seen_idle |= pid == idle
            if (got_min, got_maj) != (minflt, majflt):
                problems.append(f"source={source} pid {pid} ({comm}): daemon {got_min}/{got_maj}, "
                                f"/proc {minflt}/{majflt}")
        # The guest runs a dozen user processes, most of them idle; the
        # guest script's own idle sleeper must be among them.
        if compared < 5 or not seen_idle:
            problems.append(f"source={source}: {compared} processes compared"
                            + ("" if seen_idle else f", not the idle sleeper (pid {idle})"))
        details.append(f"source={source} ({mode}): {compared} processes equal to /proc/PID/stat, {moved} moved")
    log(f"[{s}] per-process faults: " + "; ".join(details))
    v.add("3 process faults", not problems, "; ".join(problems[:6]) or "; ".join(details))
