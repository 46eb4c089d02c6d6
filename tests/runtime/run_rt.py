#!/usr/bin/env python3
"""tests/runtime/run_rt.py - runs one runtime ABI test program under the
launcher and judges the run:

  ompdsmrun --timeout T -np N PROGRAM ARGS...   (OMPDSM_TRANSPORT from env)

Exit status (meson's convention):
  0   the job exited 0, printed node 0's summary line ending in ': ok', and
      no node printed a `FAIL:` line
  77  skipped: only when OMPDSM_TRANSPORT=tcp and the job says the tcp
      transport is not built (a skip is never a pass)
  1   anything else (a failed check on any node, a non-zero or missing exit
      status, a time-out, a missing summary)

The program's output is passed through, so `meson test -v` shows it.
"""
import argparse
import os
import re
import subprocess
import sys

TCP_NOT_BUILT = re.compile(
    r"tcp[^\n]*(not built|not compiled|not available in this build|"
    r"not supported by this build)", re.I)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launcher", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=50.0)
    ap.add_argument("prog")
    ap.add_argument("args", nargs="*")
    a = ap.parse_args()

    transport = os.environ.get("OMPDSM_TRANSPORT", "auto")
    cmd = [a.launcher, "--timeout", str(a.timeout), "-np", str(a.np), a.prog]
    cmd += a.args
    print("run: OMPDSM_TRANSPORT=%s %s" % (transport, " ".join(cmd)))
    sys.stdout.flush()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=a.timeout + 15)
    except subprocess.TimeoutExpired:
        print("FAIL: the launcher itself did not end within %.0f s" %
              (a.timeout + 15))
        return 1
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    sys.stdout.write(out)
    sys.stderr.write(err)
    sys.stdout.flush()

    if p.returncode != 0 and transport == "tcp" and \
            TCP_NOT_BUILT.search(out + err):
        print("SKIP: the tcp transport is not built")
        return 77
    if p.returncode != 0:
        why = "timed out (--timeout %.0f)" % a.timeout \
            if p.returncode == 124 else "exit status %d" % p.returncode
        print("FAIL: job ended with %s" % why)
        return 1
    if re.search(r"^FAIL:", out, re.M):
        print("FAIL: a node reported failed checks (exit status was 0)")
        return 1
    if not re.search(r"^\S+: np=\d+ .*: ok$", out, re.M):
        print("FAIL: node 0 printed no summary line ending in ': ok'")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
