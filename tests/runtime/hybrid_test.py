#!/usr/bin/env python3
"""tests/runtime/hybrid_test.py - threads per node from the command line
and the environment (docs/env.md): layouts checked by rt_hybrid (its
arguments are the expected nodes and threads per node), and the settings
that must stop the job with a message.

usage: hybrid_test.py OMPDSMRUN RT_HYBRID"""
import os
import subprocess
import sys


def run(launcher, prog, np_, opts, env, args):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("OMP_", "OMPDSM_"))}
    e["OMPDSM_TRANSPORT"] = os.environ.get("OMPDSM_TRANSPORT", "shm")
    e.update(env)
    cmd = [launcher, "--timeout", "60", "-np", str(np_)] + opts + [prog] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, env=e, timeout=90)
    return p.returncode, p.stdout.decode(errors="replace"), \
        p.stderr.decode(errors="replace")


def main():
    launcher, prog = sys.argv[1], sys.argv[2]
    ncpu = len(os.sched_getaffinity(0))
    ok_cases = [
        # np, ompdsmrun options, environment, expected nodes, T
        (2, [], {}, 2, 1),
        (2, ["--threads-per-node", "2"], {}, 2, 2),
        (1, ["--threads-per-node", "3"], {}, 1, 3),
        (3, ["--threads-per-node", "2"], {}, 3, 2),
        (2, [], {"OMPDSM_THREADS_PER_NODE": "2"}, 2, 2),
        (2, [], {"OMP_NUM_THREADS": "4"}, 2, 2),
        (2, [], {"OMP_NUM_THREADS": "2"}, 2, 1),
        (1, ["--threads-per-node", "auto"], {}, 1, min(ncpu, 256)),
    ]
    bad = []
    for np_, opts, env, nodes, tpn in ok_cases:
        rc, out, err = run(launcher, prog, np_, opts, env, [str(nodes), str(tpn)])
        if rc != 0 or ": ok" not in out:
            bad.append("-np %d %s %s: status %d\n%s%s" % (np_, opts, env, rc, out, err))
    fail_cases = [
        (2, [], {"OMP_NUM_THREADS": "3"}, "must be a multiple of 2"),
        (2, ["--threads-per-node", "2"], {"OMP_NUM_THREADS": "5"},
         "OMP_NUM_THREADS=5 exceeds the 4 threads"),
        (2, [], {"OMPDSM_THREADS_PER_NODE": "0"}, "OMPDSM_THREADS_PER_NODE"),
    ]
    for np_, opts, env, want in fail_cases:
        rc, out, err = run(launcher, prog, np_, opts, env, ["0", "0"])
        if rc == 0 or want not in err:
            bad.append("-np %d %s %s: expected a failure saying %r, got status "
                       "%d\n%s%s" % (np_, opts, env, want, rc, out, err))
    for b in bad:
        print("FAIL: " + b)
    print("%s hybrid_test" % ("FAIL" if bad else "PASS"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
