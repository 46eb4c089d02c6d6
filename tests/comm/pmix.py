#!/usr/bin/python3
"""tests/comm/pmix.py - nodes started by Open MPI's mpirun (PMIx start-up,
comm/boot_pmix.c) on this host.  Exit 0 on success, 1 on failure, 77 with
the reason when mpirun is missing or libompdsm was built without PMIx.

  --case groups   comm_check's groups under mpirun -np 2, 3 and 4 (auto:
                  shm between the nodes) and -np 3 over tcp, each node
                  checking the others' data; `comm_check peers` must report
                  np-1 peers over the expected transport.
  --case omp --src FILE...  conformance programs (tests/omp) under
                  mpirun -np 2, 3, 4 against gcc -fopenmp with as many
                  threads (tests/omp/conformance.py); then the first one,
                  run as ./prog with no launcher, must print what gcc's
                  build prints with one thread (one node), and under
                  mpirun -np 3 with OMPDSM_IFACE=eth9 (a failure in every
                  node's start-up, reported through PMIx_Abort) must end
                  non-zero within 20 s naming the variable.
  --case kill     kill -9 of rank 1 of 3 in a barrier loop
                  (tests/comm/comm_fail.py): mpirun ends non-zero within 5 s,
                  nothing is left running, and stderr names rank 1.
Options: --mpirun PATH, --pmix 0|1 (built with PMIx), --prog comm_check,
--ompcc PATH."""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    print('FAIL: ' + msg, file=sys.stderr)
    sys.exit(1)


def mpirun_cmd(a):
    return [a.mpirun, '--allow-run-as-root', '--oversubscribe']


# Kept short: every mpirun costs a start-up.  Each node count over auto
# (shm between the nodes), and the whole set once over tcp.
RUNS = [(2, 'auto', ['onesided', 'coll']),
        (3, 'auto', ['onesided', 'coll']),
        (4, 'auto', ['onesided', 'atomics', 'coll']),
        (3, 'tcp', ['onesided', 'atomics', 'barrier', 'coll', 'send'])]


def case_groups(a):
    for np, tr, groups in RUNS:
        env = dict(os.environ, OMPDSM_TRANSPORT=tr)
        p = subprocess.run(mpirun_cmd(a) + ['-np', str(np), a.prog, 'peers'],
                           env=env, capture_output=True, text=True,
                           timeout=60)
        want = 'shm' if tr == 'auto' else 'tcp'
        lines = re.findall(r'^node \d+: peer \d+ %s same-host$' % want,
                           p.stdout, re.M)
        if p.returncode or len(lines) != np * (np - 1):
            fail('mpirun -np %d comm_check peers (%s): status %d, %d of %d '
                 'peer lines over %s:\n%s%s' % (np, tr, p.returncode,
                                                len(lines), np * (np - 1),
                                                want, p.stdout, p.stderr))
        for g in groups:
            p = subprocess.run(mpirun_cmd(a) + ['-np', str(np), a.prog, g],
                               env=env, capture_output=True, text=True,
                               timeout=120)
            if p.returncode or ' %d nodes over %s' % (np, want) not in p.stderr:
                fail('mpirun -np %d comm_check %s (%s): status %d:\n%s' %
                     (np, g, tr, p.returncode, p.stderr))
        print('mpirun -np %d, %s: comm_check peers, %s passed' %
              (np, tr, ', '.join(groups)))


def case_omp(a):
    conf = os.path.join(HERE, '..', 'omp', 'conformance.py')
    launcher = ' '.join(mpirun_cmd(a))
    bad = []
    for src in a.src:
        p = subprocess.run([sys.executable, conf, '--one', src, '--threads',
                            '2,3,4', '--transports', 'auto', '--ompcc', a.ompcc,
                            '--ompdsmrun', launcher, '--timeout', '120'],
                           capture_output=True, text=True)
        sys.stdout.write(p.stdout)
        if p.returncode:
            sys.stderr.write(p.stderr)
            bad.append(os.path.basename(src))
    if bad:
        fail('under mpirun: %s' % ', '.join(bad))
    with tempfile.TemporaryDirectory(prefix='pmix-omp-') as d:
        src, prog, native = a.src[0], os.path.join(d, 'prog'), os.path.join(d, 'native')
        subprocess.run([a.ompcc, '-O1', '-o', prog, src], check=True)
        subprocess.run(['gcc', '-fopenmp', '-O1', '-o', native, src], check=True)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(('OMP', 'PMIX', 'GOMP'))}
        want = subprocess.run([native], env=dict(env, OMP_NUM_THREADS='1'),
                              capture_output=True, text=True, timeout=60)
        got = subprocess.run([prog], env=env, capture_output=True, text=True,
                             timeout=60)
        if got.returncode or got.stdout != want.stdout or not want.stdout:
            fail('./%s alone: status %d, stdout %r, gcc -fopenmp with 1 thread '
                 'printed %r' % (os.path.basename(src), got.returncode,
                                 got.stdout, want.stdout))
        t0 = time.time()
        try:
            p = subprocess.run(mpirun_cmd(a) + ['-np', '3', '-x',
                                                'OMPDSM_IFACE=eth9', prog],
                               capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            fail('mpirun -np 3 with OMPDSM_IFACE=eth9 still ran after 20 s')
        if p.returncode == 0 or 'OMPDSM_IFACE=eth9' not in p.stderr:
            fail('mpirun -np 3 with OMPDSM_IFACE=eth9: status %d:\n%s' %
                 (p.returncode, p.stderr))
        print('./prog alone: one node, same output as gcc; a start-up failure '
              'under mpirun ended the job in %.1f s' % (time.time() - t0))


def case_kill(a):
    p = subprocess.run([sys.executable, os.path.join(HERE, 'comm_fail.py'),
                        '--np', '3', '--launcher', ' '.join(mpirun_cmd(a)),
                        '--prog', a.prog, '--names-victim'])
    if p.returncode:
        fail('kill -9 of rank 1 under mpirun (above)')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--case', required=True, choices=['groups', 'omp', 'kill'])
    ap.add_argument('--mpirun', default='')
    ap.add_argument('--pmix', default='1')
    ap.add_argument('--prog')
    ap.add_argument('--ompcc')
    ap.add_argument('--src', nargs='*', default=[])
    a = ap.parse_args()
    if not a.mpirun or not os.access(a.mpirun, os.X_OK):
        print('mpirun (Open MPI) not found; skipping', file=sys.stderr)
        sys.exit(77)
    if a.pmix != '1':
        print('libompdsm was built without PMIx (libpmix-dev); skipping',
              file=sys.stderr)
        sys.exit(77)
    {'groups': case_groups, 'omp': case_omp, 'kill': case_kill}[a.case](a)


if __name__ == '__main__':
    main()
