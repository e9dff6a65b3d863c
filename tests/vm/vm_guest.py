# SPDX-License-Identifier: GPL-2.0
"""Guest assembly of tests/vm: the initramfs (busybox, memwatchd, memhog,
their shared libraries, tests/vm/init.sh as /init and the scenario
settings it reads) and the qemu boot that reads its serial console."""
import gzip
import io
import os
import re
import subprocess
import threading
import time

from vm_kernels import ARCHES, TRACEPOINTS, HarnessError, run

GUEST_MIB = 512
OOM_HOG_MIB = 2 * GUEST_MIB
DISK_MIB = 512
LISTEN = "127.0.0.1:9577"
LISTEN2 = "127.0.0.1:9578"
HOG_COMM = "memhog"
# The OOM victim's own comm (memhog -n): nothing else in the guest is called that.
OOM_HOG_COMM = "mwvm-oomvictim"
# Scenario 7's hog (fragments memory, then faults huge pages).
COMPACT_HOG_COMM = "mwvm-compact"


# ---------------------------------------------------------------- initramfs

class Cpio:
    """A cpio archive in the "newc" format the kernel unpacks."""

    def __init__(self):
        self.buf = io.BytesIO()
        self.ino = 1
        self.dirs = set()

    def _entry(self, name, mode, data=b"", rdev=(0, 0), nlink=1):
        name_b = name.encode() + b"\0"
        fields = [self.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdev[0], rdev[1],
                  len(name_b), 0]
        self.ino += 1
        hdr = b"070701" + b"".join(b"%08X" % v for v in fields)
        self.buf.write(hdr + name_b)
        self.buf.write(b"\0" * (-(len(hdr) + len(name_b)) % 4))
        self.buf.write(data)
        self.buf.write(b"\0" * (-len(data) % 4))

    def dir(self, path):
        path = path.strip("/")
        if not path or path in self.dirs:
            return
        self.dir(os.path.dirname(path))
        self.dirs.add(path)
        self._entry(path, 0o040755, nlink=2)

    def file(self, path, data, mode=0o644):
        path = path.strip("/")
        self.dir(os.path.dirname(path))
        self._entry(path, 0o100000 | mode, data)

    def chardev(self, path, major, minor, mode=0o600):
        path = path.strip("/")
        self.dir(os.path.dirname(path))
        self._entry(path, 0o020000 | mode, rdev=(major, minor))

    def finish(self):
        self._entry("TRAILER!!!", 0)
        return self.buf.getvalue()


def foreign_shared_libraries(binary, multiarch):
    """What the dynamic loader of another architecture would load for binary:
    its interpreter and the DT_NEEDED libraries, recursively, found in the
    host's multiarch directories of that architecture (the :arm64 packages),
    read with readelf since ldd cannot run a foreign loader."""
    dirs = [f"/lib/{multiarch}", f"/usr/lib/{multiarch}"]
    libs, todo = [], [binary]
    while todo:
        elf = todo.pop()
        r = run(["readelf", "-d", "-l", "-W", elf])
        if r.returncode != 0:
            raise HarnessError(f"readelf {elf} failed: {r.stderr.strip()}")
        interp = re.search(r"\[Requesting program interpreter: (/\S+)\]", r.stdout)
        if interp and interp.group(1) not in libs:
            libs.append(interp.group(1))
        for name in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout):
            path = next((os.path.join(d, name) for d in dirs if os.path.exists(os.path.join(d, name))), None)
            if path is None:
                raise HarnessError(f"{elf} needs {name}, not in {' or '.join(dirs)}: "
                                   "install its :arm64 package (packaging/install-deps.sh --arm64)")
            if path not in libs:
                libs.append(path)
                todo.append(path)
    return libs


def shared_libraries(binary, arch="amd64"):
    """Absolute paths ldd resolves for a binary, dynamic loader included."""
    if "multiarch" in ARCHES[arch]:
        return foreign_shared_libraries(binary, ARCHES[arch]["multiarch"])
    r = run(["ldd", binary])
    if r.returncode != 0:
        if "not a dynamic executable" in r.stdout + r.stderr:
            return []
        raise HarnessError(f"ldd {binary} failed: {r.stderr.strip()}")
    libs = []
    for line in r.stdout.splitlines():
        m = re.search(r"=>\s+(/\S+)", line) or re.match(r"\s*(/\S+)\s+\(", line)
        if m:
            libs.append(m.group(1))
        elif "=> not found" in line:
            raise HarnessError(f"ldd {binary}: {line.strip()}")
    return libs


