#!/usr/bin/env python3
"""bench/harness/tasks.py - the task kernels (bench/kernels fib, nqueens,
producer, sparselu) side by side in one run: gcc -fopenmp and clang -fopenmp (the
compiler ompcc uses underneath; built here into --out) with 1 thread,
ompdsm on 1 node and on 2 nodes (shm), and ompdsm built by ompcc with gcc
as its backend (OMPDSM_CC=gcc, built here into --out) on 1 node,
repetitions interleaved (rep 1 of every configuration, then rep 2, ...)
so that load drifts hit all alike; the median time of each, the ratios
1 node / 2 nodes (speed-up) and native / 1 node (for gcc and for clang:
the goal "1 node within 10% of the native build with 1 thread" compares
like with like against clang, and against gcc with the gcc-built ompdsm),
and the load average before and after, as a markdown table for
docs/performance.md.

usage: tasks.py --build BUILD [--class S] [--reps 3] [--kernels fib,nqueens,producer,sparselu]
                [--out DIR]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys


def run(cmd, env):
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=600)
    out = r.stdout.decode()
    m = re.search(r"^Time = ([0-9.]+)", out, re.M)
    if r.returncode != 0 or not m or "Verification = SUCCESSFUL" not in out:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), out, r.stderr.decode()))
    return float(m.group(1))


def clang_of(ompcc):
    """The clang that ompcc compiles with (its --version names it)."""
    out = subprocess.run([ompcc, "--version"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT).stdout.decode()
    m = re.search(r"^clang:\s*(\S+)", out, re.M)
    return m.group(1) if m else "clang"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="the meson build directory")
    ap.add_argument("--class", dest="cls", default="S", help="S or W")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--kernels", default="fib,nqueens,producer,sparselu")
    ap.add_argument("--out", default="/tmp/ompdsm-tasks-bench",
                    help="where the clang -fopenmp and ompcc-with-gcc builds go")
    a = ap.parse_args()
    kdir = os.path.join(a.build, "bench", "kernels")
    run_cmd = os.path.join(a.build, "ompdsmrun")
    kernels = a.kernels.split(",")
    clang = clang_of(os.path.join(a.build, "ompcc"))
    os.makedirs(a.out, exist_ok=True)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels")
    ompcc = os.path.join(a.build, "ompcc")
    for k in kernels:
        # the same flags as the build's kernels (meson's debugoptimized)
        flags = ["-O2", "-g", "-DCLASS=" + a.cls, os.path.join(src, k + ".c"), "-o"]
        for cmd, env, why in (
                ([clang, "-fopenmp"] + flags + [os.path.join(a.out, "%s.%s.clang" % (k, a.cls))],
                 None, "is libomp-dev installed?"),
                ([ompcc] + flags + [os.path.join(a.out, "%s.%s.ompcc-gcc" % (k, a.cls))],
                 dict(os.environ, OMPDSM_CC="gcc"), "ompcc with OMPDSM_CC=gcc")):
            r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if r.returncode != 0:
                sys.exit("tasks.py: %s failed (%s):\n%s"
                         % (" ".join(cmd), why, r.stdout.decode()))
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("OMP_", "OMPDSM_", "GOMP_"))}
    configs = [("native1", lambda b: [b + ".native"], dict(OMP_NUM_THREADS="1")),
               ("clang1", lambda b: [os.path.join(a.out, os.path.basename(b) + ".clang")],
                dict(OMP_NUM_THREADS="1")),
               ("ompdsm1", lambda b: [run_cmd, "-np", "1", b], dict(OMPDSM_TRANSPORT="shm")),
               ("ompdsm2", lambda b: [run_cmd, "-np", "2", b], dict(OMPDSM_TRANSPORT="shm")),
               ("gompdsm1", lambda b: [run_cmd, "-np", "1",
                                       os.path.join(a.out, os.path.basename(b) + ".ompcc-gcc")],
                dict(OMPDSM_TRANSPORT="shm"))]
    times = {(k, c[0]): [] for k in kernels for c in configs}
    load0 = os.getloadavg()
    for _ in range(a.reps):
        for k in kernels:
            b = os.path.join(kdir, "%s.%s" % (k, a.cls))
            for name, cmd, extra in configs:
                env = dict(base, **extra)
                times[(k, name)].append(run(cmd(b), env))
    load1 = os.getloadavg()
    print("load average before %.2f %.2f %.2f, after %.2f %.2f %.2f" % (load0 + load1))
    print("| kernel | gcc 1 thread (s) | clang 1 thread (s) | ompdsm 1 node (s) | "
          "ompdsm 2 nodes (s) | 2 nodes vs 1 node | 1 node vs gcc 1 thread | "
          "1 node vs clang 1 thread | ompdsm by gcc 1 node (s) | "
          "1 node by gcc vs gcc 1 thread |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for k in kernels:
        n1, c1, d1, d2, g1 = (statistics.median(times[(k, c)])
                              for c in ("native1", "clang1", "ompdsm1", "ompdsm2", "gompdsm1"))
        print("| %s.%s | %.3f | %.3f | %.3f | %.3f | %.2fx | %.2fx | %.2fx | %.3f | %.2fx |"
              % (k, a.cls, n1, c1, d1, d2, d1 / d2, n1 / d1, c1 / d1, g1, n1 / g1))


if __name__ == "__main__":
    main()
