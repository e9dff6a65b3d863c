#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The privileges the unit grants are the ones memwatchd needs: run it as the
unit would and compare with root.

Without systemd as PID 1 the unit cannot be started here, so its privilege
settings are reproduced with util-linux: DynamicUser=yes becomes an unused
uid and gid (nobody's, owning no files, like a dynamic user), the bounding,
inheritable and ambient sets come from CapabilityBoundingSet= and
AmbientCapabilities=, NoNewPrivileges= from the unit, and in a private mount
namespace ProtectSystem=strict, ProtectKernelTunables= and
ProtectControlGroups= become read-only remounts of /, /sys and /proc/sys.

Then `memwatchd --check` must give every collector the same state and attach
mode as it does for root with every capability (reasons are shown), and the
daemon must serve the same collector states over HTTP and stop cleanly. A
collector that needs a privilege the unit does not grant shows up as a
difference.

usage: test_unit_sandbox.py UNIT MEMWATCHD
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402

unit_settings = opslib.unit_settings
last = opslib.unit_last
caps_of = opslib.unit_caps
setpriv_argv = opslib.setpriv_argv


def mount_points():
    points = []
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        for line in f:
            mp = line.split()[4]
            points.append(re.sub(r'\\([0-7]{3})', lambda m: chr(int(m.group(1), 8)), mp))
    return points


def under(path, top):
    return path == top or path.startswith(top.rstrip("/") + "/")


def sandbox_script(settings):
    """Shell commands that make the mount namespace look like the unit's."""
    ro = []
    strict = last(settings, "ProtectSystem") == "strict" or last(settings, "DynamicUser") == "yes"
    tunables = last(settings, "ProtectKernelTunables") == "yes"
    cgroups = last(settings, "ProtectControlGroups") == "yes"
    for mp in mount_points():
        if under(mp, "/proc") or under(mp, "/dev"):
            continue
        if under(mp, "/sys"):
            if tunables or (cgroups and under(mp, "/sys/fs/cgroup")):
                ro.append(mp)
            continue
        if strict:
            ro.append(mp)
    cmds = []
    if tunables:
        cmds.append("mount --bind /proc/sys /proc/sys")
        ro.append("/proc/sys")
    for mp in ro:
        cmds.append("mount -o remount,bind,ro %s 2>/dev/null || echo 'sandbox: could not make %s read-only' >&2"
                    % (shlex.quote(mp), mp.replace("'", "")))
    return "\n".join(cmds)


def sandboxed(settings, argv):
    script = sandbox_script(settings) + "\nexec " + " ".join(shlex.quote(a) for a in setpriv_argv(settings) + argv)
    return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script]


def check_table(argv, env):
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    rows = {}
    for line in out.stdout.splitlines()[1:]:
        parts = line.split(None, 3)
        if len(parts) >= 3:
            rows[parts[0]] = (parts[1], parts[2], parts[3].strip() if len(parts) > 3 else "")
    return out.returncode, rows, out.stderr


