#!/usr/bin/python3
"""bench/launch/startup.py - start-up time of ompdsm jobs: N nodes on this
host and on hosts made of network namespaces (tests/cluster/netns.sh), and
the per-hop costs of starting agents, for the model in docs/performance.md.

usage: bench/launch/startup.py [BUILDDIR] [--nodes 2,4,...,64]
                               [--hosts 2,4] [--reps 5] [--agents 1,2,4,8,16]

Needs root (namespaces).  Three measures, each the median of --reps runs,
wall time of the whole ompdsmrun command:
  bootstrap  launch_testnode gather 1: fork/exec, environment, one
             bootstrap allgather, exit (no runtime)
  ompdsm     a program built by ompcc with one parallel region over tcp:
             the whole runtime start-up (heap, connections between every
             pair of nodes, the first fork/join)
  agents     /bin/true on 1 node per host for H = 1 (local) and H remote
             namespace hosts, flat (fan-out 32) and as a tree (fan-out 2):
             what starting the agents costs; and the same with
             bench/launch/localrsh.sh as OMPDSM_RSH (the agents run in host
             0's namespace): an agent's cost to its parent without the hop
The load average before and after is printed with the tables."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
NETNS = os.path.join(ROOT, "tests", "cluster", "netns.sh")
PREFIX = "obench%d" % os.getpid()

PROGRAM = r"""
#include <omp.h>
#include <stdio.h>
int counter;
int main(void)
{
#pragma omp parallel
    {
#pragma omp atomic
        counter++;
    }
    printf("%d\n", counter);
    return 0;
}
"""


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def timed(cmd, env, reps):
    ts = []
    for _ in range(reps):
        t0 = time.monotonic()
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=300)
        ts.append(time.monotonic() - t0)
        if p.returncode != 0:
            sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd),
                                              p.stderr.decode()))
    return statistics.median(ts)


def addr(i):
    return "10.99.0.%d" % (i + 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builddir", nargs="?", default="build")
    ap.add_argument("--nodes", default="2,4,8,16,32,64")
    ap.add_argument("--hosts", default="2,4")
    ap.add_argument("--agents", default="1,2,4,8,16")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    b = os.path.abspath(a.builddir)
    run = os.path.join(b, "ompdsmrun")
    testnode = os.path.join(b, "tests", "launch", "launch_testnode")
    nodes = [int(x) for x in a.nodes.split(",")]
    hosts = [int(x) for x in a.hosts.split(",")]
    agents = [int(x) for x in a.agents.split(",")]
    nns = max(hosts + agents) + 1

    tmp = tempfile.mkdtemp(prefix="ompdsm-startup-")
    src = os.path.join(tmp, "region.c")
    prog = os.path.join(tmp, "region")
    with open(src, "w") as f:
        f.write(PROGRAM)
    subprocess.run([os.path.join(b, "ompcc"), "-O1", src, "-o", prog],
                   check=True)

    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPDSM_", "OMP_"))}
    env.update({"OMPDSM_TRANSPORT": "tcp", "OMPDSM_RSH": NETNS + " rsh",
                "OMPDSM_NETNS_PREFIX": PREFIX})
    print("load average before: %s" % loadavg())
    subprocess.run(["sh", NETNS, "up", PREFIX, str(nns)], check=True,
                   stdout=subprocess.DEVNULL)
    ns0 = ["ip", "netns", "exec", PREFIX + "-h0"]
    try:
        print("\nStart-up of N nodes, median of %d runs (s)\n" % a.reps)
        cols = ["local"] + ["%d hosts" % h for h in hosts]
        print("| N | measure | " + " | ".join(cols) + " |")
        print("|---|---|" + "---|" * len(cols))
        for n in nodes:
            for label, argv in (("bootstrap", [testnode, "gather", "1", "1"]),
                                ("ompdsm", [prog])):
                row = [timed(ns0 + [run, "-np", str(n)] + argv, env, a.reps)]
                for h in hosts:
                    hl = ",".join("%s:%d" % (addr(i), -(-n // h))
                                  for i in range(h))
                    row.append(timed(ns0 + [run, "-np", str(n), "-H", hl] +
                                     argv, env, a.reps))
                print("| %d | %s | " % (n, label) +
                      " | ".join("%.3f" % t for t in row) + " |")

        print("\nAgents: /bin/true, 1 node on each of H hosts (host 0 is "
              "the launcher's), median of %d runs (s)\n" % a.reps)
        print("| remote hosts | flat (fan-out 32) | tree (fan-out 2) | "
              "flat, no hop | tree, no hop |")
        print("|---|---|---|---|---|")
        base = timed(ns0 + [run, "-np", "1", "/bin/true"], env, a.reps)
        print("| 0 (local only) | %.3f | | | |" % base)
        local = dict(env, OMPDSM_RSH=os.path.join(ROOT, "bench", "launch",
                                                  "localrsh.sh"))
        for h in agents:
            hl = ",".join(addr(i) for i in range(h + 1))
            row = []
            for e in (env, local):
                for f in ("32", "2"):
                    row.append(timed(ns0 + [run, "-H", hl, "/bin/true"],
                                     dict(e, OMPDSM_LAUNCH_FANOUT=f), a.reps))
            print("| %d | " % h + " | ".join("%.3f" % t for t in row) + " |")
    finally:
        subprocess.run(["sh", NETNS, "down", PREFIX])
        subprocess.run(["rm", "-rf", tmp])
    print("\nload average after: %s" % loadavg())
    print("command: %s" % " ".join([sys.argv[0]] + sys.argv[1:]))


if __name__ == "__main__":
    main()
