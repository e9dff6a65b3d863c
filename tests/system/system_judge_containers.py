# SPDX-License-Identifier: GPL-2.0
"""What tests/system/guest_containers.sh printed, judged (run_system.py): a
Podman and a Docker container killed at their 64 MiB limit, their OOM series
until series_ttl after their cgroups went, and a held container of each
runtime for its usage, limit and name. The runtimes' own records (inspect)
and the kernel's (dmesg, memory.current, memory.max) are the reference.
Stdlib only."""
import re

# system_judge first: it puts tests/vm and tests/expectations on the path.
from system_judge import kv_line, marker  # noqa: F401
from run_vm import log, parse_metrics, value  # noqa: E402
import expectations  # noqa: E402

CONTAINER_TTL = 30       # seconds, [collector.oom] series_ttl in the guest's memwatchd.conf
WINDOW = 1.0             # [daemon] window of the shipped memwatchd.conf, seconds
LIMIT = 64 << 20         # --memory 64m
RUNTIMES = ("podman", "docker")
OOM_CONTAINERS = (("podman", "mw-pm-hog", "/machine.slice/libpod-{id}.scope"),
                  ("docker", "mw-dk-hog", "/system.slice/docker-{id}.scope"))
# The Podman one runs in a pod (podman pod create, podman run --pod).
# crun runs the process in a child of the scope, "container".
HELD_CONTAINERS = (("podman", "mw-pm-hold",
                    r"/machine\.slice/(machine-libpod_pod_[0-9a-f]{64}\.slice/)?libpod-{id}\.scope(/container)?"),
                   ("docker", "mw-dk-hold", r"/system\.slice/docker-{id}\.scope"))


def samples(lines):
    """[(name, {labels}, value)] of the sample lines in a block."""
    return parse_metrics(list(lines or []) + ["# scrape exit 0 fresh"]) or []


def inspected(b, name):
    """The runtime's record of a container: {id, name, pid, oomkilled, exit,
    started, finished} (times as epoch seconds), or {}."""
    lines = b.get(f"inspect {name}") or []
    out = {k: kv_line(lines, k) for k in ("id", "name", "pid", "oomkilled", "exit", "started", "finished")}
    for k in ("started", "finished"):
        try:
            out[k] = float((out[k] or "").split()[0])
        except (ValueError, IndexError):
            out[k] = None
    return out if out.get("id") else {}


def polls(lines):
    """[(wall, window_end, [samples])] of a poll block (guest_containers.sh ctr_poll)."""
    out = []
    for line in lines or []:
        w = line.split()
        if w[:1] == ["scrape"] and len(w) == 3:
            try:
                out.append((float(w[1]), float(w[2]), []))
            except ValueError:
                continue
        elif out:
            out[-1][2].extend(samples([line]))
    return out


def series(smp, family, short_id):
    return [(lab, v) for n, lab, v in smp if n == family and lab.get("container_id") == short_id]


def judge_setup(s, v, b, singles, runtimes):
    pod = " ".join(b.get("ctr-podman") or [])
    dk = " ".join(b.get("ctr-docker") or [])
    problems = []
    if "podman" in runtimes and ("cgroupManager systemd" not in pod or "cgroupVersion v2" not in pod):
        problems.append(f"podman info: {pod[-200:]!r}")
    if "docker" in runtimes and ("cgroupDriver systemd" not in dk or "cgroupVersion 2" not in dk):
        problems.append(f"docker info: {dk[-200:]!r} (dockerd start: {' | '.join((b.get('ctr-docker-start') or [])[-3:])})")
    here = [f"runtimes here: {' '.join(b.get('ctr-runtimes') or ['?'])}"]
    if (b.get("ctr-runtimes") or [""])[0].split() != list(runtimes):
        problems.append(f"the guest ran {b.get('ctr-runtimes')}, not {list(runtimes)}")
    steps = ["ctr-start", "ctr-image"] + (["pod create"] if "podman" in runtimes else []) + \
        (["ctr-docker-start"] if "docker" in runtimes else [])
    for step in steps:
        if marker(singles, f"rc {step} ") != "0":
            problems.append(f"{step}: exit {marker(singles, f'rc {step} ')}: {' | '.join((b.get(step) or [])[-3:])}")
    seen = "; ".join(here + [x for x in (pod, dk) if x])
    log(f"[{s}] containers: {seen}")
    v.add("5 ctr setup", not problems, "; ".join(problems) or seen)


