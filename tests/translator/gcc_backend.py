#!/usr/bin/env python3
"""ompcc with gcc as its backend (OMPDSM_CC=gcc, --backend=gcc): gcc
preprocesses (the translated file holds glibc's headers as gcc sees them,
so gcc accepts it), libclang parses gcc's text, and every cc mode works:
-E, -M/-MM, -MD, -S, -c, several sources, a .i input, the link.  Then a
few tests/omp conformance programs built by ompcc with OMPDSM_CC=gcc run
on 2 nodes and must print what the gcc -fopenmp build prints with 2
threads (tests/omp/conformance.py, the oracle of the omp suite).

Before ompcc let gcc preprocess (804638f), 15 of the 24 checks and all 10
programs failed.

Exit 77 (skip) only when there is no gcc on PATH (or 'gcc' is not GNU C).

usage: gcc_backend.py --ompcc OMPCC --ompdsmrun OMPDSMRUN [--programs a,b]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE = os.path.join(HERE, "..", "omp", "conformance.py")

# tasks, reductions, threadprivate/copyin, shared globals of struct type,
# copyprivate, dynamic schedules, VLAs, a program of several files, and
# globals initialised with system headers' macros (gcc -E puts line
# markers between their '=' and the expansion: an internal error before)
PROGRAMS = ("task_fib,task_sparselu,reduction_double,threadprivate_copyin,"
            "global_struct_union,single_copyprivate,sched_dynamic_chunk,"
            "data_vla_local,atomic_double,mtu_threadprivate,global_init_macros")

HEADER = "#define N 4\n#define VAL 100\n"

MAIN = r"""#include "h.h"
#include <stdio.h>
int helper(int);
int main(void)
{
    int s = 0;
#pragma omp parallel for reduction(+:s) num_threads(N)
    for (int i = 0; i < VAL; i++)
        s += helper(i);
    printf("%d\n", s);
    return 0;
}
"""

# gcc's predefined macros, not clang's: __GNUC__ is gcc's version (clang
# says 4) and __clang_major__ is left alone: an undeclared identifier, which
# the translation must report as gcc would (libclang must not expand it)
WHICH = r"""int gnuc = __GNUC__, clang_major = __clang_major__;
int main(void)
{
#pragma omp parallel
    gnuc += 0;
    return gnuc * 0 + clang_major * 0;
}
"""

HELPER = r"""int helper(int x)
{
    int r;
#pragma omp critical
    r = x;
    return r;
}
"""

# glibc's headers as gcc sees them (_Float32 ... _Float128 are gcc's
# keywords, __malloc__(fclose, 1)), gcc's own x86 intrinsics (clang rejects
# parts of them: ompcc leaves gcc's system headers to gcc), the TS 18661-3
# types and an x86 address-space keyword in the program itself
MATHS = r"""#define _GNU_SOURCE
#include <complex.h>
#include <emmintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
_Float64 g64 = 2.5;
int __seg_gs *gs_ptr; /* gcc's keyword, clang's macro */
int main(void)
{
    double a[64], s = 0;
    _Float32 f = 1.5f;
    double complex z = 0;
    char *dup = strdup("x");
    for (int i = 0; i < 64; i++)
        a[i] = i;
#pragma omp parallel for reduction(+:s) firstprivate(f)
    for (int i = 0; i < 64; i += 2) {
        __m128d v = _mm_loadu_pd(&a[i]);
        double t[2];
        _mm_storeu_pd(t, _mm_add_pd(v, _mm_set1_pd(f)));
        s += t[0] + t[1];
    }
#pragma omp parallel
    {
#pragma omp critical
        z += I * g64;
    }
    printf("%g %g %d %s %d\n", s, cimag(z) / omp_get_num_threads(),
           (int)sqrtf32((_Float32)16), dup, gs_ptr == 0);
    free(dup);
    return 0;
}
"""

failures = []


# -fopt-info-vec on two loops of gcc's translation (gcc names a loop by
# its `for` line)
ALIAS = r"""void fill(double *);
double a[4096], b[4096];
void globals(int n)
{
    for (int i = 0; i < n; i++) /* ALIAS_GLOBAL */
        a[i] = b[i] * 2.0 + 1.0;
}
double local(const double *u, int n)
{
    double t[4096], s = 0.0;
    fill(t);
#pragma omp parallel for reduction(+: s)
    for (int i = 0; i < 8; i++)
        s += t[i];
    for (int i = 0; i < n; i++) /* ALIAS_LOCAL */
        t[i] = u[i] * 3.0;
    return s + t[n / 2];
}
"""
ALIAS_GLOBAL_LINE = next(i + 1 for i, l in enumerate(ALIAS.splitlines())
                         if "ALIAS_GLOBAL" in l)
ALIAS_LOCAL_LINE = next(i + 1 for i, l in enumerate(ALIAS.splitlines())
                        if "ALIAS_LOCAL" in l)


def check(cond, what, detail=""):
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        failures.append(what)
        if detail:
            print("    " + detail.strip().replace("\n", "\n    ")[:3000])


def run(cmd, cwd, env=None, timeout=120):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run(cmd, cwd=cwd, env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def clean_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("OMP_", "OMPDSM_", "GOMP_", "KMP_"))}


def run_clean(cmd, cwd, extra):
    env = clean_env()
    env.update(extra)
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def built_by_clang(path):
    with open(path, "rb") as f:
        return b"clang version" in f.read()


def driver_checks(ompcc, ompdsmrun, d):
    gcc = {"OMPDSM_CC": "gcc"}
    for name, text in (("h.h", HEADER), ("a.c", MAIN), ("b.c", HELPER),
                       ("maths.c", MATHS), ("which.c", WHICH)):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)

    rc, out, err = run([ompcc, "--version"], d, gcc)
    check(rc == 0 and "backend: gcc (GNU C" in out,
          "--version: OMPDSM_CC=gcc is recognised as GNU C", out + err)
    rc, out, err = run([ompcc, "--backend=gcc", "--version"], d, {"OMPDSM_CC": ""})
    check(rc == 0 and "backend: gcc (GNU C" in out, "--backend=gcc", out + err)
    rc, out, err = run([ompcc, "--version"], d, {"OMPDSM_CC": ""})
    check(rc == 0 and "GNU C" not in out, "clang stays the default backend", out + err)

    rc, out, err = run([ompcc, "-E", "a.c"], d, gcc)
    check(rc == 0 and "num_threads(4)" in out and "i < 100" in out,
          "-E: gcc expands macros in '#pragma omp' lines", err)
    check("typedef long double _Float64x" not in out and "struct _IO_FILE" in out,
          "-E: gcc preprocessed <stdio.h> (no glibc typedef for _Float64x, "
          "which clang -E has and gcc rejects)", err)
    rc, out, err = run([ompcc, "-E", "which.c"], d, gcc)
    m = re.search(r"int gnuc = (\d+), clang_major = __clang_major__;", out)
    check(rc == 0 and m and int(m.group(1)) >= 5,
          "-E: gcc's predefined macros, not clang's", out + err)
    rc, out, err = run([ompcc, "-c", "which.c", "-o", "which.o"], d, gcc)
    check(rc == 1 and "which.c:1:" in err and "__clang_major__" in err and
          "internal error" not in err,
          "libclang does not expand clang's macros in gcc's text: "
          "__clang_major__ is an undeclared identifier, as for gcc", err)

    rc, out, err = run([ompcc, "-v", "-k", "-O2", "maths.c", "-o", "maths"], d, gcc)
    check(rc == 0 and os.path.exists(os.path.join(d, "maths")),
          "glibc's and gcc's headers (complex.h, math.h, emmintrin.h), "
          "_Float32/_Float64 in the program: translated and compiled by gcc", err)
    steps = err.splitlines()
    check(any(l.startswith("gcc -E ") for l in steps) and
          not any(" -E " in l and "clang" in l for l in steps),
          "-v: gcc preprocesses, not clang", err)
    kept = os.path.join(d, "maths.ompdsm.c")
    text = open(kept).read() if os.path.exists(kept) else ""
    check("OMPDSM_parallel" in text and "typedef long double _Float64x" not in text,
          "the kept translation holds gcc's headers", "")
    if rc == 0:
        rc1, out1, err1 = run_clean([ompdsmrun, "-np", "2", "./maths"], d,
                                    {"OMPDSM_TRANSPORT": "shm"})
        rcn, outn, errn = run(["gcc", "-fopenmp", "-O2", "maths.c", "-o", "maths.native",
                               "-lm"], d)
        if rcn == 0:
            rcn, outn, errn = run_clean(["./maths.native"], d, {"OMP_NUM_THREADS": "2"})
        check(rc1 == 0 and rcn == 0 and out1 == outn and out1.strip(),
              "maths.c on 2 nodes prints what gcc -fopenmp prints with 2 threads",
              "ompdsm: %r %s\nnative: %r %s" % (out1, err1, outn, errn))

    rc, out, err = run([ompcc, "-M", "a.c"], d, gcc)
    check(rc == 0 and out.startswith("a.o:") and " h.h" in out and
          "/usr/include/stdio.h" in out, "-M", out + err)
    rc, out, err = run([ompcc, "-MM", "-MT", "foo", "a.c"], d, gcc)
    check(rc == 0 and out.split() == ["foo:", "a.c", "h.h"], "-MM -MT", out + err)

    os.mkdir(os.path.join(d, "out"))
    rc, out, err = run([ompcc, "-c", "-MD", "a.c", "-o", "out/a.o"], d, gcc)
    dep = os.path.join(d, "out", "a.d")
    deps = open(dep).read() if os.path.exists(dep) else ""
    check(rc == 0 and deps.startswith("out/a.o:") and " h.h" in deps,
          "-c -MD: the dependency file names the object", err + deps)
    obj = os.path.join(d, "out", "a.o")
    check(rc == 0 and os.path.exists(obj) and not built_by_clang(obj),
          "-c: the object is gcc's", err)
    rc, out, err = run([ompcc, "-S", "b.c", "-o", "out/b.s"], d, gcc)
    asm = os.path.join(d, "out", "b.s")
    asm_text = open(asm).read() if os.path.exists(asm) else ""
    check(rc == 0 and '.ident\t"GCC:' in asm_text and "OMPDSM_" in asm_text,
          "-S: gcc's assembly of the translation", err)
    rc, out, err = run([ompcc, "-c", "-mfpmath=387", "-mindirect-branch=keep", "b.c",
                        "-o", "out/b.o"], d, gcc)
    check(rc == 0, "-m options of gcc's that clang does not know reach gcc, not "
          "libclang's parse", err)
    rc2, out2, err2 = run([ompcc, "out/a.o", "out/b.o", "-o", "ab"], d, gcc)
    check(rc == 0 and rc2 == 0, "link of gcc-built objects", err + err2)
    if rc2 == 0:
        rc, out, err = run_clean([ompdsmrun, "-np", "2", "./ab"], d,
                                 {"OMPDSM_TRANSPORT": "shm"})
        check(rc == 0 and out.strip() == "4950", "the linked program runs on 2 nodes",
              out + err)
    rc, out, err = run([ompcc, "-O2", "a.c", "b.c", "-o", "ab2"], d, gcc)
    check(rc == 0 and not built_by_clang(os.path.join(d, "ab2")),
          "two sources compiled and linked in one call", err)
    rc, out, err = run([ompcc, "-E", "a.c", "-o", "a.i"], d, gcc)
    rc2, out2, err2 = run([ompcc, "a.i", "out/b.o", "-o", "ab3"], d, gcc)
    if rc == 0 and rc2 == 0:
        rc2, out2, err2 = run_clean([ompdsmrun, "-np", "2", "./ab3"], d,
                                    {"OMPDSM_TRANSPORT": "shm"})
    check(rc == 0 and rc2 == 0 and out2.strip() == "4950",
          "a .i gcc preprocessed is translated as such", err + out2 + err2)
    # What gcc may assume of the translated globals and shared locals:
    # each is a heap object of its own (restrict-qualified pointers,
    # OMPDSM_local_new declared malloc-like), so neither loop needs a
    # run-time overlap check to vectorize, as neither does natively.
    # Before: both "versioned for vectorization because of possible
    # aliasing" (and NPB SP W took 1.2x, UA W 1.3x gcc -fopenmp).
    with open(os.path.join(d, "alias.c"), "w") as f:
        f.write(ALIAS)
    rc, out, err = run([ompcc, "-O3", "-fopt-info-vec", "-c", "alias.c",
                        "-o", "out/alias.o"], d, gcc)
    lines = {n: [l for l in err.splitlines() if "alias.c:%d:" % n in l]
             for n in (ALIAS_GLOBAL_LINE, ALIAS_LOCAL_LINE)}
    for n, what in ((ALIAS_GLOBAL_LINE, "a loop from one global into another"),
                    (ALIAS_LOCAL_LINE, "a loop from a parameter into a shared "
                     "local array")):
        check(rc == 0 and any("loop vectorized" in l for l in lines[n]) and
              not any("possible aliasing" in l for l in lines[n]),
              "%s vectorizes with no overlap check" % what, err)
    rc, out, err = run([ompcc, "-c", "a.c", "-o", "out/x.o"], d,
                       {"OMPDSM_CC": "no-such-compiler-here"})
    check(rc == 1 and "no-such-compiler-here" in err, "a backend that cannot run: "
          "an error naming it", err)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ompcc", required=True)
    ap.add_argument("--ompdsmrun", required=True)
    ap.add_argument("--programs", default=PROGRAMS)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    ompcc, ompdsmrun = os.path.abspath(a.ompcc), os.path.abspath(a.ompdsmrun)

    gcc = shutil.which("gcc")
    if not gcc:
        print("SKIP: no gcc on PATH: the gcc backend of ompcc (OMPDSM_CC=gcc) "
              "cannot be tested")
        return 77
    r = subprocess.run([gcc, "-dM", "-E", "-x", "c", os.devnull],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    macros = r.stdout.decode()
    if r.returncode != 0 or "__GNUC__" not in macros or "__clang__" in macros:
        print("SKIP: %s is not GNU C (no __GNUC__, or __clang__): the gcc "
              "backend of ompcc cannot be tested" % gcc)
        return 77

    d = tempfile.mkdtemp(prefix="ompcc-gcc-")
    try:
        driver_checks(ompcc, ompdsmrun, d)

        # the conformance programs: ompcc with OMPDSM_CC=gcc on 2 nodes
        # against gcc -fopenmp with 2 threads
        work = os.path.join(d, "conf")
        os.mkdir(work)
        env = dict(os.environ, OMPDSM_CC="gcc")
        r = subprocess.run([sys.executable, CONFORMANCE, "--programs", a.programs,
                            "--threads", "2", "--transports", "shm", "--cc", "gcc",
                            "--ompcc", ompcc, "--ompdsmrun", ompdsmrun,
                            "--timeout", "60", "--workdir", work, "--keep"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=900)
        out = r.stdout.decode(errors="replace")
        sys.stdout.write(out)
        npass = sum(1 for l in out.splitlines() if l.startswith("PASS"))
        nprog = len(a.programs.split(","))
        check(r.returncode == 0 and npass == nprog,
              "%d conformance programs built with OMPDSM_CC=gcc: 2 nodes = gcc "
              "-fopenmp 2 threads (%d passed)" % (nprog, npass))
        # and they were gcc's builds, not clang's
        by_clang = []
        for root, _, files in os.walk(work):
            for f in files:
                p = os.path.join(root, f)
                if f != "native" and os.access(p, os.X_OK) and \
                        not f.endswith((".c", ".h", ".o")) and built_by_clang(p):
                    by_clang.append(p)
        check(not by_clang, "the ompdsm builds are gcc's", " ".join(by_clang))
    finally:
        if a.keep:
            print("kept %s" % d)
        else:
            shutil.rmtree(d, ignore_errors=True)

    if failures:
        print("%d check(s) failed: %s" % (len(failures), "; ".join(failures)))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
