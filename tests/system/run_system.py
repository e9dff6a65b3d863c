#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""memwatchd as its users run it: a Debian 12 guest with systemd as PID 1 and a
pure cgroup v2 hierarchy, on Debian's stock 6.1 and 6.12 cloud kernels under
qemu (software emulation). The .deb built from this tree by
packaging/build-deb.sh is installed with dpkg and the shipped unit is started
with systemctl; tests/system/guest.sh does what an operator does and prints
what it saw on the serial console, and this script judges it.

  run_system.py --source-root DIR --memhog PATH [--deb PATH] [--kernel SERIES ...]
  run_system.py --arch arm64 --checks smoke --source-root DIR [--deb PATH] ...

--arch arm64 boots Debian's arm64 kernels with qemu-system-aarch64 -M virt on
an arm64 root file system that is only unpacked (rootfs.py), with the
cross-built .deb (build-deb.sh -a arm64, or --deb). --checks smoke stops the
guest after the install, the collector table and one reload (no workloads,
no memhog): what fits the arm64 suite's CI time under TCG.

Kernels come from tests/vm/run_vm.py (same cache). The root file system is
built by mmdebstrap (tests/system/rootfs.py) and cached next to them. Not root:
exit 77 (skipped), except under CI (CI=true), where it fails: CI must run it.
A missing tool or kernel fails the test.

