#!/usr/bin/env python3
"""OpenMP 3.0 conformance runner for ompdsm.

Every program in this directory (tests/omp/*.c, and every tests/omp/mtu_*/
directory holding several translation units) is a self-checking oracle: it
prints a deterministic summary on stdout and exits 0 when all of its checks
passed, 1 otherwise.  A template (a .c file whose first comment holds
`instance: NAME FLAGS...` lines, as LLVM's openmp tests hold RUN lines) is
one program per line instead: NAME, built with FLAGS (-DTYPE=long ...) by
both compilers.

Modes
  --native-only   compile with the native compiler (gcc -fopenmp by default)
                  and run with OMP_NUM_THREADS=N; PASS means exit status 0.
  default         additionally compile with ompcc and run
                  `ompdsmrun -np N ./prog` with OMPDSM_TRANSPORT=<transport>;
                  PASS means the native run passed and the ompdsm run printed
                  the same stdout and exited with the same status.

Exit status: 0 if everything passed, 1 if anything failed, 77 if nothing
failed and nothing passed because everything was skipped (e.g. ompdsmrun
exited with 77 because the transport is unavailable), 2 on usage errors.
Standard library only.
"""

import argparse
import concurrent.futures
import difflib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP_STATUS = 77

# Variables that would change the behaviour of an OpenMP runtime; they are
# removed from the environment of every run so that only N matters.
_STRIP_PREFIXES = ("OMP_", "GOMP_", "KMP_", "OMPDSM_")


class Program:
    def __init__(self, name, sources, incdir, cflags=()):
        self.name = name
        self.sources = sources
        self.incdir = incdir
        self.cflags = list(cflags)  # a template's instance: for both compilers


INSTANCE = re.compile(r"^[\s*]*instance:\s*(\S+)(.*)$")


def instances(path):
    """[(name, flags)] of the instance lines in the first comment of a .c
    file; [] for a program that is not a template."""
    with open(path, errors="replace") as f:
        head = f.read(8192)
    if not head.lstrip().startswith("/*") or "*/" not in head:
        return []
    found = []
    for line in head[:head.index("*/")].splitlines():
        m = INSTANCE.match(line)
        if m:
            found.append((m.group(1), shlex.split(m.group(2))))
    return found


def programs_from_path(path):
    """The programs of a .c file (one, or a template's instances) or of an
    mtu_ directory."""
    path = os.path.abspath(path.rstrip(os.sep))
    if os.path.isdir(path):
        srcs = sorted(os.path.join(path, f) for f in os.listdir(path)
                      if f.endswith(".c"))
        if not srcs:
            raise ValueError("no .c files in %s" % path)
        return [Program(os.path.basename(path), srcs, path)]
    if os.path.isfile(path) and path.endswith(".c"):
        inst = instances(path)
        if inst:
            return [Program(name, [path], os.path.dirname(path), flags)
                    for name, flags in inst]
        return [Program(os.path.basename(path)[:-2], [path],
                        os.path.dirname(path))]
    raise ValueError("%s is neither a .c file nor a directory" % path)


def discover(root):
    progs = []
    for entry in sorted(os.listdir(root)):
        full = os.path.join(root, entry)
        if entry.endswith(".c") and os.path.isfile(full):
            progs.extend(programs_from_path(full))
        elif entry.startswith("mtu_") and os.path.isdir(full):
            progs.extend(programs_from_path(full))
    names = [p.name for p in progs]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise ValueError("programs named twice: %s" % " ".join(dups))
    return sorted(progs, key=lambda p: p.name)


def clean_env(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(_STRIP_PREFIXES)}
    env.update(extra)
    return env


def run_cmd(cmd, cwd, env, timeout):
    """Run cmd in its own session; return (status, stdout, stderr, timed_out).

    The elapsed time of the last call in this thread is kept in
    _last_elapsed.value for reporting."""
    start = time.monotonic()
    try:
        return _run_cmd(cmd, cwd, env, timeout)
    finally:
        _last_elapsed.value = time.monotonic() - start


_last_elapsed = threading.local()


def _run_cmd(cmd, cwd, env, timeout):
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        return (127, b"", str(exc).encode(), False)
    try:
        out, err = proc.communicate(timeout=timeout)
        return (proc.returncode, out, err, False)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            # a descendant left the process group and keeps the pipes open
            proc.kill()
            for f in (proc.stdout, proc.stderr):
                f.close()
            proc.wait()
            out, err = b"", b""
        return (proc.returncode, out, err, True)


