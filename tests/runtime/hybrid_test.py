#!/usr/bin/env python3
"""tests/runtime/hybrid_test.py - threads per node from the command line
and the environment (docs/env.md): layouts checked by rt_hybrid (its
arguments are the expected nodes and threads per node), and the settings
that must stop the job with a message.  Each thread's CPU affinity under
--bind-to core, none and the default: node n on CPUs 2n, 2n+1 of the
launcher's mask (wrapping), each thread on its own CPU, which failed
before threads were bound one by one.

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
    # Nodes that disagree on T (auto on hosts with different CPU counts):
    # node k gets k + 1 threads through a shell; the job must stop saying so.
    rc, out, err = run(launcher, "/bin/sh", 2, [], {},
                       ["-c", 'OMPDSM_THREADS_PER_NODE=$((OMPDSM_RANK + 1)) '
                        'exec "$0" 0 0', prog])
    if rc == 0 or "different threads per node (from 1 to 2" not in err:
        bad.append("T differing by node: expected a failure naming it, got "
                   "status %d\n%s%s" % (rc, out, err))
    # --bind-to: with T threads per node, node n is bound to the T CPUs
    # n*T .. n*T+T-1 of our mask (wrapping around) and its thread l to the
    # l-th of them; the default binds when nodes x T CPUs are enough.
    cpus_list = sorted(os.sched_getaffinity(0))
    bind_cases = [
        # np, options, environment, T, bound
        (1, ["--threads-per-node", "2", "--bind-to", "core"], {}, 2, True),
        (2, ["--threads-per-node", "2", "--bind-to", "core"], {}, 2, True),
        (1, ["--threads-per-node", "2"], {}, 2, 2 <= ncpu),
        (2, ["--threads-per-node", "2"], {}, 2, 4 <= ncpu),
        (2, ["--threads-per-node", "2", "--bind-to", "none"], {}, 2, False),
        (2, ["--bind-to", "core"], {"OMP_NUM_THREADS": "4"}, 2, True),
        (1, ["--threads-per-node", "auto", "--bind-to", "core"], {},
         min(ncpu, 256), True),
    ]
    for np_, opts, env, tpn, bound in bind_cases:
        rc, out, err = run(launcher, prog, np_, opts, env, [str(np_), str(tpn)])
        what = "-np %d %s %s" % (np_, opts, env)
        lines = [dict(kv.split("=") for kv in l.split()[1:])
                 for l in out.splitlines() if l.startswith("cpus ")]
        if rc != 0 or len(lines) != np_ * tpn:
            bad.append("%s: status %d, %d cpus lines\n%s%s" %
                       (what, rc, len(lines), out, err))
            continue
        for l in lines:
            t, n = int(l["t"]), int(l["node"])
            if bound:
                mask = sorted({cpus_list[(n * tpn + j) % ncpu]
                               for j in range(tpn)})
                want = (1, mask[(t - n * tpn) % len(mask)])
            else:
                want = (ncpu, cpus_list[0])
            got = (int(l["count"]), int(l["first"]))
            if got != want:
                bad.append("%s: thread %d on node %d: %d CPUs from %d, "
                           "expected %d from %d" % ((what, t, n) + got + want))
    for b in bad:
        print("FAIL: " + b)
    print("%s hybrid_test" % ("FAIL" if bad else "PASS"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