def main():
    if len(sys.argv) != 3:
        opslib.fail(__doc__)
    unit, exe = sys.argv[1:]
    opslib.need_root("the daemon loads BPF programs; unshare and setpriv need root")
    for tool in ("setpriv", "unshare", "mount"):
        if not shutil.which(tool):
            opslib.skip(tool + " not found (util-linux)")
    settings = unit_settings(unit)
    print("unit: DynamicUser=%s User=%s CapabilityBoundingSet=%s AmbientCapabilities=%s" % (
        last(settings, "DynamicUser", "no"), last(settings, "User", "-"),
        " ".join(caps_of(settings, "CapabilityBoundingSet")), " ".join(caps_of(settings, "AmbientCapabilities"))))

    # The unprivileged user must reach the binary and the config: both in a
    # world-readable directory of our own.
    tmp = opslib.tempdir("mw-sandbox-")
    daemon = opslib.world_readable_copy(exe, tmp)
    conf = os.path.join(tmp, "memwatchd.conf")
    port = opslib.free_port()
    with open(conf, "w") as f:
        f.write("[daemon]\nlisten = 127.0.0.1:%d\nlog_level = info\n" % port)
    os.chmod(conf, 0o644)
    # Leak checking needs ptrace of itself, which a process that gained
    # capabilities at exec may not do; the integration tests check leaks.
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:" + os.environ.get("ASAN_OPTIONS", ""))
    for k in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC"):
        env.pop(k, None)

    proc = None
    try:
        rc_root, root_rows, _ = check_table([daemon, "--check", "--config", conf], env)
        rc_unit, unit_rows, unit_err = check_table(sandboxed(settings, [daemon, "--check", "--config", conf]), env)
        print("%-10s %-40s %s" % ("COLLECTOR", "AS ROOT", "AS THE UNIT"))
        for c in sorted(set(root_rows) | set(unit_rows)):
            print("%-10s %-40s %s" % (c, " ".join(root_rows.get(c, ("-",))[:2]), " ".join(unit_rows.get(c, ("-",))[:2])))
        if "sandbox:" in unit_err:
            print("warning: " + " ".join(l for l in unit_err.splitlines() if l.startswith("sandbox:")))
        if not root_rows:
            opslib.fail("memwatchd --check as root printed no table")
        # State and attach mode must match; a reason may word the same outcome
        # differently (a probe that fails with ENOENT as root can fail with
        # EACCES earlier without root, e.g. a legacy kprobe through tracefs on
        # a kernel without kprobes), so it is shown, not compared.
        diff = {c: (root_rows.get(c), unit_rows.get(c)) for c in set(root_rows) | set(unit_rows)
                if (root_rows.get(c) or ())[:2] != (unit_rows.get(c) or ())[:2]}
        for c in sorted(set(root_rows) & set(unit_rows)):
            if root_rows[c][:2] == unit_rows[c][:2] and root_rows[c][2] != unit_rows[c][2]:
                print("note: %s is %s in both, for reasons worded differently:\n  root: %s\n  unit: %s"
                      % (c, root_rows[c][0], root_rows[c][2], unit_rows[c][2]))
        if diff or rc_root != rc_unit:
            opslib.fail("with the unit's privileges --check differs from root's (exit %d vs %d): %s\nstderr:\n%s"
                        % (rc_unit, rc_root, diff, unit_err[-3000:]))

        # Serve for a few windows with the unit's privileges.
        log = open(os.path.join(tmp, "daemon.log"), "w+")
        proc = subprocess.Popen(sandboxed(settings, [daemon, "--config", conf]), env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        url = "http://127.0.0.1:%d" % port
        if not opslib.wait_for(lambda: opslib.http_get(url + "/metrics")[0] == 200, 20):
            log.seek(0)
            opslib.fail("sandboxed memwatchd did not serve /metrics:\n" + log.read()[-3000:])
        time.sleep(3)
        status, body = opslib.http_get(url + "/metrics")
        served = opslib.collector_states(body)
        expected = {c: (r[0], r[1]) for c, r in root_rows.items()}
        if served != expected:
            opslib.fail("sandboxed daemon serves collector states %s, --check as root said %s" % (served, expected))
        metrics = opslib.parse_metrics(body)
        for c, (state, _) in expected.items():
            up = metrics.get(("memwatch_collector_up", frozenset({("collector", c)})))
            if state in ("active", "degraded") and up != 1:
                log.seek(0)
                opslib.fail("collector %s is %s but memwatch_collector_up is %s in the sandbox:\n%s"
                            % (c, state, up, log.read()[-3000:]))
        if opslib.http_get(url + "/healthz")[0] != 200:
            opslib.fail("/healthz does not answer 200 in the sandbox")
        os.kill(proc.pid, signal.SIGTERM)
        rc = proc.wait(timeout=15)
        if rc != 0:
            log.seek(0)
            opslib.fail("sandboxed memwatchd exited %s on SIGTERM:\n%s" % (rc, log.read()[-3000:]))
        proc = None
        print("ok: with only the unit's privileges every collector comes up as it does for root")
    finally:
        if proc is not None:
            opslib.stop_pid(proc)
        opslib.rmtree(tmp)


if __name__ == "__main__":
    main()
