#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every system call memwatchd makes is allowed by the unit's SystemCallFilter=.

Runs the real daemon under strace -f, with the unit's user and capabilities
(reproduced with setpriv as in test_unit_sandbox.py: what the daemon calls
depends on them, e.g. it drops capabilities only when it holds more than it
needs): start-up (notify socket, watchdog), every endpoint, a SIGHUP reload
that rebinds, a SIGTERM stop; then a start with a socket passed as systemd
would (LISTEN_FDS); then --check. The set of
system calls seen must be inside what the unit's SystemCallFilter= lines allow,
expanded with `systemd-analyze syscall-filter` in the order systemd applies
them. A sanitizer build runs with leak checking off (strace holds ptrace).

usage: test_unit_syscalls.py UNIT MEMWATCHD STRACE SYSTEMD_ANALYZE B_SANITIZE
"""
import os
import re
import signal
import socket
import subprocess
import sys
import time
import base64
import shutil
import ssl
import urllib.error
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402

_groups = {}


def expand(analyze, name):
    """Syscall names of a group (recursively) or of one syscall."""
    if not name.startswith("@"):
        return {name}
    if name in _groups:
        return _groups[name]
    out = subprocess.run([analyze, "syscall-filter", name], capture_output=True, text=True)
    if out.returncode != 0:
        opslib.fail("systemd-analyze syscall-filter %s: %s" % (name, out.stderr.strip()))
    names = set()
    for line in out.stdout.splitlines()[1:]:
        word = line.strip()
        if not word or word.startswith("#"):
            continue
        names |= expand(analyze, word)
    _groups[name] = names
    return names


def allowed_syscalls(unit_path, analyze):
    """What systemd's config_parse_syscall_filter() builds from the unit."""
    allowed = None
    with open(unit_path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r'^\s*SystemCallFilter\s*=\s*(.*?)\s*$', line)
            if not m:
                continue
            value = m.group(1)
            invert = value.startswith("~")
            if invert:
                value = value[1:]
            if allowed is None:
                if invert:
                    opslib.fail("the first SystemCallFilter= is a deny list; this test expects an allow list")
                allowed = set(expand(analyze, "@default"))
            for word in value.split():
                if invert:
                    allowed -= expand(analyze, word)
                else:
                    allowed |= expand(analyze, word)
    if allowed is None:
        opslib.fail("%s has no SystemCallFilter=" % unit_path)
    return allowed


def syscalls_in_trace(path, exe):
    """Names of the calls in an strace -f log made by exe once it was exec'd,
    and by the threads it started (a wrapper's calls before the exec are not
    the daemon's)."""
    seen = set()
    family = set()
    lines = []
    call = re.compile(r'^(\d+)\s+(?:<\.\.\. )?([a-z0-9_]+)(?:\(| resumed>)')
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = call.match(line)
            if not m:
                continue
            pid, name = int(m.group(1)), m.group(2)
            if pid not in family:
                if name == "execve" and 'execve("%s"' % exe in line and not re.search(r'= -1 E', line):
                    family.add(pid)
                else:
                    continue
            seen.add(name)
            lines.append(line)
            if name in ("clone", "clone3", "fork", "vfork"):
                r = re.search(r'= (\d+)\s*$', line)
                if r:
                    family.add(int(r.group(1)))
    if not family:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(600)
        opslib.fail("no successful execve of %s in %s; it begins:\n%s" % (exe, path, head))
    return seen, lines


def sandbox_violations(lines, unit_path):
    """Calls the unit's other seccomp-based settings would refuse:
    MemoryDenyWriteExecute=, RestrictAddressFamilies=, RestrictNamespaces=,
    LockPersonality=."""
    settings = opslib.unit_settings(unit_path)
    families = set()
    for v in settings.get("RestrictAddressFamilies", []):
        families = set() if v == "" else families | set(v.split())
    bad = []
    for line in lines:
        body = line.split(None, 1)[1] if " " in line else line
        if opslib.unit_last(settings, "MemoryDenyWriteExecute") == "yes":
            if re.match(r'(mmap2?)\(', body) and "PROT_WRITE" in body and "PROT_EXEC" in body:
                bad.append("MemoryDenyWriteExecute: " + body.strip())
            if re.match(r'(pkey_)?mprotect\(', body) and "PROT_EXEC" in body:
                bad.append("MemoryDenyWriteExecute: " + body.strip())
        m = re.match(r'socket(pair)?\((AF_[A-Z0-9]+)', body)
        if m and families and m.group(2) not in families:
            bad.append("RestrictAddressFamilies: " + body.strip())
        if opslib.unit_last(settings, "RestrictNamespaces") == "yes":
            if re.match(r'(unshare|setns)\(', body) or (re.match(r'clone3?\(', body) and "CLONE_NEW" in body):
                bad.append("RestrictNamespaces: " + body.strip())
        if opslib.unit_last(settings, "LockPersonality") == "yes":
            if re.match(r'personality\(', body) and not re.match(r'personality\(0xffffffff\)', body):
                bad.append("LockPersonality: " + body.strip())
    return bad