def judge_oom(s, v, b, singles, runtime, name, cg_form, distribution):
    problems, notes = [], []
    r = inspected(b, name)
    if not r:
        v.add(f"5 ctr oom {runtime}", False, f"no inspect of {name}: " + " | ".join((b.get(f"run {name}") or [])[-3:]))
        return None
    short, scope = r["id"][:12], cg_form.format(id=r["id"])
    run_rc = marker(singles, f"rc run {name} ")
    # The runtime's exit record (137: SIGKILL) is required, and its OOMKilled
    # flag where container_runtimes.tsv says the release's runtime sets it
    # (the container outlives its victim by 2 s: guest_containers.sh); where
    # it does not, the kernel's own oom-kill line below is the reference, and
    # block "oom-record" keeps the container's userdata and conmon's journal.
    try:
        flag_required, flag_reason = expectations.expected_oomkilled(distribution, runtime)
    except expectations.NoExpectation as e:
        flag_required, flag_reason = True, ""
        problems.append(str(e))
    if r["exit"] != "137" or run_rc != "137" or (flag_required and r["oomkilled"] != "true"):
        problems.append(f"{runtime} inspect: OOMKilled {r['oomkilled']}, exit {r['exit']}; {runtime} run exit {run_rc}"
                        + ("" if flag_required else f" (OOMKilled reported only on {distribution}: {flag_reason})"))
    if not flag_required:
        notes.append(f"OOMKilled not judged on {distribution} (container_runtimes.tsv)")
    # The kernel's line names the victim's cgroup: the scope, or crun's child of it.
    kills = [re.search(r"task_memcg=([^,]*),", l) for l in b.get("ctr-dmesg") or [] if "oom-kill:" in l]
    kills = [k.group(1) for k in kills if k and (k.group(1) == scope or k.group(1).startswith(scope + "/"))]
    cg = kills[0] if kills else scope
    if len(kills) != 1:
        problems.append(f"dmesg has {len(kills)} oom-kill lines in {scope}, want 1")
    got = series(samples(b.get(f"metrics oom {name}")), "memwatch_cgroup_oom_kills_total", short)
    if len(got) != 1:
        problems.append(f"{len(got)} memwatch_cgroup_oom_kills_total series with container_id {short}, want 1")
    for lab, val in got:
        if val != 1 or lab.get("container") != name or lab.get("cgroup") != cg:
            problems.append(f"memwatch_cgroup_oom_kills_total {val:g} container {lab.get('container')!r} cgroup "
                            f"{lab.get('cgroup')}: want 1, {name!r}, {cg}")
    notes.append(f"{name} {short}: OOMKilled {r['oomkilled']} exit {r['exit']}, {len(kills)} kernel kill, "
                 f"counter {[val for _, val in got]} in {cg}")
    log(f"[{s}] ctr oom {runtime}: " + "; ".join(notes + problems))
    v.add(f"5 ctr oom {runtime}", not problems, "; ".join(problems) or "; ".join(notes))
    return r, cg


def vanished(lines, cid):
    """(scope, last seen, first seen gone) of container cid's scope in the
    guest's 50 ms cgroup watch (guest_containers.sh ctr_watch), or None."""
    for line in lines or []:
        w = line.split()
        if len(w) == 4 and w[0] == "vanish" and w[1].endswith(f"-{cid}.scope"):
            try:
                return w[1], float(w[2]), float(w[3])
            except ValueError:
                return None
    return None


def judge_ttl(s, v, b, killed):
    """Present with its names in every scrape from its rm to TTL after the
    guest last saw its scope (the cgroup went after that), gone from the
    window ending two windows after TTL past the moment the watch first saw
    it gone (guest_containers.sh ctr_watch, every 50 ms)."""
    scrapes = polls(b.get("poll ttl"))
    problems, notes = [], []
    if not scrapes:
        v.add("5 ctr ttl", False, "no scrapes in the poll ttl block")
        return
    for name, (r, cg) in killed.items():
        gone_lines = b.get(f"gone {name}") or []
        rm_done = float((kv_line(gone_lines, "rm-done") or "0").split()[0])
        gone = (kv_line(gone_lines, "gone") or "no").split()
        watched = vanished(b.get("cgroup watch"), r["id"])
        if gone[0] != "yes" or r.get("finished") is None or not watched:
            problems.append(f"{name}: cgroup gone {gone}, finished {r.get('finished')}, "
                            f"its scope vanishing in the cgroup watch: {watched}")
            continue
        short = r["id"][:12]
        _, last_seen, gone_at = watched
        stay = [(end, series(smp, "memwatch_cgroup_oom_kills_total", short))
                for _, end, smp in scrapes if rm_done <= end < last_seen + CONTAINER_TTL]
        went = [(end, series(smp, "memwatch_cgroup_oom_kills_total", short))
                for _, end, smp in scrapes if end >= gone_at + CONTAINER_TTL + 2 * WINDOW]
        bad_stay = [end for end, got in stay
                    if len(got) != 1 or got[0][1] != 1 or got[0][0].get("container") != name]
        bad_went = [end for end, got in went if got]
        if not stay or bad_stay:
            problems.append(f"{name}: {len(stay)} scrapes from rm to {CONTAINER_TTL} s after its scope went, "
                            f"{len(bad_stay)} without the series (first at window end {bad_stay[:1]})")
        if not went or bad_went:
            problems.append(f"{name}: {len(went)} scrapes from {CONTAINER_TTL} s + 2 windows after it went, "
                            f"{len(bad_went)} still with the series")
        finished = r["finished"]
        last = max([end for _, end, smp in scrapes if series(smp, "memwatch_cgroup_oom_kills_total", short)],
                   default=None)
        last_s = "never" if last is None else f"{last - finished:+.1f} s"
        notes.append(f"{name}: scope gone {last_seen - finished:+.2f}..{gone_at - finished:+.2f} s, "
                     f"rm {rm_done - finished:+.1f} s after FinishedAt, series last in the window ending {last_s} "
                     f"({len(stay)} scrapes from rm to TTL, {len(went)} after TTL + 2 windows)")
    log(f"[{s}] ctr ttl ({CONTAINER_TTL} s): " + "; ".join(notes + problems))
    v.add("5 ctr ttl", not problems, "; ".join(problems) or "; ".join(notes))


