#!/usr/bin/env python3
"""Multi-host tests of ompdsmrun (docs/cluster.md), on "hosts" made of
network namespaces by tests/cluster/netns.sh.

Usage: cluster_test.py --ompdsmrun PATH --testnode PATH [--ompcc PATH]
                       [--stress PATH] [--tune PATH --tune-prog PATH] TEST

Each TEST makes its own set of namespaces (a prefix unique to the test and
process), runs ompdsmrun inside host 0's namespace with netns.sh as
OMPDSM_RSH and the default transport (auto: shm between the nodes of a
host, tcp between hosts), checks statuses, messages, output and
that nothing is left running in any namespace, and deletes the set at the
end even when it fails.  Exit status 0 when the test passed, 1 when it
failed, 77 (with a reason) when namespaces cannot be made here.  Every
wait has a deadline.  Standard library only.

The cases live in modules by concern: cluster_programs.py (conformance,
stress, deadlock, tune), cluster_launch.py (env, output, tree, bootagg,
stdin), cluster_failure.py (kill_*, sigint, unreachable, paths, linkdown,
outage, build) and cluster_attack.py (attack); what they share (the
namespace hosts, starting and waiting for ompdsmrun) is cluster_hosts.py.
"""

import argparse
import faulthandler
import os
import signal
import subprocess
import sys
import time

import cluster_attack
import cluster_failure
import cluster_hosts as hosts
import cluster_launch
import cluster_programs
from cluster_hosts import NETNS, ARGS, TestFailure, down

SKIP = 77

TESTS = {
    "conformance": cluster_programs.test_conformance,
    "stress": cluster_programs.test_stress,
    "env": cluster_launch.test_env,
    "tree": cluster_launch.test_tree, "output": cluster_launch.test_output,
    "kill_node": cluster_failure.test_kill_node,
    "kill_agent": cluster_failure.test_kill_agent,
    "kill_launcher": cluster_failure.test_kill_launcher,
    "kill_dsm": cluster_failure.test_kill_dsm,
    "bootagg": cluster_launch.test_bootagg,
    "stdin": cluster_launch.test_stdin,
    "unreachable": cluster_failure.test_unreachable,
    "paths": cluster_failure.test_paths, "sigint": cluster_failure.test_sigint,
    "attack": cluster_attack.test_attack,
    "linkdown": cluster_failure.test_linkdown,
    "outage": cluster_failure.test_outage,
    "build": cluster_failure.test_build,
    "deadlock": cluster_programs.test_deadlock,
    "tune": cluster_programs.test_tune,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ompdsmrun", required=True)
    ap.add_argument("--testnode", required=True)
    ap.add_argument("--ompcc")
    ap.add_argument("--stress")
    ap.add_argument("--tune")
    ap.add_argument("--tune-prog")
    ap.add_argument("test", choices=sorted(TESTS))
    ap.parse_args(namespace=ARGS)
    for a in ("ompdsmrun", "testnode", "ompcc", "stress", "tune",
              "tune_prog"):
        v = getattr(ARGS, a)
        if v:
            setattr(ARGS, a, os.path.abspath(v))

    c = subprocess.run(["sh", NETNS, "check"], stderr=subprocess.PIPE)
    if c.returncode != 0:
        sys.stdout.write(c.stderr.decode())
        return SKIP if c.returncode == SKIP else 1
    hosts.PREFIX = "oc%d-%s" % (os.getpid(), ARGS.test)
    hosts.SHM_BEFORE = set(os.listdir("/dev/shm"))

    def on_term(sig, frame):
        raise SystemExit("cluster_test: signal %d" % sig)
    signal.signal(signal.SIGTERM, on_term)
    # At meson's timeout the log shows where the test waited (one
    # cluster-deadlock run passed its timeout with no other trace).
    faulthandler.register(signal.SIGTERM, chain=True)

    t0 = time.monotonic()
    try:
        TESTS[ARGS.test]()
    except TestFailure as e:
        print("FAIL %s: %s" % (ARGS.test, e))
        return 1
    finally:
        down()
    print("PASS %s (%.2f s)" % (ARGS.test, time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
