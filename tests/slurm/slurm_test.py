#!/usr/bin/python3
"""tests/slurm/slurm_test.py - nodes started by Slurm's `srun --mpi=pmix`
(PMIx start-up, comm/boot_pmix.c) on a one-machine Slurm that this test
starts itself (tests/slurm/slurm.sh: munged, slurmctld and slurmd in a
temporary directory, loopback ports) and stops at the end.

  1. comm_check peers and groups under srun -n 2, 3 and 4 (auto: shm
     between the nodes, every node checking the others' data) and -n 3
     over tcp; `peers` must report n-1 peers over the expected transport.
  2. conformance programs (tests/omp) under srun -n 2, 3 and 4 against
     gcc -fopenmp with as many threads (tests/omp/conformance.py).
  3. kill -9 of rank 1 of 3 (tests/comm/comm_fail.py): srun ends non-zero
     within 5 s, nothing is left, and stderr names rank 1.

Exit 0 on success, 1 on failure, 77 with the reason when not root, Slurm,
its mpi/pmix plugin or munge is missing, or libompdsm has no PMIx.
Options: --pmix 0|1, --prog comm_check, --ompcc PATH, --src FILE..."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SLURM_SH = os.path.join(HERE, 'slurm.sh')
SRUN_NP = os.path.join(HERE, 'srun_np.sh')


def fail(msg):
    print('FAIL: ' + msg, file=sys.stderr)
    sys.exit(1)


RUNS = [(2, 'auto', ['onesided', 'coll']),
        (3, 'auto', ['onesided', 'coll']),
        (4, 'auto', ['onesided', 'atomics', 'coll']),
        (3, 'tcp', ['onesided', 'atomics', 'barrier', 'coll', 'send'])]


def srun(n, args, env, timeout):
    return subprocess.run([SRUN_NP, '-np', str(n)] + args, env=env,
                          capture_output=True, text=True, timeout=timeout)


def case_groups(a, env0):
    for np, tr, groups in RUNS:
        env = dict(env0, OMPDSM_TRANSPORT=tr)
        p = srun(np, [a.prog, 'peers'], env, 60)
        want = 'shm' if tr == 'auto' else 'tcp'
        lines = re.findall(r'^node \d+: peer \d+ %s same-host$' % want,
                           p.stdout, re.M)
        if p.returncode or len(lines) != np * (np - 1):
            fail('srun -n %d comm_check peers (%s): status %d, %d of %d '
                 'peer lines over %s:\n%s%s' % (np, tr, p.returncode,
                                                len(lines), np * (np - 1),
                                                want, p.stdout, p.stderr))
        for g in groups:
            p = srun(np, [a.prog, g], env, 120)
            if p.returncode or ' %d nodes over %s' % (np, want) not in p.stderr:
                fail('srun -n %d comm_check %s (%s): status %d:\n%s' %
                     (np, g, tr, p.returncode, p.stderr))
        print('srun --mpi=pmix -n %d, %s: comm_check peers, %s passed' %
              (np, tr, ', '.join(groups)))


def case_omp(a, env):
    conf = os.path.join(HERE, '..', 'omp', 'conformance.py')
    bad = []
    for src in a.src:
        p = subprocess.run([sys.executable, conf, '--one', src, '--threads',
                            '2,3,4', '--transports', 'auto', '--ompcc', a.ompcc,
                            '--ompdsmrun', SRUN_NP, '--timeout', '120'],
                           env=env, capture_output=True, text=True)
        sys.stdout.write(p.stdout)
        if p.returncode:
            sys.stderr.write(p.stderr)
            bad.append(os.path.basename(src))
    if bad:
        fail('under srun --mpi=pmix: %s' % ', '.join(bad))


def case_kill(a, env):
    p = subprocess.run([sys.executable, os.path.join(HERE, '..', 'comm',
                                                     'comm_fail.py'),
                        '--np', '3', '--launcher', SRUN_NP, '--prog', a.prog,
                        '--names-victim'], env=env)
    if p.returncode:
        fail('kill -9 of rank 1 under srun (above)')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pmix', default='1')
    ap.add_argument('--prog', required=True)
    ap.add_argument('--ompcc')
    ap.add_argument('--src', nargs='*', default=[])
    a = ap.parse_args()
    if a.pmix != '1':
        print('libompdsm was built without PMIx (libpmix-dev); skipping',
              file=sys.stderr)
        sys.exit(77)
    c = subprocess.run(['sh', SLURM_SH, 'check'])
    if c.returncode:
        sys.exit(77 if c.returncode == 77 else 1)
    d = tempfile.mkdtemp(prefix='ompdsm-slurm-')
    try:
        up = subprocess.run(['sh', SLURM_SH, 'up', d], capture_output=True,
                            text=True, timeout=60)
        if up.returncode:
            fail('could not start Slurm:\n' + up.stderr)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(('SLURM', 'PMIX', 'OMPI'))}
        env['SLURM_CONF'] = os.path.join(d, 'slurm.conf')
        env['PATH'] = env.get('PATH', '/usr/bin:/bin') + ':/usr/sbin'
        case_groups(a, env)
        if a.src and a.ompcc:
            case_omp(a, env)
        case_kill(a, env)
    finally:
        subprocess.run(['sh', SLURM_SH, 'down', d])


if __name__ == '__main__':
    main()