def text(b):
    return b.decode("utf-8", "replace")


def indent(s, limit=40):
    lines = s.splitlines()
    if len(lines) > limit:
        lines = lines[:limit] + ["... (%d more lines)" % (len(lines) - limit)]
    return "".join("    | %s\n" % line for line in lines)


class Runner:
    def __init__(self, args, workdir):
        self.args = args
        self.workdir = workdir
        self.lock = threading.Lock()
        self.npass = 0
        self.nfail = 0
        self.nskip = 0
        self.failed = []

    def report(self, status, prog, n, transport, detail="", elapsed=None):
        with self.lock:
            if status == "PASS":
                self.npass += 1
            elif status == "SKIP":
                self.nskip += 1
            else:
                self.nfail += 1
                self.failed.append("%s np=%s %s" % (prog.name, n, transport))
            line = "%-4s %-40s np=%-2s %-6s" % (status, prog.name, n, transport)
            if elapsed is not None:
                line += " %6.2fs" % elapsed
            line = line.rstrip()
            sys.stdout.write(line + "\n")
            if detail and (status == "FAIL" or self.args.verbose):
                sys.stdout.write(detail)
            sys.stdout.flush()

    def variants(self):
        """(label, launcher command) of every ompdsm run of one size: each
        transport with ompdsmrun, and each with every --launcher."""
        a = self.args
        if not a.launchers:
            return [(t, a.ompdsmrun) for t in a.transports]
        return [("%s/%s" % (t, label), cmd) for t in a.transports
                for label, cmd in a.launchers]

    def compile(self, prog, cc, flags, out):
        cmd = shlex.split(cc) + flags + prog.cflags + ["-I", prog.incdir] + \
            prog.sources + ["-o", out, "-lm"]
        status, so, se, to = run_cmd(cmd, os.path.dirname(out), None,
                                     self.args.timeout)
        log = "    $ %s\n" % " ".join(shlex.quote(c) for c in cmd)
        log += indent(text(so) + text(se))
        if to:
            return False, log + "    compilation timed out\n"
        return status == 0 and os.path.exists(out), log

    def run_program(self, prog):
        a = self.args
        pdir = os.path.join(self.workdir, prog.name)
        os.makedirs(pdir, exist_ok=True)
        native_bin = os.path.join(pdir, "native")
        cflags = shlex.split(a.cflags)
        ok, log = self.compile(prog, a.cc, cflags + ["-fopenmp"], native_bin)
        transports = ["native"] if a.native_only else \
            [label for label, _ in self.variants()]
        if not ok:
            for n in a.threads:
                for t in transports:
                    self.report("FAIL", prog, n, t,
                                "    native compilation failed\n" + log)
            return
        ompdsm_bin = None
        ompdsm_log = ""
        if not a.native_only:
            ompdsm_bin = os.path.join(pdir, "ompdsm")
            ok, ompdsm_log = self.compile(prog, a.ompcc, cflags, ompdsm_bin)
            if not ok:
                ompdsm_bin = None
        for n in a.threads:
            env = clean_env({"OMP_NUM_THREADS": str(n.total)})
            st, out, err, to = run_cmd([native_bin], pdir, env, a.timeout)
            nat_time = _last_elapsed.value
            nat_ok = (st == 0 and not to)
            nat_detail = ""
            if not nat_ok:
                nat_detail = ("    native run %s (status %s)\n" %
                              ("timed out" if to else "failed", st))
                nat_detail += indent(text(out) + text(err))
            if a.native_only:
                self.report("PASS" if nat_ok else "FAIL", prog, n, "native",
                            nat_detail or indent(text(out)), nat_time)
                continue
            for t, launcher in self.variants():
                if not nat_ok:
                    self.report("FAIL", prog, n, t,
                                "    the native oracle did not pass\n" +
                                nat_detail)
                    continue
                if ompdsm_bin is None:
                    self.report("FAIL", prog, n, t,
                                "    ompcc compilation failed\n" + ompdsm_log)
                    continue
                denv = clean_env(dict(a.ompdsm_env))
                denv["OMPDSM_TRANSPORT"] = t.split("/")[0]
                cmd = shlex.split(launcher) + ["-np", str(n.nodes)]
                if n.tpn > 1:
                    # ompdsmrun's option; other launchers get the variable
                    if launcher == a.ompdsmrun:
                        cmd += ["--threads-per-node", str(n.tpn)]
                    else:
                        denv["OMPDSM_THREADS_PER_NODE"] = str(n.tpn)
                cmd += ["./ompdsm"]
                dst, dout, derr, dto = run_cmd(cmd, pdir, denv, a.timeout)
                dtime = _last_elapsed.value
                if not dto and dst == SKIP_STATUS:
                    self.report("SKIP", prog, n, t,
                                "    ompdsmrun exited with 77 (unavailable)\n" +
                                indent(text(derr)))
                    continue
                problems = []
                if dto:
                    problems.append("    ompdsm run timed out after %gs\n" %
                                    a.timeout)
                elif dst != st:
                    problems.append("    exit status: native %d, ompdsm %d\n" %
                                    (st, dst))
                if dout != out:
                    diff = difflib.unified_diff(
                        text(out).splitlines(), text(dout).splitlines(),
                        "native (OMP_NUM_THREADS=%d)" % n.total,
                        "ompdsm (-np %s, %s)" % (n, t), lineterm="")
                    problems.append("    stdout differs:\n" +
                                    indent("\n".join(diff), 80))
                if problems:
                    detail = "".join(problems)
                    if derr:
                        detail += "    ompdsm stderr:\n" + indent(text(derr), 20)
                    self.report("FAIL", prog, n, t, detail, dtime)
                else:
                    self.report("PASS", prog, n, t, "", dtime)


