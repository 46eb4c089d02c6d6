#!/usr/bin/env python3
"""Tests of ompcc as a cc-compatible driver: --version/--help, -E, _OPENMP
and omp.h, dependency files (-M -MD -MMD -MF -MT), -c/-S/-o with one and
several sources, --keep, -x c, .i inputs, OMPDSM_CC, unknown options going
to the backend, failures leaving no output, and (with --mock-libdir) a
link whose program runs without environment tweaks.

usage: driver.py --ompcc BUILD/ompcc [--mock-libdir DIR]
Standard library only.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

PROG = r"""
#include <stdio.h>
#include <omp.h>
int shared_count;
int main(void)
{
#pragma omp parallel
    {
#pragma omp atomic
        shared_count++;
    }
    printf("openmp %d count>0 %d\n", _OPENMP, shared_count > 0);
    return 0;
}
"""

HELPER = r"""
int helper(int x) { return x * VALUE; }
"""

# a directive ompcc ignores with a warning
WARN = r"""
int main(void)
{
    int i, a[8];
#pragma omp simd
    for (i = 0; i < 8; i++)
        a[i] = i;
    return a[7] - 7;
}
"""

# C allows UTF-8 identifiers, in clauses too
UTF8 = """
int main(void)
{
    int i, caf\u00e9 = 0, \u03bb = 2;
#pragma omp parallel for reduction(+:caf\u00e9) firstprivate(\u03bb) schedule(static, \u03bb)
    for (i = 0; i < 10; i++)
        caf\u00e9 += i * \u03bb;
    return caf\u00e9 == 90 ? 0 : 1;
}
"""

failures = []


def check(cond, what, detail=""):
    print("%s %s" % ("PASS" if cond else "FAIL", what))
    if not cond:
        failures.append(what)
        if detail:
            print("    " + detail.replace("\n", "\n    "))


def run(cmd, cwd, env=None, extra_env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("OMPDSM_")}
    if env is not None:
        e = env
    if extra_env:
        e.update(extra_env)
    r = subprocess.run(cmd, cwd=cwd, env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return r.returncode, r.stdout.decode(errors="replace"), \
        r.stderr.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ompcc", required=True)
    ap.add_argument("--mock-libdir", default="")
    args = ap.parse_args()
    ompcc = os.path.abspath(args.ompcc)
    d = tempfile.mkdtemp(prefix="ompcc-driver-")
    try:
        with open(os.path.join(d, "prog.c"), "w") as f:
            f.write(PROG)
        with open(os.path.join(d, "helper.c"), "w") as f:
            f.write(HELPER)
        with open(os.path.join(d, "bad.c"), "w") as f:
            f.write("int main(void) { return undeclared_thing; }\n")
        with open(os.path.join(d, "warn.c"), "w") as f:
            f.write(WARN)
        with open(os.path.join(d, "utf8.c"), "wb") as f:
            f.write(UTF8.encode())
        os.mkdir(os.path.join(d, "out"))

        rc, out, err = run([ompcc, "--version"], d)
        check(rc == 0 and out.startswith("ompcc (ompdsm)"), "--version", out + err)
        rc, out, err = run([ompcc, "--help"], d)
        check(rc == 0 and "Usage: ompcc" in out and "--keep" in out, "--help", out + err)
        rc, out, err = run([ompcc], d)
        check(rc == 1 and "no input files" in err, "no input files", err)

        rc, out, err = run([ompcc, "-E", "prog.c"], d)
        check(rc == 0 and "200805" in out and "#pragma omp parallel" in out,
              "-E: _OPENMP is 200805 and directives are kept", err)
        check("omp_get_thread_num" in out and "omp_lock_t" in out,
              "-E: #include <omp.h> finds ompdsm's omp.h", err)
        rc, out, err = run([ompcc, "-E", "-DVALUE=7", "-UNOTHING", "helper.c",
                            "-o", "helper.i"], d)
        with open(os.path.join(d, "helper.i")) as f:
            check(rc == 0 and "x * 7" in f.read(), "-E -D ... -o file", err)

        rc, out, err = run([ompcc, "-M", "prog.c"], d)
        check(rc == 0 and "prog.o:" in out and "omp.h" in out, "-M", out + err)
        rc, out, err = run([ompcc, "-c", "-MMD", "-MF", "deps.d", "-MT", "tgt",
                            "prog.c", "-o", "out/p.o"], d)
        dep = open(os.path.join(d, "deps.d")).read() if os.path.exists(
            os.path.join(d, "deps.d")) else ""
        check(rc == 0 and dep.startswith("tgt:") and "prog.c" in dep and
              os.path.exists(os.path.join(d, "out/p.o")),
              "-c -MMD -MF -MT: dependencies from the preprocessing step", dep + err)
        rc, out, err = run([ompcc, "-c", "-MD", "prog.c", "-o", "out/q.o"], d)
        dep = os.path.join(d, "out/q.d")
        check(rc == 0 and os.path.exists(dep) and
              open(dep).read().startswith("out/q.o:"),
              "-MD without -MF writes out/q.d for target out/q.o", err)

        rc, out, err = run([ompcc, "-c", "-DVALUE=3", "prog.c", "helper.c"], d)
        check(rc == 0 and os.path.exists(os.path.join(d, "prog.o")) and
              os.path.exists(os.path.join(d, "helper.o")),
              "-c with two sources makes prog.o and helper.o", err)
        rc, out, err = run([ompcc, "-c", "prog.c", "helper.c", "-o", "x.o"], d)
        check(rc == 1 and "several source files" in err, "-c -o with two sources", err)
        rc, out, err = run([ompcc, "-S", "-DVALUE=3", "helper.c"], d)
        check(rc == 0 and os.path.exists(os.path.join(d, "helper.s")), "-S", err)

        rc, out, err = run([ompcc, "-c", "-k", "prog.c", "-o", "out/kept.o"], d)
        check(rc == 0 and os.path.exists(os.path.join(d, "out/prog.ompdsm.c")),
              "--keep puts NAME.ompdsm.c beside the output", err)
        kept = open(os.path.join(d, "out/prog.ompdsm.c")).read() if rc == 0 else ""
        check("OMPDSM_parallel" in kept and "__ompdsm_region_main_" in kept,
              "the kept file is the translation", "")

        shutil.copy(os.path.join(d, "helper.c"), os.path.join(d, "helper.txt"))
        rc, out, err = run([ompcc, "-c", "-DVALUE=2", "-x", "c", "helper.txt",
                            "-x", "none", "-o", "out/h.o"], d)
        check(rc == 0 and os.path.exists(os.path.join(d, "out/h.o")), "-x c", err)
        rc, out, err = run([ompcc, "-c", "helper.i", "-o", "out/hi.o"], d)
        check(rc == 0 and os.path.exists(os.path.join(d, "out/hi.o")),
              "a preprocessed .i input is translated directly", err)

        rc, out, err = run([ompcc, "-v", "-c", "-fopenmp", "-O2", "-g", "-Wall",
                            "-fno-strict-aliasing", "-std=gnu99", "prog.c",
                            "-o", "out/v.o"], d)
        check(rc == 0 and " -O2" in err and "-fno-strict-aliasing" in err and
              "-std=gnu99" in err and "-fopenmp" not in err.replace("-fopenmp-", ""),
              "-v shows the steps; -O/-g/-W/-f/-std reach the backend, -fopenmp "
              "is implied", err)
        cc = shutil.which("clang-19") or "/usr/lib/llvm-19/bin/clang"
        rc, out, err = run([ompcc, "-v", "-c", "prog.c", "-o", "out/cc.o"], d,
                           extra_env={"OMPDSM_CC": cc + " -DFROM_OMPDSM_CC"})
        check(rc == 0 and any(l.startswith(cc + " -DFROM_OMPDSM_CC")
                              for l in err.splitlines()),
              "OMPDSM_CC selects the backend", err)
        rc, out, err = run([ompcc, "-c", "--no-such-option-at-all", "helper.c",
                            "-DVALUE=1", "-o", "out/u.o"], d)
        check(rc != 0 and "no-such-option-at-all" in err and
              not os.path.exists(os.path.join(d, "out/u.o")),
              "unknown options go to the backend", err)

        rc, out, err = run([ompcc, "-c", "utf8.c", "-o", "out/utf8.o"], d)
        check(rc == 0 and os.path.exists(os.path.join(d, "out/utf8.o")),
              "UTF-8 identifiers in clauses", err)

        rc, out, err = run([ompcc, "-c", "warn.c", "-o", "out/w.o"], d)
        check(rc == 0 and "warn.c:5:" in err and ": warning:" in err,
              "ompcc's own warning (an ignored directive)", err)
        rc, out, err = run([ompcc, "-w", "-c", "warn.c", "-o", "out/w.o"], d)
        check(rc == 0 and "warning" not in err, "-w silences ompcc's warnings", err)
        os.unlink(os.path.join(d, "out/w.o"))
        rc, out, err = run([ompcc, "-c", "warn.c", "-o", "out/w.o", "-Werror"], d)
        check(rc == 1 and "warn.c:5:" in err and ": error:" in err and
              not os.path.exists(os.path.join(d, "out/w.o")),
              "-Werror makes ompcc's warnings errors (exit 1, no object)", err)
        rc, out, err = run([ompcc, "-c", "-Werror", "-Wno-error", "warn.c",
                            "-o", "out/w.o"], d)
        check(rc == 0 and ": warning:" in err, "-Wno-error undoes -Werror", err)

        rc, out, err = run([ompcc, "-c", "bad.c", "-o", "out/bad.o"], d)
        check(rc == 1 and "bad.c:1:" in err and
              not os.path.exists(os.path.join(d, "out/bad.o")),
              "a bad program: exit 1, diagnostic names the file, no object", err)

        if args.mock_libdir:
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("OMPDSM_", "OMP_"))}
            env["OMPDSM_LIBDIR"] = os.path.abspath(args.mock_libdir)
            rc, out, err = run([ompcc, "-O1", "prog.c", "-DVALUE=4", "-o",
                                "out/prog"], d, env=env)
            check(rc == 0, "compile and link", err)
            env.pop("OMPDSM_LIBDIR")
            env.pop("LD_LIBRARY_PATH", None)
            rc, out, err = run([os.path.join(d, "out/prog")], d, env=env)
            check(rc == 0 and out == "openmp 200805 count>0 1\n",
                  "the program runs (rpath to the runtime)", out + err)
            rc, out, err = run([ompcc, "prog.o", "helper.o", "-o", "out/objs",
                                "-lm"], d, extra_env={"OMPDSM_LIBDIR":
                                                      os.path.abspath(args.mock_libdir)})
            check(rc == 0 and os.path.exists(os.path.join(d, "out/objs")),
                  "linking objects (and -l) only", err)
            mock = {"OMPDSM_LIBDIR": os.path.abspath(args.mock_libdir)}
            for opts in (["-lgomp"], ["-l", "omp"], ["-fopenmp=libgomp"]):
                rc, out, err = run([ompcc, "-v", "prog.o"] + opts +
                                   ["-o", "out/g1"], d, extra_env=mock)
                steps = [l.split() for l in err.splitlines() if "-lompdsm" in l]
                check(rc == 0 and "warning: '%s" % "".join(opts) in err and
                      steps and not {"-lgomp", "-lomp", "omp",
                                     "-fopenmp=libgomp"} & set(steps[0]),
                      "%s is dropped with a warning" % " ".join(opts), err)
            rc, out, err = run([ompcc, "prog.o", "-lgomp", "-o", "out/gw",
                                "-w"], d, extra_env=mock)
            check(rc == 0 and err == "", "-w silences the -lgomp warning", err)
            rc, out, err = run([ompcc, "-Werror", "prog.o", "-lgomp", "-o",
                                "out/ge"], d, extra_env=mock)
            check(rc == 1 and "error: '-lgomp' dropped" in err and
                  not os.path.exists(os.path.join(d, "out/ge")),
                  "-Werror: -lgomp is an error", err)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
