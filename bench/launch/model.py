#!/usr/bin/python3
"""bench/launch/model.py - start-up time of the agents of H hosts, flat and
as a tree, from two measured costs (docs/performance.md):

  c  what starting one child agent costs its parent, in sequence (fork and
     exec of the rsh, the setup frame, the rsh client's own CPU there)
  h  one hop: from the rsh's start to the agent running on the host (ssh
     connection and login, exec of ompdsmrun --agent); children of one
     parent make their hops at the same time

An agent with n hosts below it starts min(F, n) children in sequence,
each taking its share of the n (the same near-equal split as
comm/launch/link.c), so
  T(n) = max over children i of (i * c + h + T(share_i - 1)),  T(0) = 0
and flat is F >= H.

usage: bench/launch/model.py C H_HOP [--hosts 16,64,256] [--fanouts 2,4,16,32,256]
"""
import argparse
import functools


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("c", type=float, help="seconds per child at its parent")
    ap.add_argument("h", type=float, help="seconds per hop")
    ap.add_argument("--hosts", default="16,64,256")
    ap.add_argument("--fanouts", default="2,4,16,32,256")
    a = ap.parse_args()
    hosts = [int(x) for x in a.hosts.split(",")]
    fans = [int(x) for x in a.fanouts.split(",")]

    def model(fanout):
        @functools.lru_cache(None)
        def t(n):
            if n == 0:
                return 0.0
            groups = min(fanout, n)
            worst = 0.0
            for g in range(groups):
                share = n // groups + (g < n % groups)
                worst = max(worst, (g + 1) * a.c + a.h + t(share - 1))
            return worst
        return t

    print("| hosts | " + " | ".join("F=%d%s" % (f, " (flat)" if f >= max(hosts)
                                              else "") for f in fans) + " |")
    print("|---|" + "---|" * len(fans))
    for n in hosts:
        print("| %d | " % n + " | ".join("%.2f" % model(f)(n) for f in fans)
              + " |")


if __name__ == "__main__":
    main()