def run_traced(strace, trace, argv, env, pass_fds=()):
    return subprocess.Popen([strace, "-f", "-qq", "-o", trace, "--"] + argv, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=open(trace + ".log", "w"), pass_fds=pass_fds)


def daemon_pid(trace, exe):
    """strace's child is the daemon: the pid on the line of its execve."""
    def find():
        try:
            with open(trace, encoding="utf-8", errors="replace") as f:
                for line in f:
                    if 'execve("%s"' % exe in line and "= 0" in line:
                        return int(line.split()[0])
        except FileNotFoundError:
            pass
        return None
    return opslib.wait_for(find, 10)


def exercise(port, rebind_conf, conf, pid):
    base = "http://127.0.0.1:%d" % port
    for path in ("/metrics", "/healthz", "/", "/api/v1/windows", "/api/v1/windows?windows=2",
                 "/api/v1/events", "/nonexistent"):
        opslib.http_get(base + path)
    try:
        urllib.request.urlopen(urllib.request.Request(base + "/metrics", method="HEAD"), timeout=5).read()
    except OSError:
        pass
    if rebind_conf:
        # A reload that moves to another port: socket(), bind(), listen() again.
        new_port = opslib.free_port()
        with open(conf, "w") as f:
            f.write(rebind_conf.replace("@PORT@", str(new_port)))
        os.kill(pid, signal.SIGHUP)
        if not opslib.wait_for(lambda: opslib.http_get("http://127.0.0.1:%d/metrics" % new_port)[0] == 200, 10):
            opslib.fail("the daemon did not move to port %d on SIGHUP" % new_port)
        port = new_port
    else:
        os.kill(pid, signal.SIGHUP)
        time.sleep(1.5)
    opslib.http_get("http://127.0.0.1:%d/metrics" % port)


def tls_run(strace, priv, exe, tmp):
    """The daemon with tls_cert_file, tls_key_file and basic_auth_users, asked
    over HTTPS with and without credentials."""
    crt, key = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", key, "-out", crt, "-days", "1", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True)
    hashed = subprocess.run(["openssl", "passwd", "-6", "-salt", "memwatch", "secret"], check=True,
                            capture_output=True, text=True).stdout.strip()
    for f in (crt, key):
        os.chmod(f, 0o644)   # a test key, readable by the unprivileged uid
    port = opslib.free_port()
    conf = os.path.join(tmp, "tls.conf")
    with open(conf, "w") as f:
        f.write("[daemon]\nlisten = 127.0.0.1:%d\ntls_cert_file = %s\ntls_key_file = %s\n"
                "basic_auth_users = prom:%s\n" % (port, crt, key, hashed))
    os.chmod(conf, 0o644)
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE

    def get(path, auth):
        req = urllib.request.Request("https://127.0.0.1:%d%s" % (port, path))
        if auth:
            req.add_header("Authorization", "Basic " + base64.b64encode(b"prom:secret").decode())
        try:
            with urllib.request.urlopen(req, timeout=5, context=ctx) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return 0

    trace = os.path.join(tmp, "tls.trace")
    env = dict(os.environ)
    for k in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC"):
        env.pop(k, None)
    proc = run_traced(strace, trace, priv + [exe, "--config", conf], env)
    try:
        if not opslib.wait_for(lambda: get("/healthz", False) == 200, 20):
            opslib.fail("memwatchd with TLS did not answer /healthz over HTTPS; log: %s"
                        % open(trace + ".log").read()[-2000:])
        codes = (get("/metrics", False), get("/metrics", True), get("/api/v1/windows", True))
        if codes != (401, 200, 200):
            time.sleep(0.5)
            opslib.fail("HTTPS with basic auth: /metrics without and with credentials, /api/v1/windows answered %s, "
                        "expected (401, 200, 200)%s; log:\n%s"
                        % (codes, "" if proc.poll() is None else " (the daemon died)",
                           open(trace + ".log").read()[-2500:]))
        pid = daemon_pid(trace, exe)
        os.kill(pid, signal.SIGHUP)
        time.sleep(1)
        get("/metrics", True)
        os.kill(pid, signal.SIGTERM)
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            opslib.stop_pid(proc)
    return syscalls_in_trace(trace, exe)


