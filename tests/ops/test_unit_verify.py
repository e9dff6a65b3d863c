#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""`systemd-analyze verify` passes on the units without a warning about them,
and `systemd-analyze security` does not score the service worse than README.md
says.

verify checks that ExecStart=/ExecReload= binaries exist and that the man
pages in Documentation= can be opened, on the running system. So the units are
verified inside a scratch root (--root): the host's unit directory (targets
and the rest the units depend on) copied into it, the units from the source
tree beside them, the freshly built memwatchd at /usr/sbin/memwatchd where
ExecStart= expects it, the other Exec binaries copied from the host; the man
pages come from packaging/man through MANPATH. A deliberately broken copy of
the unit must make verify complain, or this test would prove nothing.

usage: test_unit_verify.py SOURCE_ROOT MEMWATCHD SYSTEMD_ANALYZE
"""
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402

UNITS = ("memwatchd.service", "memwatchd.socket")


def exec_paths(unit_text):
    paths = []
    for m in re.finditer(r'^\s*Exec[A-Za-z]+\s*=\s*[-@:+!]*(\S+)', unit_text, re.M):
        paths.append(m.group(1))
    return paths


def make_root(root, source_root, exe):
    for d in ("usr/bin", "usr/sbin", "usr/lib/systemd", "etc/systemd/system"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for link in ("bin", "sbin", "lib"):
        os.symlink("usr/" + link, os.path.join(root, link))
    host_units = os.path.realpath("/lib/systemd/system")
    if not os.path.isdir(host_units):
        opslib.skip("no %s on this host" % host_units)
    shutil.copytree(host_units, os.path.join(root, "usr/lib/systemd/system"), symlinks=True)
    unit_dir = os.path.join(root, "usr/lib/systemd/system")
    for u in UNITS:
        shutil.copy(os.path.join(source_root, "systemd", u), os.path.join(unit_dir, u))
        with open(os.path.join(source_root, "systemd", u), encoding="utf-8") as f:
            for p in exec_paths(f.read()):
                # bin, sbin and lib are relative links in the root: resolve them there.
                dest_dir = os.path.realpath(os.path.join(root, os.path.dirname(p).lstrip("/")))
                dest = os.path.join(dest_dir, os.path.basename(p))
                if os.path.exists(dest):
                    continue
                src = exe if os.path.basename(p) == "memwatchd" else os.path.realpath(p)
                if not os.path.exists(src):
                    opslib.fail("%s runs %s, which this host does not have either" % (u, p))
                os.makedirs(dest_dir, exist_ok=True)
                shutil.copy2(src, dest)
    return unit_dir


def make_manpath(mandir, source_root):
    for section, page in (("8", "memwatchd.8"), ("5", "memwatchd.conf.5")):
        d = os.path.join(mandir, "man" + section)
        os.makedirs(d, exist_ok=True)
        shutil.copy(os.path.join(source_root, "packaging", "man", page), d)


def verify(analyze, root, env):
    out = subprocess.run([analyze, "verify", "--root=" + root, "--man=yes", "--recursive-errors=no"] + list(UNITS),
                         capture_output=True, text=True, env=env, timeout=120)
    lines = [l for l in (out.stdout + out.stderr).splitlines() if l.strip()]
    ours = [l for l in lines if "memwatchd" in l]
    return out.returncode, ours, lines


def readme_score(source_root):
    with open(os.path.join(source_root, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'systemd-analyze security[^\n]*?\b(\d+\.\d)\b', text)
    if not m:
        m = re.search(r'exposure (?:level|score)[^\n]*?\b(\d+\.\d)\b', text)
    return float(m.group(1)) if m else None


def main():
    if len(sys.argv) != 4:
        opslib.fail(__doc__)
    source_root, exe, analyze = sys.argv[1:]
    opslib.need_tool(analyze, "systemd-analyze (package systemd)")
    if not shutil.which("man"):
        opslib.skip("man not found (package man-db): verify checks Documentation=man:... with it")

    tmp = opslib.tempdir("mw-verify-")
    try:
        root = os.path.join(tmp, "root")
        unit_dir = make_root(root, source_root, exe)
        mandir = os.path.join(tmp, "man")
        make_manpath(mandir, source_root)
        env = dict(os.environ, MANPATH=mandir, SYSTEMD_LOG_COLOR="0", SYSTEMD_PAGER="")

        rc, ours, lines = verify(analyze, root, env)
        for l in lines:
            print("verify: " + l)
        if rc != 0 or ours:
            opslib.fail("systemd-analyze verify %s: exit %d, about our units:\n%s" % (
                " ".join(UNITS), rc, "\n".join(ours)))
        print("ok: systemd-analyze verify %s: no warnings" % " ".join(UNITS))

        # The harness must see a broken unit, or its silence means nothing.
        service = os.path.join(unit_dir, "memwatchd.service")
        with open(service, encoding="utf-8") as f:
            good = f.read()
        with open(service, "w", encoding="utf-8") as f:
            f.write(good.replace("[Service]\n", "[Service]\nNoSuchSetting=yes\n", 1)
                    .replace("ExecStart=/usr/sbin/memwatchd", "ExecStart=/usr/sbin/memwatchd-missing", 1))
        rc_bad, ours_bad, _ = verify(analyze, root, env)
        if not any("NoSuchSetting" in l for l in ours_bad) or not any("memwatchd-missing" in l for l in ours_bad):
            opslib.fail("verify did not report an unknown setting and a missing ExecStart= in a broken copy "
                        "(exit %d): %s" % (rc_bad, ours_bad))
        print("ok: a broken copy is reported (%d lines)" % len(ours_bad))

        out = subprocess.run([analyze, "security", "--offline=yes", "--no-pager", os.path.join(source_root, "systemd", "memwatchd.service")],
                             capture_output=True, text=True, env=env, timeout=60)
        m = re.search(r'Overall exposure level for memwatchd\.service:\s*(\d+\.\d+)', out.stdout + out.stderr)
        if not m:
            opslib.fail("no exposure level in systemd-analyze security's output:\n" + out.stdout[-2000:] + out.stderr)
        score = float(m.group(1))
        for l in out.stdout.splitlines():
            if l.startswith("✗"):
                print("security: " + re.sub(r'\s{2,}', "  ", l))
        recorded = readme_score(source_root)
        print("exposure level: %.1f (README.md: %s)" % (score, recorded))
        if recorded is None:
            opslib.fail("README.md does not record the `systemd-analyze security` exposure level")
        if score > recorded + 1e-9:
            opslib.fail("the unit's exposure level rose to %.1f; README.md records %.1f" % (score, recorded))
        if score < recorded - 1e-9:
            print("note: the exposure level fell to %.1f: update README.md" % score)
    finally:
        opslib.rmtree(tmp)


if __name__ == "__main__":
    main()
