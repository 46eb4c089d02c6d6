#!/usr/bin/env python3
"""Runs the OpenMP test programs (tests/omp/*.c and tests/omp/mtu_*/, a
template's instances each with its flags: tests/omp/conformance.py finds
them) compiled by ompcc and linked with the translator's mock runtime
(pthreads, one process: tests the translation, not the DSM), and compares
their output with the same programs built by `gcc -fopenmp`.

usage: omp_mock.py --ompcc BUILD/ompcc --mock-libdir DIR [--threads N]
                   [--compile-only] [--xfail NAME] [-j JOBS] [-v] [PROGRAM ...]

With --compile-only, only checks that `ompcc -c -Wall -Wextra` translates
and compiles every program without a warning.  --xfail NAME marks a
program expected to fail with the mock runtime (reported as XFAIL; an
unexpected pass is reported too).  Exit status: 0 all passed, 1 something
failed, 77 nothing to test.  Standard library only.
"""

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OMP_DIR = os.path.normpath(os.path.join(HERE, "..", "omp"))
sys.path.insert(0, OMP_DIR)
import conformance  # noqa: E402  (the programs, as the omp suite sees them)


def programs(paths):
    if not paths:
        return conformance.discover(OMP_DIR) if os.path.isdir(OMP_DIR) else []
    progs = []
    for p in paths:
        progs.extend(conformance.programs_from_path(p))
    return progs


def run(cmd, env=None, timeout=120, cwd=None):
    try:
        r = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
        return r.returncode, r.stdout.decode(errors="replace"), \
            r.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return -1, "", "timeout after %ds" % timeout


def clean_env(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMP_", "GOMP_", "OMPDSM_"))}
    env.update(extra)
    return env


def check(prog, args, tmp):
    name, srcs, incdir, flags = prog.name, prog.sources, prog.incdir, prog.cflags
    d = tempfile.mkdtemp(prefix=name + "-", dir=tmp)
    if args.compile_only:
        for s in srcs:
            rc, out, err = run([args.ompcc, "-c", "-Wall", "-Wextra", "-O1"] + flags +
                               ["-I", incdir, s, "-o",
                                os.path.join(d, os.path.basename(s) + ".o")])
            if rc != 0:
                return name, "FAIL", "ompcc -c %s:\n%s" % (s, err)
            if "warning:" in err:
                return name, "FAIL", "warnings from ompcc -c %s:\n%s" % (s, err)
        return name, "PASS", ""
    native = os.path.join(d, "native")
    rc, out, err = run(["gcc", "-fopenmp", "-O1"] + flags + ["-I", incdir] + srcs +
                       ["-o", native, "-lm"])
    if rc != 0:
        return name, "SKIP", "gcc -fopenmp failed:\n" + err
    mine = os.path.join(d, "ompdsm")
    env = clean_env({"OMPDSM_LIBDIR": args.mock_libdir})
    rc, out, err = run([args.ompcc, "-O1"] + flags + ["-I", incdir] + srcs +
                       ["-o", mine, "-lm"], env=env)
    if rc != 0:
        return name, "FAIL", "ompcc failed:\n" + err
    env = clean_env({"OMP_NUM_THREADS": str(args.threads)})
    nrc, nout, nerr = run([native], env=env, cwd=d)
    mrc, mout, merr = run([mine], env=env, cwd=d)
    if nrc != 0:
        return name, "SKIP", "native run failed (%d):\n%s%s" % (nrc, nout, nerr)
    if mrc != nrc or mout != nout:
        return name, "FAIL", ("status %d (native %d)\n--- ompcc+mock stdout\n%s"
                              "--- native stdout\n%s--- stderr\n%s" %
                              (mrc, nrc, mout, nout, merr))
    return name, "PASS", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ompcc", required=True)
    ap.add_argument("--mock-libdir", default="")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--xfail", action="append", default=[])
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("programs", nargs="*")
    args = ap.parse_args()
    progs = programs(args.programs)
    if not progs:
        print("no OpenMP test programs found")
        return 77
    if not args.compile_only and not shutil.which("gcc"):
        print("gcc not found: cannot compare with gcc -fopenmp")
        return 77
    tmp = tempfile.mkdtemp(prefix="ompcc-mock-")
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0, "XFAIL": 0, "XPASS": 0}
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            for name, status, detail in ex.map(lambda p: check(p, args, tmp),
                                               progs):
                if name in args.xfail and status in ("PASS", "FAIL"):
                    status = "XPASS" if status == "PASS" else "XFAIL"
                counts[status] += 1
                print("%-4s %s" % (status, name))
                if detail and (status == "FAIL" or args.verbose):
                    print("     " + detail.replace("\n", "\n     "))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed, %d skipped, %d expected failures, "
          "%d unexpected passes" % (counts["PASS"], counts["FAIL"], counts["SKIP"],
                                    counts["XFAIL"], counts["XPASS"]))
    if counts["FAIL"]:
        return 1
    return 0 if counts["PASS"] else 77


if __name__ == "__main__":
    sys.exit(main())
