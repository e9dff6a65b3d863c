#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The README's first command works where only the build packages are installed.

A fresh machine that ran `packaging/install-deps.sh` (no --test) has none of
the test-only packages. This test hides every pkg-config file those packages
own (the list is install-deps.sh's own `test_pkgs`), configures a build of a
copy of the source tree against what is left, and requires that

- meson setup succeeds and says which suites it left out,
- no unit or integration test is defined,
- meson compile builds everything, and the daemon it built runs (--version).

usage: test_build_without_test_deps.py SOURCE_ROOT MESON
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402


def test_packages(src):
    text = open(os.path.join(src, "packaging", "install-deps.sh")).read()
    m = re.search(r'^test_pkgs="([^"]*)"', text, re.M)
    if not m:
        opslib.fail("no test_pkgs=\"…\" line in packaging/install-deps.sh")
    return m.group(1).split()


def owned_pc_files(pkgs):
    """The .pc files of every installed instance of the packages: with a
    foreign architecture added (the arm64 cross build), `check` may be
    installed as check:amd64 and check:arm64, and dpkg-query -L refuses the
    bare name as ambiguous."""
    owned = set()
    for pkg in pkgs:
        listed = subprocess.run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev} ${binary:Package}\n", pkg],
                                capture_output=True, text=True)
        instances = [line.split()[1] for line in listed.stdout.splitlines()
                     if line.startswith("ii") and len(line.split()) == 2]
        for instance in instances:
            out = subprocess.run(["dpkg-query", "-L", instance], capture_output=True, text=True)
            if out.returncode != 0:
                opslib.fail("dpkg-query -L %s: %s" % (instance, out.stderr.strip()))
            owned.update(line for line in out.stdout.splitlines() if line.endswith(".pc"))
    return owned


def visible_pc_dir(hidden, dest):
    """A pkg-config directory with every .pc file of the machine but the hidden ones."""
    search = subprocess.run(["pkg-config", "--variable", "pc_path", "pkg-config"],
                            capture_output=True, text=True, check=True).stdout.strip()
    kept = 0
    for d in search.split(":"):
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if not name.endswith(".pc") or os.path.realpath(path) in hidden or path in hidden:
                continue
            link = os.path.join(dest, name)
            if not os.path.exists(link):
                os.symlink(path, link)
                kept += 1
    return kept


def main():
    if len(sys.argv) != 3:
        opslib.fail(__doc__)
    src, meson = sys.argv[1], sys.argv[2]
    if not shutil.which("dpkg-query") or not shutil.which("pkg-config"):
        opslib.skip("dpkg-query or pkg-config missing (not a Debian machine?)")

    hidden = owned_pc_files(test_packages(src))
    hidden |= {os.path.realpath(p) for p in hidden}
    if not any(os.path.basename(p) == "check.pc" for p in hidden):
        # The very dependency this test is about: it must be seen to be hidden.
        opslib.fail("check.pc is not among the hidden pkg-config files: is check in test_pkgs "
                    "and installed? hidden: %s" % sorted(hidden))

    work = tempfile.mkdtemp(prefix="memwatchd-plainbuild.")
    try:
        pcdir = os.path.join(work, "pkgconfig")
        os.mkdir(pcdir)
        kept = visible_pc_dir(hidden, pcdir)
        print("hidden, from test packages: %s; %d pkg-config files stay visible"
              % (", ".join(sorted({os.path.basename(h) for h in hidden})), kept))

        env = dict(os.environ, PKG_CONFIG_LIBDIR=pcdir, PKG_CONFIG_PATH="")
        # meson also looks for dependencies through cmake: none at all here.
        native = os.path.join(work, "native.ini")
        with open(native, "w") as f:
            f.write("[binaries]\ncmake = '/nonexistent/cmake'\n")
        build = os.path.join(work, "build")

        setup = subprocess.run([meson, "setup", build, src, "--native-file", native],
                               env=env, capture_output=True, text=True, timeout=300)
        print(setup.stdout[-3000:], setup.stderr[-2000:])
        if setup.returncode != 0:
            opslib.fail("meson setup failed with only the build packages visible")
        if "Left out: the unit and integration suites" not in setup.stdout:
            opslib.fail("meson setup did not say which suites it left out")
        if not re.search(r"unit and integration suites\s*:\s*no", setup.stdout):
            opslib.fail("the configure summary does not show the suites as left out")

        listed = subprocess.run([meson, "test", "-C", build, "--list", "--no-rebuild"],
                                env=env, capture_output=True, text=True, timeout=120)
        suites = set(re.findall(r"^memwatchd:(\w+) / ", listed.stdout, re.M))
        print("suites defined:", sorted(suites))
        if suites & {"unit", "integration"}:
            opslib.fail("unit or integration tests defined without check: %s" % sorted(suites))

        comp = subprocess.run([meson, "compile", "-C", build], env=env,
                              capture_output=True, text=True, timeout=1200)
        print(comp.stdout[-1500:], comp.stderr[-1500:])
        if comp.returncode != 0:
            opslib.fail("meson compile failed with only the build packages visible")

        daemon = os.path.join(build, "daemon", "memwatchd")
        ver = subprocess.run([daemon, "--version"], capture_output=True, text=True, timeout=30)
        print(ver.stdout.strip())
        if ver.returncode != 0 or "memwatchd" not in ver.stdout:
            opslib.fail("the daemon built without test packages does not run: rc %d %s"
                        % (ver.returncode, ver.stderr))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("PASS: configured and built with the test packages' pkg-config files hidden")


if __name__ == "__main__":
    main()