Needs (Debian packages): qemu-system-x86, mmdebstrap, dpkg-dev, debhelper and
the build dependencies (packaging/build-deb.sh), apt. Stdlib only.
"""
import argparse
import concurrent.futures
import fcntl
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "vm"))
sys.path.insert(0, os.path.join(HERE, "..", "expectations"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "packaging", "cross"))
sys.path.insert(0, HERE)
import expectations  # noqa: E402
import kernel_packages  # noqa: E402
import rootfs  # noqa: E402
import run_vm  # noqa: E402
from run_vm import HarnessError, blocks, labelled, log, parse_events, parse_metrics, value  # noqa: E402

SKIP = 77
ENVIRONMENT = "systemd-guest"
GUEST_MIB = 1536
DISK_MIB = 512
CACHE_MIB = 256          # mw-cache reads this much, against MemoryMax=64M
SERIES_TTL = 10          # seconds, set in the guest's memwatchd.conf
OOM_COMM = "mw-oomvictim"
MEMAVAIL_TOLERANCE = 0.01
RECLAIM_TOLERANCE = 0.02
STOP_SECONDS = 2.0
CAPS = (1 << 38) | (1 << 39)  # CAP_PERFMON, CAP_BPF
DYNAMIC_UIDS = range(61184, 65520)
CACHE_CG = "/system.slice/mw-cache.service"
OOM_CG = "/system.slice/mw-oom.service"
IDLE_CG = "/system.slice/mw-idle.service"
SELF_CG = "/system.slice/mw-systemtest.service"
KERNEL_ARGS = ("console={console} rdinit=/lib/systemd/systemd panic=-1 quiet loglevel=1 "
               "systemd.show_status=0 systemd.wants=mw-systemtest.service mitigations=off")

TEST_UNIT = b"""[Unit]
Description=memwatchd system test (tests/system/guest.sh)
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/mw-systemtest
StandardOutput=tty
StandardError=inherit
TimeoutStartSec=infinity
"""


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, text=True, capture_output=True, **kw)


def on_ci():
    return expectations.under_ci()


# ---------------------------------------------------------------- guest image

def build_deb(source_root, out, arch="amd64"):
    start = time.monotonic()
    env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck")
    cross = [] if arch == "amd64" else ["-a", arch]
    r = run([os.path.join(source_root, "packaging", "build-deb.sh")] + cross + [out], env=env, timeout=1200)
    debs = [f for f in os.listdir(out) if f.endswith(".deb") and "-dbgsym" not in f] if os.path.isdir(out) else []
    if r.returncode != 0 or len(debs) != 1:
        raise HarnessError(f"packaging/build-deb.sh failed ({r.returncode}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    log(f"deb: built {debs[0]} in {time.monotonic() - start:.0f} s")
    return os.path.join(out, debs[0])


def newest_source_mtime(source_root):
    """mtime of the newest file of the source tree (build and VCS directories aside)."""
    newest = 0.0
    for top, dirs, files in os.walk(source_root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build", "subprojects"))]
        for f in files:
            try:
                newest = max(newest, os.stat(os.path.join(top, f)).st_mtime)
            except OSError:
                pass
    return newest


def kept_deb(path, source_root):
    """The .deb deb-arm64 kept (test_deb.py --keep), if it is newer than every
    source file; None otherwise (then this test builds its own)."""
    if path and os.path.exists(path) and os.stat(path).st_mtime >= newest_source_mtime(source_root):
        log(f"deb: {path}, kept by the deb test and newer than the source tree")
        return path
    return None


def run_archive(args, deb, path):
    """The per-run part of the initramfs, appended to the cached root file system."""
    cpio = run_vm.Cpio()
    if args.memhog:
        extra = [lib for lib in run_vm.shared_libraries(args.memhog)
                 if not re.search(r"/(libc\.so\.6|ld-linux-x86-64\.so\.2)$", lib)]
        if extra:
            raise HarnessError(f"{args.memhog} needs {' '.join(extra)}, which the guest lacks "
                               "(build it without sanitizers)")
        with open(args.memhog, "rb") as f:
            cpio.file("usr/local/bin/memhog", f.read(), 0o755)
    with open(deb, "rb") as f:
        cpio.file("root/memwatchd.deb", f.read())
    with open(os.path.join(HERE, "guest.sh"), "rb") as f:
        cpio.file("usr/local/sbin/mw-systemtest", f.read(), 0o755)
    cpio.file("etc/systemd/system/mw-systemtest.service", TEST_UNIT)
    with open(os.path.join(args.source_root, "systemd", "memwatchd.service"), "rb") as f:
        unit_sha = hashlib.sha256(f.read()).hexdigest()
    conf = (f"CACHE_DEV=/dev/nvme0n1\nCACHE_MIB={CACHE_MIB}\nSERIES_TTL={SERIES_TTL}\n"
            f"OOM_COMM={OOM_COMM}\nUNIT_SHA256={unit_sha}\nSMOKE={int(args.checks == 'smoke')}\n")
    cpio.file("etc/mw-systemtest.conf", conf.encode())
    with open(path, "wb") as f:
        f.write(gzip.compress(cpio.finish(), compresslevel=1))
    return unit_sha


def boot(qemu, vmlinuz, initrd, disk, console_log, timeout, smp, arch="amd64"):
    a = run_vm.ARCHES[arch]
    cmd = [qemu, "-accel", "tcg"] + a["machine"] + ["-smp", str(smp), "-m", str(GUEST_MIB),
           "-nographic", "-no-reboot", "-nic", "none",
           "-kernel", vmlinuz, "-initrd", initrd]
    if disk:  # the smoke run reads no block device
        cmd += ["-drive", f"file={disk},if=none,id=cache,format=raw,readonly=on",
                "-device", "nvme,drive=cache,serial=memwatchsys"]
    cmd += ["-append", KERNEL_ARGS.format(console=a["console"])]
    start = time.monotonic()
    lines = []
    with open(console_log, "wb") as out:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

        def reader():
            for raw in p.stdout:
                out.write(raw)
                out.flush()
                text = raw.decode("utf-8", "replace").rstrip("\r\n").replace("\r", "")
                lines.append(run_vm.ANSI.sub("", text))

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        timed_out = False
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            p.kill()
            p.wait()
        t.join(timeout=5)
    return lines, time.monotonic() - start, p.returncode, timed_out


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
            problems.append(f"{cap} {ps.get(cap)}, want {CAPS:016x} (CAP_BPF, CAP_PERFMON)")
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


def judge_memavail(s, v, b):
    """memcg reclaim instants of mw-cache: the fexit figure stamped on each
    against MemAvailable the guest sampled (50 ms apart) just before and after."""
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
        if e.get("available_source") != "fexit":
            problems.append(f"event at {t}: available_source {e.get('available_source')}, want fexit")
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
    detail = (f"{checked} of {len(ev)} memcg_reclaim instants of mw-cache (fexit) within "
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
    m = parse_metrics(b.get("metrics cgroups"))
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
              f"max+high {kernel[0]} / {kernel[1]} (read before / after the scrape); dd: {dd}")
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
    shown = {IDLE_CG, CACHE_CG, "/system.slice/memwatchd.service", "/system.slice"}
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
            # back where it was by the second read.
            if cg == SELF_CG and key == "current":
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


def judge_process_faults(s, v, b):
    """Both sources give every process that stood still between the guest's two
    reads of /proc/PID/stat exactly the counts it printed."""
    before, after = parse_procs(b.get("procs before")), parse_procs(b.get("procs after"))
    problems, details = [], []
    idle = int(kv_line(b.get("idle-process"), "pid") or 0)
    if not before or not after or not idle:
        v.add("3 process faults", False, "no /proc/PID/stat reads or no idle sleeper")
        return
    for source, mode in (("auto", "iter"), ("procfs", "procfs")):
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


def oomd_pressure_agrees(e, journal, notes):
    """The event's cgroup pressure against what systemd-oomd printed for its
    candidate: both are the kernel's full avg10 of that cgroup, read a moment
    apart (oomd before its kill, the daemon as the event arrives). The kernel
    recomputes avg10 every 2 s, so the two are one or two updates apart: within
    10 points, with the cgroup at tens of percent."""
    got = (e.get("cgroup_pressure") or {}).get("full_avg10")
    ref = [float(m.group(1)) for m in (OOMD_AVG10.search(l) for l in journal) if m]
    if not ref or not isinstance(got, (int, float)):
        return [f"no pressure to compare: event {e.get('cgroup_pressure')}, systemd-oomd printed {ref}"]
    notes.append(f"full avg10 {got * 100:.2f}%, systemd-oomd saw {ref[-1]:.2f}%")
    return [] if abs(got * 100 - ref[-1]) <= 10 else [f"event full avg10 {got * 100:.2f}%, systemd-oomd saw {ref[-1]:.2f}%"]


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
                problems += oomd_pressure_agrees(e, b.get("oomd-journal") or [], notes)
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
    st = b.get("stopped") or []
    secs = float(kv_line(st, "seconds") or "inf")
    p = props(st)
    problems = []
    if marker(singles, "rc stop") != "0":
        problems.append(f"systemctl stop exit {marker(singles, 'rc stop')}")
    if secs > STOP_SECONDS:
        problems.append(f"systemctl stop took {secs:.2f} s (limit {STOP_SECONDS:g} s)")
    if p.get("ActiveState") != "inactive" or p.get("Result") != "success":
        problems.append(f"after stop: {p.get('ActiveState')}, Result {p.get('Result')}")
    v.add("4 stop", not problems, "; ".join(problems) or f"stopped in {secs:.2f} s, Result success")


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


def judge(s, lines, rc, timed_out, unit_sha, rows, smoke=False, figures=None):
    v = Verdict()
    b, singles = blocks(lines)
    guest = b.get("guest") or []
    release = kv_line(guest, "uname") or "?"
    log(f"[{s}] uname -r: {release}")
    log(f"[{s}] cgroup2: {kv_line(guest, 'mount')}; kernel.perf_event_paranoid {kv_line(guest, 'perf_event_paranoid')}")
    log(f"[{s}] controllers: {kv_line(guest, 'controllers')}; {kv_line(guest, 'systemd')}; "
        f"test started {kv_line(guest, 'uptime')} s after boot; failed units: {kv_line(guest, 'failed-units') or '-'}")
    if "DONE" not in singles:
        v.add("0 guest", False, f"the guest script did not finish (qemu exit {rc}"
              + (", timed out" if timed_out else "") + ")")
    if not guest:
        return v
    if not (kv_line(guest, "mount") or "").endswith("memory_recursiveprot") and "cgroup2" not in (kv_line(guest, "mount") or ""):
        v.add("0 guest", False, "no cgroup2 mount")
    try:
        want = expectations.expected(ENVIRONMENT, release, rows=rows)
    except expectations.NoExpectation as e:
        v.add("2 collectors", False, str(e))
        want = {}
    log(f"[{s}] systemctl status memwatchd --no-pager:")
    for line in b.get("status") or ["(none)"]:
        log(f"[{s}]   | {line}")
    judge_install(s, v, b, singles, want, unit_sha)
    judge_collectors(s, v, b, want)
    if smoke:
        for line in b.get("journal-memavail") or []:
            log(f"[{s}]   journal: {line}")
        judge_metrics_lint(s, v, b)
        p = props(b.get("reloaded"))
        if p.get("ActiveState") != "active" or p.get("SubState") != "running":
            v.add("4 reload", False, f"after systemctl reload: {p.get('ActiveState')} ({p.get('SubState')})")
        judge_reload(s, v, b, singles)
        judge_memory(s, v, b, figures if figures is not None else {}, ("memory-start",))
        return v
    judge_memavail(s, v, b)
    judge_reclaim(s, v, b)
    log(f"[{s}] per-cgroup figures (daemon at the window end; kernel: the cgroup's files before / after):")
    judge_cgroup_files(s, v, b)
    judge_process_faults(s, v, b)
    judge_oom(s, v, b, singles)
    judge_userspace_kills(s, v, b, singles)
    judge_restart_events(s, v, b)
    p = props(b.get("reloaded"))
    if p.get("ActiveState") != "active" or p.get("SubState") != "running":
        v.add("4 reload", False, f"after systemctl reload: {p.get('ActiveState')} ({p.get('SubState')})")
    judge_reload(s, v, b, singles)
    judge_reload(s, v, b, singles, "reload-edit", "post-reload", "post-reload-edit")
    judge_bad_reload(s, v, b)
    judge_watchdog(s, v, b)
    judge_stop(s, v, b, singles)
    judge_socket(s, v, b)
    judge_memory(s, v, b, figures if figures is not None else {}, ("memory-start", "memory-workloads"))
    return v


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--memhog", help="memhog built without sanitizers (the full checks need it)")
    ap.add_argument("--arch", choices=sorted(run_vm.ARCHES), default="amd64",
                    help="Debian architecture of the guest and the .deb (default amd64)")
    ap.add_argument("--checks", choices=["full", "smoke"], default="full",
                    help="smoke: install, collectors, promtool, one reload; full: everything")
    ap.add_argument("--deb", help="a prebuilt memwatchd .deb (default: packaging/build-deb.sh builds one)")
    ap.add_argument("--kept-deb", help="a .deb another test kept: used when newer than the source tree")
    ap.add_argument("--kernel", action="append", choices=sorted(run_vm.SERIES),
                    help="kernel series to boot (default: all)")
    ap.add_argument("--log-dir", default=".", help="where console logs go")
    ap.add_argument("--jobs", type=int, default=2, help="guests booted at once")
    ap.add_argument("--smp", type=int, default=1, help="vCPUs per guest")
    ap.add_argument("--timeout", type=float, default=420, help="seconds per boot")
    ap.add_argument("--figures", help="write the guests' memory figures here (JSON; bench/system_memory.sh)")
    args = ap.parse_args()
    start = time.monotonic()
    smoke = args.checks == "smoke"
    if not smoke and not args.memhog:
        ap.error("--memhog is needed for --checks full")
    suite_name = "system" if args.arch == "amd64" else f"system-{args.arch}"

    if args.arch != "amd64" and kernel_packages.missing_cross_tools(args.arch):
        return kernel_packages.cross_missing_exit(args.arch, suite_name)
    if os.geteuid() != 0:
        if on_ci():
            log(f"{suite_name}: FAIL: not root under CI (CI=true): this suite must run there")
            return 1
        log(f"{suite_name}: not root: skipped (mmdebstrap, apt-get download and the caches need root)")
        return SKIP
    try:
        arch = run_vm.ARCHES[args.arch]
        qemu = shutil.which(arch["qemu"])
        if not qemu:
            raise HarnessError(f"{arch['qemu']} not found: install the Debian package {arch['qemu_pkg']}")
        for tool, pkg in (("mmdebstrap", "mmdebstrap"), ("apt-get", "apt"), ("dpkg-deb", "dpkg"),
                          ("dpkg-buildpackage", "dpkg-dev"), ("dh", "debhelper")):
            if not shutil.which(tool):
                raise HarnessError(f"{tool} not found: install the Debian package {pkg}")
        rows = expectations.load()
        os.makedirs(args.log_dir, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="memwatchd-system-") as work:
            deb = args.deb or kept_deb(args.kept_deb, os.path.abspath(args.source_root)) or build_deb(os.path.abspath(args.source_root), os.path.join(work, "deb"), args.arch)
            packages = rootfs.BASE_PACKAGES + rootfs.depends_packages(deb)
            cache = run_vm.cache_dir()
            kernels = []
            with open(os.path.join(cache, ".lock"), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                updated = [False]
                for s in args.kernel or list(run_vm.SERIES):
                    kernels.append((s,) + run_vm.fetch_kernel_updating(s, cache, updated, args.arch))
                try:
                    base, built = rootfs.ensure(cache, packages, log, args.arch)
                except rootfs.RootfsError as e:
                    raise HarnessError(str(e)) from e
                if not built:
                    log(f"rootfs: cached {base} ({', '.join(sorted(set(packages)))})")
                # The per-run part is appended, so the cached archive is never rewritten.
                extra = os.path.join(work, "run.cpio.gz")
                unit_sha = run_archive(args, deb, extra)
                initrd = os.path.join(work, "initrd.gz")
                with open(initrd, "wb") as out:
                    for part in (base, extra):
                        with open(part, "rb") as f:
                            shutil.copyfileobj(f, out, 1 << 20)
            prepared = time.monotonic() - start
            log(f"prepared in {prepared:.0f} s; booting {len(kernels)} guests, {args.jobs} at a time, "
                f"{args.smp} vCPU and {GUEST_MIB} MiB each")

            def one(k):
                series, name, version, slot = k
                disk = None
                if not smoke:
                    disk = os.path.join(work, f"cache-{series}.img")
                    with open(disk, "wb") as f:
                        f.truncate(DISK_MIB << 20)  # sparse: reads cost no host disk
                prefix = "console-" if args.arch == "amd64" else f"console-{args.arch}-"
                console = os.path.join(args.log_dir, f"{prefix}{series}.log")
                log(f"[{series}] booting {name} {version}")
                out = boot(qemu, os.path.join(slot, "vmlinuz"), initrd, disk, console, args.timeout,
                           args.smp, args.arch)
                log(f"[{series}] qemu exited {out[2]} after {out[1]:.1f} s"
                    f"{' (TIMEOUT)' if out[3] else ''}; console: {console}")
                return out

            with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                outs = list(pool.map(one, kernels))
    except HarnessError as e:
        log(f"{suite_name}: FAIL: {e}")
        return 1

    results = []
    figures = {}
    for (series, name, version, slot), (lines, secs, rc, timed_out) in zip(kernels, outs):
        log()
        figures[series] = {"version": version, "release": kv_line(blocks(lines)[0].get("guest") or [], "uname")}
        v = judge(series, lines, rc, timed_out, unit_sha, rows, smoke, figures[series])
        results.append((series, version, secs, v))
        if not v.ok:
            log(f"[{series}] last console lines:")
            for line in lines[-40:]:
                log(f"  | {line}")
    log()
    log(f"{'kernel':<8} {'version':<22} {'secs':>6}  {'check':<18} result  detail")
    for series, version, secs, v in results:
        for scenario, ok, detail in v.rows:
            log(f"{series:<8} {version:<22} {secs:6.1f}  {scenario:<18} {'PASS' if ok else 'FAIL':<6}  {detail}")
    passed = sum(ok for *_, v in results for _, ok, _ in v.rows)
    failed = sum(not ok for *_, v in results for _, ok, _ in v.rows)
    log(f"{suite_name}: {passed} of {passed + failed} checks passed in {time.monotonic() - start:.0f} s "
        f"(preparation {prepared:.0f} s)")
    if args.figures:
        with open(args.figures, "w") as f:
            json.dump(figures, f, indent=1, sort_keys=True)
    return 0 if results and all(v.ok for *_, v in results) else 1


if __name__ == "__main__":
    sys.exit(main())