def judge_held(s, v, b, singles, runtime, name, cg_re):
    """Usage and limit equal memory.current and memory.max read before and
    after the scrape; the name in memwatch_cgroup_info within two windows."""
    problems, notes = [], []
    r = inspected(b, name)
    if not r or marker(singles, f"rc run {name} ") != "0":
        v.add(f"5 ctr held {runtime}", False, f"{name} did not start: " + " | ".join((b.get(f"run {name}") or [])[-3:]))
        return
    short = r["id"][:12]
    lines = b.get(f"usage {name}") or []
    cg = kv_line(lines, "cgroup") or ""
    if not re.fullmatch(cg_re.replace("{id}", r["id"]), cg):
        problems.append(f"cgroup {cg!r} does not match {cg_re.replace('{id}', short + '…')}")
    tries = [l.split() for l in lines if l.startswith("try ")]
    last = tries[-1] if tries else []
    # try N before CUR MAX after CUR MAX window END fresh|stale
    if len(last) != 11 or last[3:5] != last[6:8] or last[10] != "fresh":
        problems.append(f"memory.current/max never stood still across a fresh scrape in {len(tries)} tries: {last}")
    else:
        cur, mx = int(last[3]), int(last[4])
        smp = samples(l for l in lines[lines.index(" ".join(last)) + 1:] if not l.startswith("try "))
        use = value(smp, "memwatch_cgroup_memory_usage_bytes", cgroup=cg)
        lim = value(smp, "memwatch_cgroup_memory_limit_bytes", cgroup=cg)
        if use != cur or lim != mx or mx != LIMIT:
            problems.append(f"usage {use} limit {lim}, memory.current {cur} memory.max {mx} (want {LIMIT})")
        notes.append(f"usage {use:.0f} = memory.current, limit {lim:.0f} = memory.max (try {last[1]})")
    # The daemon's own windows (/api/v1/windows) say which first named it; the
    # guest's scraper, starved while the runtime starts it, only when it saw it.
    windows = [l.split() for l in b.get(f"windows {name}") or [] if l.startswith("window ")]
    windows = [(float(w[1]), w[2] == "shown") for w in windows if len(w) == 3]
    seen = [wall for wall, _, smp in polls(b.get(f"poll {name}"))
            if any(lab.get("container") == name for lab, _ in series(smp, "memwatch_cgroup_info", short))]
    shown = [end for end, ok in windows if ok]
    started = r.get("started")
    if not shown or started is None:
        problems.append(f"no window of /api/v1/windows named container {name!r} with container_id {short} "
                        f"({len(windows)} windows)")
    elif not any(end < started for end, _ in windows):
        problems.append(f"the windows kept start after the container did ({windows[0][0] - started:+.2f} s)")
    else:
        if shown[0] - started > 2 * WINDOW:
            problems.append(f"name first in the window ending {shown[0] - started:.2f} s after StartedAt, "
                            f"over two windows ({2 * WINDOW:g} s)")
        notes.append(f"name first in the window ending {shown[0] - started:+.2f} s after StartedAt"
                     + (f" (first scrape showing it {seen[0] - started:+.2f} s)" if seen else ""))
    log(f"[{s}] ctr held {runtime} {name} {short} {cg}: " + "; ".join(notes + problems))
    v.add(f"5 ctr held {runtime}", not problems, "; ".join(problems) or f"{name}: " + "; ".join(notes))


def judge_containers(s, v, b, singles, distribution, runtimes=RUNTIMES):
    """The checks of the runtimes this guest ran (run_system.py --containers-kernel)."""
    judge_setup(s, v, b, singles, runtimes)
    killed = {}
    for runtime, name, cg_form in OOM_CONTAINERS:
        if runtime not in runtimes:
            continue
        got = judge_oom(s, v, b, singles, runtime, name, cg_form, distribution)
        if got:
            killed[name] = got
    judge_ttl(s, v, b, killed)
    for runtime, name, cg_re in HELD_CONTAINERS:
        if runtime in runtimes:
            judge_held(s, v, b, singles, runtime, name, cg_re)