def main():
    if len(sys.argv) != 6:
        opslib.fail(__doc__)
    unit, exe, strace, analyze, sanitize = sys.argv[1:]
    opslib.need_tool(strace, "strace")
    opslib.need_tool(analyze, "systemd-analyze")
    opslib.need_root("the daemon loads BPF programs")
    if sanitize not in ("", "none"):
        # LeakSanitizer stops the world with ptrace, which strace already
        # holds; the integration tests check leaks. The sanitizer runtime's
        # own calls fall within @system-service.
        os.environ["ASAN_OPTIONS"] = "detect_leaks=0:" + os.environ.get("ASAN_OPTIONS", "")
        print("b_sanitize=%s: leak checking off under strace" % sanitize)
    allowed = allowed_syscalls(unit, analyze)
    priv = opslib.setpriv_argv(opslib.unit_settings(unit))
    print("as the unit runs it: " + " ".join(priv))

    tmp = opslib.tempdir("mw-syscalls-")
    exe = opslib.world_readable_copy(os.path.realpath(exe), tmp)
    seen = set()
    violations = []
    try:
        conf = os.path.join(tmp, "memwatchd.conf")
        text = "[daemon]\nlisten = 127.0.0.1:@PORT@\nwindow = 500ms\nlog_level = debug\n"
        port = opslib.free_port()
        with open(conf, "w") as f:
            f.write(text.replace("@PORT@", str(port)))
        os.chmod(conf, 0o644)

        # 1. Started by "systemd": a notify socket and a watchdog.
        notify_path = os.path.join(tmp, "notify")
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        os.chmod(notify_path, 0o777)
        env = dict(os.environ, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC="2000000")
        env.pop("LISTEN_FDS", None)
        env.pop("LISTEN_PID", None)
        trace = os.path.join(tmp, "run.trace")
        proc = run_traced(strace, trace, priv + [exe, "--config", conf], env)
        try:
            pid = daemon_pid(trace, exe)
            if not pid:
                opslib.fail("memwatchd did not start under strace")
            if not opslib.wait_for(lambda: opslib.http_get("http://127.0.0.1:%d/metrics" % port)[0] == 200, 20):
                opslib.fail("memwatchd under strace did not serve /metrics; log: %s" % open(trace + ".log").read()[-2000:])
            time.sleep(1.5)  # a watchdog ping and a few windows
            exercise(port, text, conf, pid)
            os.kill(pid, signal.SIGTERM)
            proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                opslib.stop_pid(proc)
            notify.close()
        names, lines = syscalls_in_trace(trace, exe)
        seen |= names
        violations += sandbox_violations(lines, unit)

        # 2. Socket activation: fd 3 is a listening socket, LISTEN_PID the daemon's.
        lsock = LISTEN_SOCKET
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsock.bind(("127.0.0.1", 0))
        lsock.listen(16)
        sport = lsock.getsockname()[1]
        env = dict(os.environ, LISTEN_FDS="1")
        env.pop("NOTIFY_SOCKET", None)
        trace = os.path.join(tmp, "socket.trace")
        proc = run_traced(strace, trace, ["/bin/sh", "-c", 'export LISTEN_PID=$$; exec "$@"', "sh"] + priv +
                          [exe, "--config", conf], env, pass_fds=(3,))
        try:
            if not opslib.wait_for(lambda: opslib.http_get("http://127.0.0.1:%d/metrics" % sport)[0] == 200, 20):
                opslib.fail("socket-activated memwatchd did not serve /metrics; log: %s" % open(trace + ".log").read()[-2000:])
            pid = daemon_pid(trace, exe)
            exercise(sport, None, conf, pid)
            os.kill(pid, signal.SIGTERM)
            proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                opslib.stop_pid(proc)
            lsock.close()
        names, lines = syscalls_in_trace(trace, exe)
        seen |= names
        violations += sandbox_violations(lines, unit)

        # 3. HTTPS and basic authentication (GnuTLS in libmicrohttpd, crypt(3)).
        if shutil.which("openssl"):
            seen_tls, lines = tls_run(strace, priv, exe, tmp)
            seen |= seen_tls
            violations += sandbox_violations(lines, unit)
        else:
            print("note: openssl not found (package openssl): the HTTPS path is not traced")

        # 4. --check (every collector started and stopped; the exit path).
        trace = os.path.join(tmp, "check.trace")
        proc = run_traced(strace, trace, priv + [exe, "--check", "--config", conf], dict(os.environ))
        proc.wait(timeout=60)
        names, lines = syscalls_in_trace(trace, exe)
        seen |= names
        violations += sandbox_violations(lines, unit)
    finally:
        if not os.environ.get("MW_KEEP_TMP"):
            opslib.rmtree(tmp)

    # execve itself runs before the filter matters (systemd allows it), and
    # the exit calls are always allowed by @default.
    missing = sorted(seen - allowed)
    print("system calls made: %d; allowed by the unit: %d" % (len(seen), len(allowed)))
    print("made: " + " ".join(sorted(seen)))
    if missing:
        opslib.fail("memwatchd makes system calls that %s does not allow (SystemCallErrorNumber=EPERM "
                    "would fail them): %s" % (unit, " ".join(missing)))
    if violations:
        opslib.fail("memwatchd makes calls the unit's sandbox refuses:\n  " + "\n  ".join(sorted(set(violations))[:20]))
    print("ok: every system call is allowed, and none breaks MemoryDenyWriteExecute=, "
          "RestrictAddressFamilies=, RestrictNamespaces= or LockPersonality=")


if __name__ == "__main__":
    # The socket handed over as systemd would must be fd 3 (SD_LISTEN_FDS_START):
    # made first, before anything else takes that number.
    LISTEN_SOCKET = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if LISTEN_SOCKET.fileno() != 3:
        os.dup2(LISTEN_SOCKET.fileno(), 3)
        LISTEN_SOCKET = socket.socket(fileno=3)
    main()
