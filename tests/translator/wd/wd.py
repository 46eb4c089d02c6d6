#!/usr/bin/env python3
"""tests/translator/wd/wd.py - tests of ompcc's write-detection pass
(translator/wdpass, ompdsm-wd.so), one part per meson test:

  stores    stores.c + stores_other.c with the pass at -O0, -O2, -O3, with
            -mavx2 and -mavx512f (when the CPU has them), with the loop
            optimisation on and off, linked with wdrt.c (the stand-in
            runtime, without the pass): every case's check passes
  guard     guard.c (+ stores_other.c, + extlib.c without the pass) at -O0
            and -O2, with and without -fexceptions: the guards' callees,
            arguments and tokens
  weak      weak.c with the pass and no runtime symbols at all: runs as
            without the pass
  loop-ir   loop.c through FileCheck: one OMPDSM_wd_mark after a contiguous
            loop, none in it (and per-store marks with the optimisation off);
            a function with a loop gets a plain copy without marks that its
            entry calls while the runtime's size is 0, one without a loop not
  alias     globalias.c through FileCheck: the shared globals' alias
            scopes (globalias.cpp) let LICM move a global scalar's load out
            of a loop that stores to another shared global, and not out of
            one that stores through a parameter; without them
            (-ompdsm-global-scopes=false) the load stays in both
  overhead  overhead.c under callgrind: the kernels' extra instructions per
            stored element at -O2, with the optimisation on and off, printed
            and bounded (77 without valgrind)
  ompcc     ompcc loads the pass (-v shows it), --no-write-detection and
            OMPDSM_WD_COMPILE=off leave it out, a bad value is an error, the
            gcc backend gets nothing, -mllvm reaches the pass

usage: wd.py PART --src DIR --plugin PATH --llvm-bindir DIR [--ompcc PATH]
Standard library only.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The bounds of the overhead part: extra instructions per stored element at
# -O2 (docs/ompcc.md has the measured numbers).
MAX_PER_STORE_LOOPS = 1.0    # loop optimisation on
MAX_PER_STORE_EACH = 30.0    # a mark before and after every store


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)


class Ctx:
    def __init__(self, args, tmp):
        self.src = os.path.abspath(args.src)
        self.plugin = os.path.abspath(args.plugin)
        self.clang = os.path.join(args.llvm_bindir, "clang")
        self.filecheck = os.path.join(args.llvm_bindir, "FileCheck")
        self.ompcc = args.ompcc and os.path.abspath(args.ompcc)
        self.tmp = tmp
        self.failures = 0

    def path(self, name):
        return os.path.join(self.src, name)

    def fail(self, msg):
        print("FAIL: " + msg)
        self.failures += 1

    def compile(self, out, sources, flags, wd=True, link=True):
        """clang-19 FLAGS [the pass] SOURCES -o OUT; None on failure."""
        cmd = [self.clang] + flags + ["-Wall", "-Werror", "-I", self.src]
        if wd:
            cmd += ["-fplugin=" + self.plugin, "-fpass-plugin=" + self.plugin]
        if not link:
            cmd.append("-c")
        cmd += sources + ["-o", out]
        r = run(cmd)
        if r.returncode != 0:
            self.fail("%s: %s" % (" ".join(cmd), r.stdout.strip()))
            return None
        return out

    def runtime(self):
        """wdrt.o and extlib.o, without the pass."""
        if not hasattr(self, "_rt"):
            self._rt = (self.compile(os.path.join(self.tmp, "wdrt.o"),
                                     [self.path("wdrt.c")], ["-O2"], wd=False, link=False),
                        self.compile(os.path.join(self.tmp, "extlib.o"),
                                     [self.path("extlib.c")], ["-O2"], wd=False, link=False))
        return self._rt


def cpu_flags():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def part_stores(c):
    rt, _ = c.runtime()
    if not rt:
        return
    have = cpu_flags()
    nolo = ["-mllvm", "-ompdsm-wd-loops=false"]
    variants = [["-O0"], ["-O2"], ["-O2"] + nolo, ["-O3"], ["-O3", "-mavx2"],
                ["-O0", "-mavx512f"], ["-O3", "-mavx512f"], ["-O3", "-mavx512f"] + nolo]
    cases = None
    for v in variants:
        isa = [f[2:] for f in v if f.startswith("-mavx")]
        name = " ".join(v)
        if isa and isa[0] not in have:
            print("skip %s: the CPU has no %s" % (name, isa[0]))
            continue
        exe = c.compile(os.path.join(c.tmp, "stores"), [c.path("stores.c"),
                        c.path("stores_other.c"), rt], v)
        if not exe:
            continue
        r = run([exe], timeout=300)
        m = re.search(r"^(\d+) cases, (\d+) failed$", r.stdout, re.M)
        bad = [l for l in r.stdout.splitlines() if l.startswith("FAIL")]
        if r.returncode != 0 or not m or m.group(2) != "0" or bad:
            c.fail("stores %s: exit %d\n%s" % (name, r.returncode, r.stdout))
            continue
        if cases is not None and int(m.group(1)) != cases:
            c.fail("stores %s: %s cases, %d with other flags" % (name, m.group(1), cases))
        cases = int(m.group(1))
        print("ok stores %s: %s cases" % (name, m.group(1)))


def part_guard(c):
    rt, ext = c.runtime()
    if not rt or not ext:
        return
    for v in (["-O0"], ["-O2"], ["-O0", "-fexceptions"], ["-O2", "-fexceptions"]):
        name = " ".join(v)
        exe = c.compile(os.path.join(c.tmp, "guard"), [c.path("guard.c"),
                        c.path("stores_other.c"), ext, rt], v)
        if not exe:
            continue
        r = run([exe], timeout=60)
        oks = len(re.findall(r"^ok ", r.stdout, re.M))
        if r.returncode != 0 or "FAIL" in r.stdout or oks < 10:
            c.fail("guard %s: exit %d, %d checks passed\n%s" % (name, r.returncode, oks,
                                                               r.stdout))
        else:
            print("ok guard %s: %d checks" % (name, oks))


def part_weak(c):
    want = None
    for wd in (False, True):
        for v in (["-O0"], ["-O2"]):
            exe = c.compile(os.path.join(c.tmp, "weak"), [c.path("weak.c")], v, wd=wd)
            if not exe:
                return
            r = run([exe], timeout=60)
            if r.returncode != 0:
                c.fail("weak %s (pass %s): exit %d\n%s" % (" ".join(v), wd, r.returncode,
                                                         r.stdout))
                continue
            if want is None:
                want = r.stdout
            elif r.stdout != want:
                c.fail("weak %s (pass %s): %r, without the pass %r" % (" ".join(v), wd,
                                                                    r.stdout, want))
                continue
            print("ok weak %s (pass %s)" % (" ".join(v), "on" if wd else "off"))


def part_loop_ir(c):
    if not os.access(c.filecheck, os.X_OK):
        print("SKIP: no %s (Debian package llvm-19-tools)" % c.filecheck)
        return 77
    noplain = ["-mllvm", "-ompdsm-wd-plain=false"]
    for prefix, extra in (("LOOP", noplain), ("EACH", noplain + ["-mllvm", "-ompdsm-wd-loops=false"]),
                          ("PLAIN", [])):
        filecheck_ir(c, "loop.c", prefix, extra, "loop-ir")
    return 0


def filecheck_ir(c, src, prefix, flags, part):
    """SRC compiled with the pass at -O2 (no vectorising or unrolling) to
    IR, through FileCheck with its PREFIX lines."""
    ll = os.path.join(c.tmp, os.path.splitext(src)[0] + ".ll")
    if not c.compile(ll, [c.path(src)], ["-O2", "-fno-vectorize", "-fno-unroll-loops",
                                         "-S", "-emit-llvm"] + flags, link=False):
        return
    with open(ll) as f:
        r = run([c.filecheck, "--check-prefix=" + prefix, c.path(src)], stdin=f)
    if r.returncode != 0:
        c.fail("FileCheck %s:\n%s" % (prefix, r.stdout))
    else:
        print("ok %s %s" % (part, prefix))


def part_alias(c):
    if not os.access(c.filecheck, os.X_OK):
        print("SKIP: no %s (Debian package llvm-19-tools)" % c.filecheck)
        return 77
    for prefix, on in (("SCOPES", "true"), ("NOSCOPES", "false")):
        filecheck_ir(c, "globalias.c", prefix,
                     ["-mllvm", "-ompdsm-wd-plain=false", "-mllvm", "-ompdsm-global-scopes=" + on],
                     "alias")
    return 0


def callgrind_counts(c, exe):
    """{function: instructions} of the kernel_* functions, and stdout."""
    out = os.path.join(c.tmp, "callgrind.out")
    r = run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, exe],
            timeout=600)
    if r.returncode != 0:
        c.fail("valgrind %s: exit %d\n%s" % (exe, r.returncode, r.stdout))
        return None, ""
    a = run(["callgrind_annotate", out])
    counts = {}
    for m in re.finditer(r"^\s*([\d,]+) .*?(kernel_\w+)", a.stdout, re.M):
        counts[m.group(2)] = int(m.group(1).replace(",", ""))
    return counts, r.stdout


def part_overhead(c):
    if not shutil.which("valgrind") or not shutil.which("callgrind_annotate"):
        print("SKIP: no valgrind")
        return 77
    rt, _ = c.runtime()
    if not rt:
        return 1
    builds = (("without the pass", False, []), ("loop optimisation on", True, []),
              ("a mark per store", True, ["-mllvm", "-ompdsm-wd-loops=false"]))
    counts = {}
    stores = None
    for name, wd, extra in builds:
        exe = c.compile(os.path.join(c.tmp, "overhead"), [c.path("overhead.c"), rt],
                        ["-O2"] + extra, wd=wd)
        if not exe:
            return 1
        counts[name], out = callgrind_counts(c, exe)
        m = re.search(r"stencil (\d+) matvec (\d+)", out)
        if not counts[name] or not m:
            c.fail("overhead %s: no counts (%r)" % (name, out))
            return 1
        stores = {"kernel_stencil": int(m.group(1)), "kernel_matvec": int(m.group(2))}
    base = counts["without the pass"]
    for name, limit in (("loop optimisation on", MAX_PER_STORE_LOOPS),
                        ("a mark per store", MAX_PER_STORE_EACH)):
        for k in sorted(stores):
            extra = (counts[name][k] - base[k]) / stores[k]
            print("%s, %s: %d instructions, %d without the pass, %.2f more per stored "
                  "element (%d stores)" % (k, name, counts[name][k], base[k], extra, stores[k]))
            if extra > limit:
                c.fail("%s, %s: %.2f extra instructions per store, more than %.1f"
                       % (k, name, extra, limit))
    return 0


def part_ompcc(c):
    if not c.ompcc:
        c.fail("ompcc: --ompcc missing")
        return
    prog = os.path.join(c.tmp, "p.c")
    with open(prog, "w") as f:
        f.write("double *a;\nint main(void) {\n#pragma omp parallel for\n"
                "for (int i = 0; i < 8; i++) a[i] = i;\nreturn 0; }\n")
    obj = os.path.join(c.tmp, "p.o")
    env = dict(os.environ)
    env.pop("OMPDSM_WD_COMPILE", None)
    env.pop("OMPDSM_CC", None)

    def ompcc(args, **extra_env):
        e = dict(env, **extra_env)
        return run([c.ompcc] + args, env=e, cwd=c.tmp)

    plug = "-fpass-plugin=" + c.plugin
    checks = [
        ("default: -v shows the pass", ["-v", "-c", prog, "-o", obj], {}, True),
        ("--no-write-detection", ["-v", "--no-write-detection", "-c", prog, "-o", obj], {},
         False),
        ("OMPDSM_WD_COMPILE=off", ["-v", "-c", prog, "-o", obj],
         {"OMPDSM_WD_COMPILE": "off"}, False),
        ("OMPDSM_WD_COMPILE=on", ["-v", "-c", prog, "-o", obj],
         {"OMPDSM_WD_COMPILE": "on"}, True),
        ("a clang-19 named by OMPDSM_CC", ["-v", "-c", prog, "-o", obj],
         {"OMPDSM_CC": c.clang}, True),
    ]
    if shutil.which("gcc"):
        checks.append(("gcc backend: no pass", ["-v", "-c", prog, "-o", obj],
                       {"OMPDSM_CC": "gcc"}, False))
    for name, args, e, want in checks:
        r = ompcc(args, **e)
        compiles = [l for l in r.stdout.splitlines() if " -c " in l and ".ompdsm.c" in l]
        has = any(plug in l for l in compiles)
        if r.returncode != 0 or not compiles or has != want:
            c.fail("ompcc %s: exit %d, pass %s in the compile\n%s" % (
                name, r.returncode, "loaded" if has else "not loaded", r.stdout))
        else:
            print("ok ompcc %s" % name)
    r = ompcc(["-c", prog, "-o", obj], OMPDSM_WD_COMPILE="maybe")
    if r.returncode != 1 or "OMPDSM_WD_COMPILE='maybe'" not in r.stdout:
        c.fail("ompcc OMPDSM_WD_COMPILE=maybe: exit %d\n%s" % (r.returncode, r.stdout))
    else:
        print("ok ompcc OMPDSM_WD_COMPILE=maybe is an error")
    # -mllvm goes to the compile (where the pass knows it), not to the link
    exe = os.path.join(c.tmp, "p")
    r = ompcc(["-O2", "-mllvm", "-ompdsm-wd-report", prog, "-o", exe])
    if r.returncode != 0 or "ompdsm-wd: " not in r.stdout:
        c.fail("ompcc -mllvm -ompdsm-wd-report: exit %d\n%s" % (r.returncode, r.stdout))
    else:
        print("ok ompcc -mllvm reaches the pass")


PARTS = {"stores": part_stores, "guard": part_guard, "weak": part_weak,
         "loop-ir": part_loop_ir, "overhead": part_overhead, "ompcc": part_ompcc,
         "alias": part_alias}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("part", choices=sorted(PARTS))
    ap.add_argument("--src", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--llvm-bindir", required=True)
    ap.add_argument("--ompcc")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="wd-")
    try:
        c = Ctx(args, tmp)
        rc = PARTS[args.part](c) or 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if c.failures:
        print("%d failures" % c.failures)
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
