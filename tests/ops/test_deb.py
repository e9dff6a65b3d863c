#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""packaging/build-deb.sh builds a .deb with everything in its place.

Builds the package from a copy of the source tree (DEB_BUILD_OPTIONS=nocheck:
the unit tests run in this suite already), then inspects it with dpkg-deb:
  - /usr/sbin/memwatchd and /usr/bin/memwatch-top, which run and print the
    version of meson.build;
  - /lib/systemd/system/memwatchd.service and .socket, identical to systemd/;
  - /etc/memwatchd/memwatchd.conf, a conffile, identical to conf/;
  - /usr/lib/systemd/catalog/memwatchd.catalog, identical to packaging/catalog/
    (there, not in /lib: systemd's dpkg trigger watches /usr/lib/systemd/catalog);
  - the man pages memwatchd(8), memwatchd.conf(5) and memwatch-top(1);
  - control: package memwatchd, the version of meson.build, shared library
    dependencies filled in; maintainer scripts that enable the service and
    leave the socket disabled.

With --arch ARCH (arm64) the package is cross-built (build-deb.sh -a ARCH)
and, since its binaries cannot run here, checked instead for: Architecture
ARCH; both binaries ELF for that machine; the six BPF objects embedded in
memwatchd (the skeletons), those with a kprobe built for that target (their
BTF names its pt_regs type); the same Depends (the ARCH packages of the
libraries, as dpkg-shlibdeps found them).

With --keep PATH the checked package is also copied to PATH, where
tests/system/run_system.py (system-arm64) takes it instead of building its own.

usage: test_deb.py SOURCE_ROOT [--arch ARCH] [--keep PATH]
"""
import os
import re
import shutil
import struct
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "packaging", "cross"))
import kernel_packages  # noqa: E402

EXPECTED_FILES = [
    "./usr/sbin/memwatchd",
    "./lib/systemd/system/memwatchd.service",
    "./lib/systemd/system/memwatchd.socket",
    "./etc/memwatchd/memwatchd.conf",
    "./usr/lib/systemd/catalog/memwatchd.catalog",
    "./usr/share/man/man8/memwatchd.8.gz",
    "./usr/share/man/man5/memwatchd.conf.5.gz",
    "./usr/bin/memwatch-top",
    "./usr/share/man/man1/memwatch-top.1.gz",
]


# Per foreign architecture: the ELF e_machine of its binaries, and a type
# name only that target's kprobe context (bpf_tracing.h's PT_REGS_*) uses.
FOREIGN = {
    "arm64": {"e_machine": 183, "machine_name": "AArch64", "regs_type": b"user_pt_regs"},
}
EM_BPF = 247


def bpf_program_count(source_root):
    """How many BPF objects the daemon embeds: bpf/meson.build's bpf_programs."""
    with open(os.path.join(source_root, "bpf", "meson.build"), encoding="utf-8") as f:
        m = re.search(r"^bpf_programs\s*=\s*\[([^\]]*)\]", f.read(), re.M)
    if not m:
        opslib.fail("no bpf_programs = [...] in bpf/meson.build")
    return len(re.findall(r"'[^']+'", m.group(1)))


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def embedded_bpf_objects(data):
    """The little-endian 64-bit relocatable EM_BPF ELF objects inside a binary
    (what bpftool's skeletons embed), each as bytes up to its section table's end."""
    objects = []
    i = data.find(b"\x7fELF\x02\x01", 1)
    while i >= 0:
        if i + 64 <= len(data) and struct.unpack_from("<HH", data, i + 16) == (1, EM_BPF):
            shoff, = struct.unpack_from("<Q", data, i + 40)
            shentsize, shnum = struct.unpack_from("<HH", data, i + 58)
            objects.append(data[i:i + shoff + shentsize * shnum])
        i = data.find(b"\x7fELF\x02\x01", i + 1)
    return objects


def check_foreign_binaries(root, arch, n_objects, problems):
    want = FOREIGN[arch]
    for binary in ("usr/sbin/memwatchd", "usr/bin/memwatch-top"):
        with open(os.path.join(root, binary), "rb") as f:
            data = f.read()
        machine, = struct.unpack_from("<H", data, 18)
        if data[:4] != b"\x7fELF" or machine != want["e_machine"]:
            problems.append("/%s: ELF machine %d, want %d (%s)" % (binary, machine, want["e_machine"],
                                                                   want["machine_name"]))
        else:
            print("/%s: ELF machine %s" % (binary, want["machine_name"]))
        if binary != "usr/sbin/memwatchd":
            continue
        objects = embedded_bpf_objects(data)
        kprobes = [o for o in objects if b"kretprobe/" in o or b"kprobe/" in o]
        print("/%s: %d embedded BPF objects, %d with kprobe programs" % (binary, len(objects), len(kprobes)))
        if len(objects) != n_objects:
            problems.append("/%s embeds %d BPF objects, want %d (bpf/meson.build's bpf_programs)"
                            % (binary, len(objects), n_objects))
        if not kprobes:
            problems.append("/%s: no embedded BPF object has a kprobe program" % binary)
        for o in kprobes:
            if want["regs_type"] not in o:
                problems.append("/%s: a kprobe BPF object does not name %s: not built for __TARGET_ARCH_%s"
                                % (binary, want["regs_type"].decode(), arch))


def main():
    args = sys.argv[1:]
    arch = None
    keep = None
    if len(args) >= 2 and args[-2] == "--keep":
        keep = os.path.abspath(args[-1])
        args = args[:-2]
    if len(args) == 3 and args[1] == "--arch" and args[2] in FOREIGN:
        arch = args[2]
        args = args[:1]
    if len(args) != 1:
        opslib.fail(__doc__)
    source_root = os.path.abspath(args[0])
    for tool in ("dpkg-buildpackage", "dpkg-deb", "dh"):
        if not shutil.which(tool):
            opslib.skip("%s not found (packages dpkg-dev and debhelper)" % tool)
    if arch and kernel_packages.missing_cross_tools(arch):
        sys.exit(kernel_packages.cross_missing_exit(arch, "deb-" + arch))
    with open(os.path.join(source_root, "meson.build"), encoding="utf-8") as f:
        version = re.search(r"version\s*:\s*'([^']+)'", f.read()).group(1)

    # What the package must contain, read now: the tree may change while it builds.
    sources = {}
    for source in ("systemd/memwatchd.service", "systemd/memwatchd.socket", "conf/memwatchd.conf",
                   "packaging/catalog/memwatchd.catalog"):
        with open(os.path.join(source_root, source), "rb") as f:
            sources[source] = f.read()

    tmp = opslib.tempdir("mw-deb-")
    try:
        out = os.path.join(tmp, "out")
        env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck")
        build_argv = [os.path.join(source_root, "packaging", "build-deb.sh")] + (["-a", arch] if arch else [])
        build = run(build_argv + [out], env=env, timeout=1500)
        if build.returncode != 0:
            opslib.fail("packaging/build-deb.sh failed (%d):\n%s\n%s" % (build.returncode, build.stdout[-6000:],
                                                                         build.stderr[-6000:]))
        debs = [os.path.join(out, f) for f in os.listdir(out) if f.endswith(".deb") and "-dbgsym" not in f]
        if len(debs) != 1:
            opslib.fail("expected one .deb in %s, found %s" % (out, os.listdir(out)))
        deb = debs[0]
        print("built " + os.path.basename(deb))
        problems = []

        contents = run(["dpkg-deb", "-c", deb]).stdout
        files = {line.split()[-1] if " -> " not in line else line.split(" -> ")[0].split()[-1]
                 for line in contents.splitlines() if line.strip()}
        for f in EXPECTED_FILES:
            if f not in files:
                problems.append("%s is not in the package" % f)
        for line in contents.splitlines():
            for binary in ("./usr/sbin/memwatchd", "./usr/bin/memwatch-top"):
                if line.endswith(binary) and not line.startswith("-rwxr-xr-x"):
                    problems.append("%s is not mode 0755: %s" % (binary[1:], line))
        for f in sorted(files):
            if f.startswith("./usr/lib/systemd/system/") and f.endswith((".service", ".socket")):
                problems.append("unit left in /usr/lib: %s" % f)

        info = run(["dpkg-deb", "-I", deb]).stdout
        print(info)
        field = lambda name: (re.search(r'^ %s: (.*)$' % name, info, re.M) or [None, ""])[1]
        if field("Package") != "memwatchd":
            problems.append("Package: %s" % field("Package"))
        if not field("Version").startswith(version):
            problems.append("Version %s does not start with meson.build's %s" % (field("Version"), version))
        want_arch = arch or run(["dpkg", "--print-architecture"]).stdout.strip()
        if field("Architecture") != want_arch:
            problems.append("Architecture: %s, want %s" % (field("Architecture"), want_arch))
        for lib in ("libbpf", "libmicrohttpd", "libsystemd", "libinih", "libcrypt",
                    "libcurl", "libjansson", "libncursesw"):
            if lib not in field("Depends"):
                problems.append("Depends lacks %s (shlibs): %s" % (lib, field("Depends")))
        conffiles = run(["dpkg-deb", "-I", deb, "conffiles"]).stdout.split()
        if "/etc/memwatchd/memwatchd.conf" not in conffiles:
            problems.append("/etc/memwatchd/memwatchd.conf is not a conffile: %s" % conffiles)
        postinst = run(["dpkg-deb", "-I", deb, "postinst"]).stdout
        # dh_installsystemd's snippets: the service is enabled on a first
        # install and started; the socket is enabled again only if the admin
        # had enabled it (debian-installed guard), and never started.
        if "was-enabled 'memwatchd.service'" not in postinst or "debian-installed 'memwatchd.service'" in postinst:
            problems.append("postinst does not enable memwatchd.service on installation")
        if not re.search(r"deb-systemd-invoke \S+ 'memwatchd\.service'", postinst):
            problems.append("postinst does not start memwatchd.service")
        if "debian-installed 'memwatchd.socket'" not in postinst:
            problems.append("postinst enables memwatchd.socket on installation (it should ship disabled)")
        if re.search(r"deb-systemd-invoke \S+ 'memwatchd\.socket'", postinst):
            problems.append("postinst starts memwatchd.socket")

        root = os.path.join(tmp, "root")
        x = run(["dpkg-deb", "-x", deb, root])
        if x.returncode != 0:
            problems.append("dpkg-deb -x failed: " + x.stderr)
        else:
            for packaged, source in (("lib/systemd/system/memwatchd.service", "systemd/memwatchd.service"),
                                     ("lib/systemd/system/memwatchd.socket", "systemd/memwatchd.socket"),
                                     ("etc/memwatchd/memwatchd.conf", "conf/memwatchd.conf"),
                                     ("usr/lib/systemd/catalog/memwatchd.catalog",
                                      "packaging/catalog/memwatchd.catalog")):
                a = os.path.join(root, packaged)
                if os.path.exists(a) and open(a, "rb").read() != sources[source]:
                    problems.append("/%s differs from %s" % (packaged, source))
        if x.returncode == 0 and arch:
            check_foreign_binaries(root, arch, bpf_program_count(source_root), problems)
        elif x.returncode == 0:
            v = run([os.path.join(root, "usr/sbin/memwatchd"), "--version"])
            if v.returncode != 0 or v.stdout.strip() != "memwatchd " + version:
                problems.append("the packaged memwatchd --version says %r (exit %d)" % (v.stdout.strip(), v.returncode))
            else:
                print("packaged binary: " + v.stdout.strip())
            v = run([os.path.join(root, "usr/bin/memwatch-top"), "--version"])
            if v.returncode != 0 or v.stdout.strip() != "memwatch-top " + version:
                problems.append("the packaged memwatch-top --version says %r (exit %d)" % (v.stdout.strip(), v.returncode))

        if problems:
            opslib.fail("\n  ".join(["the .deb:"] + problems))
        print("ok: the .deb installs the binaries, units, conffile, journal catalog and man pages")
        if keep:
            os.makedirs(os.path.dirname(keep), exist_ok=True)
            shutil.copyfile(deb, keep + ".part")
            os.replace(keep + ".part", keep)
            print("kept as " + keep)
    finally:
        opslib.rmtree(tmp)


if __name__ == "__main__":
    main()
