#!/usr/bin/python3
"""tests/comm/nsrun.py - a stand-in for `ompdsmrun -np N` across the test
hosts of tests/cluster/netns.sh, for the comm layer's multi-host tests
(written before ompdsmrun could start remote nodes).

  nsrun.py --prefix P [--per-host K] [--other-prog PATH] -np N PROG [ARG...]

Node r runs in namespace P-h(r // K) (K = 2 by default): the bootstrap
server (comm_fail.BootServer, speaking comm/boot_proto.h) listens on host
0's address inside P-h0, and every node is started with `ip netns exec`
and OMPDSM_RANK/SIZE/LOCAL_RANK/LOCAL_SIZE/BOOT/JOBID/JOB_KEY, as ompdsmrun
would.
--other-prog runs PATH instead of PROG on every host but host 0 (to test
that nodes refuse to run different builds together).  Output passes
through.  A node that reports an abort ends the job at once
(its message is printed, as ompdsmrun prints it); a node that exits
non-zero ends the others after 3 s.  Exit status: the abort status or the
first non-zero node status, else 0.  Only namespaces of the set P are
entered: no traffic leaves them."""
import argparse
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from comm_fail import BootServer  # noqa: E402

NETNS = os.path.join(HERE, '..', 'cluster', 'netns.sh')


def host_addr(prefix, i):
    return subprocess.check_output(['sh', NETNS, 'addr', prefix, str(i)],
                                   text=True).strip()


def run(a):
    n, k = a.np, a.per_host
    srv = BootServer(n, addr=host_addr(a.prefix, 0))
    env = dict(os.environ, OMPDSM_SIZE=str(n), OMPDSM_LOCAL_SIZE=str(k),
               OMPDSM_BOOT='%s:%d' % (host_addr(a.prefix, 0), srv.port),
               OMPDSM_JOBID='nsrun%d' % os.getpid(), **srv.env_key())
    procs = []
    for r in range(n):
        e = dict(env, OMPDSM_RANK=str(r), OMPDSM_LOCAL_RANK=str(r % k))
        ns = '%s-h%d' % (a.prefix, r // k)
        cmd = list(a.cmd)
        if a.other_prog and r // k:
            cmd[0] = a.other_prog
        procs.append(subprocess.Popen(['ip', 'netns', 'exec', ns] + cmd,
                                      env=e))
    status, first_bad = 0, None
    try:
        while True:
            if srv.aborts:
                rank, msg = srv.aborts[0]
                sys.stderr.write('nsrun: node %s: %s\n' % (rank, msg.rstrip()))
                status = 1
                break
            codes = [p.poll() for p in procs]
            bad = [c for c in codes if c not in (None, 0)]
            if bad and first_bad is None:
                first_bad = time.time()
                status = bad[0] if bad[0] > 0 else 128 - bad[0]
            if all(c is not None for c in codes):
                break
            if first_bad is not None and time.time() - first_bad > 3.0:
                break
            time.sleep(0.02)
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
            p.wait()
    return status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--prefix', required=True)
    ap.add_argument('--per-host', type=int, default=2)
    ap.add_argument('--other-prog')
    ap.add_argument('-np', type=int, required=True)
    ap.add_argument('cmd', nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if not a.cmd or a.np < 1 or a.per_host < 1:
        ap.error('need -np N >= 1 and a program')
    # The bootstrap server must live in host 0's namespace.
    if os.environ.get('NSRUN_IN_H0') != a.prefix:
        os.environ['NSRUN_IN_H0'] = a.prefix
        os.execvp('ip', ['ip', 'netns', 'exec', a.prefix + '-h0',
                         sys.executable, os.path.abspath(__file__)] +
                  sys.argv[1:])
    sys.exit(run(a))


if __name__ == '__main__':
    main()