def build_initramfs(args, path, busybox):
    if shared_libraries(busybox, args.arch):
        raise HarnessError(f"{busybox} is dynamically linked: install busybox-static")
    cpio = Cpio()
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "run", "etc"):
        cpio.dir(d)
    cpio.chardev("dev/console", 5, 1)
    cpio.chardev("dev/null", 1, 3, 0o666)
    with open(args.init, "rb") as f:
        cpio.file("init", f.read(), 0o755)
    with open(busybox, "rb") as f:
        cpio.file("bin/busybox", f.read(), 0o755)
    conf = (f'TRACEPOINTS="{" ".join(TRACEPOINTS)}"\n'
            f'CACHE_DEV=/dev/nvme0n1\n'
            f'OOM_HOG_MIB={OOM_HOG_MIB}\n'
            f'OOM_HOG_COMM={OOM_HOG_COMM}\n'
            f'COMPACT_HOG_COMM={COMPACT_HOG_COMM}\n'
            f'LISTEN={LISTEN}\n'
            f'LISTEN2={LISTEN2}\n')
    cpio.file("etc/memwatchd-vm.conf", conf.encode())
    libs = set()
    for src, dst in ((args.daemon, "usr/sbin/memwatchd"), (args.memhog, "usr/bin/memhog")):
        with open(src, "rb") as f:
            cpio.file(dst, f.read(), 0o755)
        libs.update(shared_libraries(src, args.arch))
    for lib in sorted(libs):
        with open(lib, "rb") as f:  # follows symlinks: the file lands under the name ldd gave
            cpio.file(lib, f.read(), 0o755)
    data = gzip.compress(cpio.finish(), compresslevel=6)
    with open(path, "wb") as f:
        f.write(data)
    return len(data), len(libs)


# ---------------------------------------------------------------- qemu

ANSI = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|[A-Za-z])")


def boot(qemu, vmlinuz, initrd, disk, console_log, timeout, arch="amd64"):
    cmd = [qemu, "-accel", "tcg"] + ARCHES[arch]["machine"] + ["-smp", "1", "-m", str(GUEST_MIB),
           "-nographic", "-no-reboot", "-nic", "none",
           "-kernel", vmlinuz, "-initrd", initrd,
           "-drive", f"file={disk},if=none,id=cache,format=raw,readonly=on",
           "-device", "nvme,drive=cache,serial=memwatchvm",
           "-append", f"console={ARCHES[arch]['console']} panic=-1 quiet mitigations=off"]
    start = time.monotonic()
    lines = []
    with open(console_log, "wb") as out:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)

        def reader():
            for raw in p.stdout:
                out.write(raw)
                out.flush()
                text = raw.decode("utf-8", "replace").rstrip("\r\n").replace("\r", "")
                lines.append(ANSI.sub("", text))  # SeaBIOS clears the screen

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        timed_out, cpu = wait_guest(p, timeout)
        t.join(timeout=5)
    return lines, time.monotonic() - start, p.returncode, timed_out, cpu


def wait_guest(p, timeout):
    """Waits for qemu p, killed after timeout seconds: (timed out, the CPU
    seconds it used). The CPU is read from /proc every second until it exits:
    how busy a guest kept its host core, which says whether running more
    guests at once would gain anything (a guest's vCPU is one busy host thread
    under TCG, an idle one while the guest sleeps)."""
    deadline = time.monotonic() + timeout
    tick = os.sysconf("SC_CLK_TCK")
    cpu = 0.0
    while True:
        try:
            with open(f"/proc/{p.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
        left = deadline - time.monotonic()
        if left <= 0:
            p.kill()
            p.wait()
            return True, cpu
        try:
            p.wait(timeout=min(1.0, left))
            return False, cpu
        except subprocess.TimeoutExpired:
            pass