def check_list(progs, listfile, touch, stamp):
    """A program dropped into (or removed from) tests/omp needs a meson
    reconfigure, since meson makes one test per program: touching
    tests/omp/meson.build makes the next ninja (and meson test, which
    regenerates first) do it."""
    now = [p.name for p in progs]
    try:
        with open(listfile) as f:
            before = f.read().split()
    except OSError:
        before = None
    if before != now:
        added = sorted(set(now) - set(before or []))
        removed = sorted(set(before or []) - set(now))
        print("tests/omp: conformance programs changed since meson configured "
              "(added: %s; removed: %s); the next ninja or meson test "
              "reconfigures" % (" ".join(added) or "none",
                                " ".join(removed) or "none"))
        os.utime(touch, None)
    with open(stamp, "w") as f:
        f.write("".join(n + "\n" for n in now))
    return 0


def parse_list(s, conv=str):
    return [conv(x) for x in s.split(",") if x.strip()]


class Size:
    """One run size: N nodes (ompdsmrun -np N) of T threads each
    (--threads-per-node T), against the native build with N x T threads.
    Written N, or NxT."""

    def __init__(self, s):
        parts = s.strip().split("x")
        if len(parts) > 2:
            raise ValueError(s)
        self.nodes = int(parts[0])
        self.tpn = int(parts[1]) if len(parts) == 2 else 1
        self.total = self.nodes * self.tpn

    def __str__(self):
        if self.tpn == 1:
            return str(self.nodes)
        return "%dx%d" % (self.nodes, self.tpn)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Run the ompdsm OpenMP conformance programs.")
    ap.add_argument("--native-only", action="store_true",
                    help="only compile natively and check exit status 0")
    ap.add_argument("--one", metavar="PATH",
                    help="run only this program (.c file or mtu_ directory; "
                    "a template: its instances)")
    ap.add_argument("--list", action="store_true",
                    help="print the program names and exit")
    ap.add_argument("--write-list", metavar="FILE",
                    help="with --list: also write the names to FILE")
    ap.add_argument("--check-list", nargs=3, metavar=("LIST", "TOUCH", "STAMP"),
                    help="compare the programs with LIST (written by "
                    "--write-list when meson configured); when they differ, "
                    "touch TOUCH (tests/omp/meson.build) so that the next "
                    "ninja or meson test reconfigures; then write STAMP")
    ap.add_argument("--threads", default="1,2,4,8",
                    help="comma-separated team sizes / node counts; NxT: "
                    "N nodes of T threads (--threads-per-node T) against "
                    "N x T native threads")
    ap.add_argument("--transports", default="shm,tcp",
                    help="comma-separated OMPDSM_TRANSPORT values")
    ap.add_argument("--cc", default="gcc",
                    help="native OpenMP compiler (default gcc)")
    ap.add_argument("--cflags", default="-O1",
                    help="flags for both compilers (default -O1)")
    ap.add_argument("--ompcc", default="ompcc", help="path of ompcc")
    ap.add_argument("--ompdsmrun", default="ompdsmrun",
                    help="path of ompdsmrun")
    ap.add_argument("--ompdsm-env", action="append", default=[],
                    metavar="KEY=VALUE",
                    help="extra environment for ompdsm runs (repeatable)")
    ap.add_argument("--programs", default="",
                    help="comma-separated program names to run (default: "
                    "all); an unknown name is an error")
    ap.add_argument("--launcher", action="append", default=[],
                    metavar="LABEL=COMMAND", dest="launchers",
                    help="run the ompdsm builds with COMMAND -np N ./prog "
                    "instead of ompdsmrun (repeatable; each is labelled "
                    "transport/LABEL), e.g. a multi-host ompdsmrun")
    ap.add_argument("--workdir", help="directory for build products "
                    "(default: a fresh temporary directory)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the build products")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds per compilation or run (default 60)")
    ap.add_argument("-j", "--jobs", type=int, default=1,
                    help="programs to process concurrently (default 1)")
    ap.add_argument("-k", "--filter", default="",
                    help="only programs whose name contains this string")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="also show the output of passing runs")
    # allow "--cflags -O2" as well as "--cflags=-O2"
    argv = list(sys.argv[1:] if argv is None else argv)
    for i in range(len(argv) - 1):
        if argv[i] == "--cflags":
            argv[i:i + 2] = ["--cflags=" + argv[i + 1]]
            break
    a = ap.parse_args(argv)

    try:
        a.threads = parse_list(a.threads, Size)
        a.transports = parse_list(a.transports)
    except ValueError:
        ap.error("--threads must be a comma-separated list of integers "
                 "or NxT")
    if not a.threads or any(n.nodes < 1 or n.tpn < 1 for n in a.threads):
        ap.error("--threads needs positive integers")
    envs = []
    for kv in a.ompdsm_env:
        if "=" not in kv:
            ap.error("--ompdsm-env expects KEY=VALUE")
        envs.append(tuple(kv.split("=", 1)))
    a.ompdsm_env = envs
    launchers = []
    for kv in a.launchers:
        label, eq, cmd = kv.partition("=")
        if not eq or not label or not cmd.strip():
            ap.error("--launcher expects LABEL=COMMAND")
        launchers.append((label, cmd))
    a.launchers = launchers

    try:
        progs = programs_from_path(a.one) if a.one else discover(HERE)
    except ValueError as exc:
        ap.error(str(exc))
    if a.filter:
        progs = [p for p in progs if a.filter in p.name]
    if a.programs:
        want = parse_list(a.programs)
        names = {p.name for p in progs}
        unknown = [w for w in want if w not in names]
        if unknown:
            ap.error("--programs: no program named %s" % ", ".join(unknown))
        progs = [p for p in progs if p.name in want]
    if a.list:
        for p in progs:
            print(p.name)
        if a.write_list:
            os.makedirs(os.path.dirname(os.path.abspath(a.write_list)),
                        exist_ok=True)
            with open(a.write_list, "w") as f:
                f.write("".join(p.name + "\n" for p in progs))
        return 0
    if a.check_list:
        return check_list(progs, *a.check_list)
    if not progs:
        print("no programs selected")
        return 2

    def resolve(tool, what):
        exe = shlex.split(tool)
        found = shutil.which(exe[0]) if exe else None
        if not found:
            print("error: %s %r not found" % (what, tool))
            return None
        return " ".join([shlex.quote(os.path.abspath(found))] +
                        [shlex.quote(x) for x in exe[1:]])

    if resolve(a.cc, "native compiler") is None:
        return 2
    if not a.native_only:
        if not a.transports:
            ap.error("--transports is empty")
        a.ompcc = resolve(a.ompcc, "ompcc")
        a.ompdsmrun = resolve(a.ompdsmrun, "ompdsmrun")
        if a.ompcc is None or a.ompdsmrun is None:
            return 2

    # always a fresh directory (inside --workdir if given), removed at the
    # end unless --keep
    if a.workdir:
        os.makedirs(a.workdir, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="omp-conf-", dir=a.workdir or None)
    runner = Runner(a, workdir)
    try:
        if a.jobs > 1:
            with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
                list(ex.map(runner.run_program, progs))
        else:
            for p in progs:
                runner.run_program(p)
    except KeyboardInterrupt:
        print("interrupted")
        return 1
    finally:
        if a.keep:
            print("build products kept in %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    total = runner.npass + runner.nfail + runner.nskip
    print("summary: %d programs, %d runs: %d passed, %d failed, %d skipped" %
          (len(progs), total, runner.npass, runner.nfail, runner.nskip))
    if runner.failed:
        print("failed:")
        for f in runner.failed:
            print("  " + f)
        return 1
    if runner.npass == 0 and runner.nskip > 0:
        return SKIP_STATUS
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(1)
