#!/usr/bin/python3
"""tests/runtime/cgkernels_test.py - the user-written CG kernels
(bench/kernels/cgband.c, cgrand.c: schedule(profiled) in the source) on 2
ompdsm nodes against the same source built by gcc -fopenmp (its loops
static), 2 threads.

    cgkernels_test.py OMPDSMRUN KERNEL_DIR NAME.CLASS...

Each kernel runs natively, then under ompdsm with home migration off and
with OMPDSM_MIGRATION=diffs (profiled splits and moving homes must not
change the result).  Every run must report Verification = SUCCESSFUL (its
own check: every solve's true residual below 1e-8) and the same checksum
as the native run to a relative 1e-9 (the reductions' order differs, the
solution does not)."""
import os
import re
import subprocess
import sys

CHECK_RE = re.compile(r'^Checksum = *([-+0-9.eE]+)', re.M)
VERIF_RE = re.compile(r'^Verification = *(\w+)', re.M)


def run(cmd, env):
    e = dict(os.environ)
    e.update(env)
    p = subprocess.run(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, text=True, timeout=300)
    m, v = CHECK_RE.search(p.stdout), VERIF_RE.search(p.stdout)
    if p.returncode or not m or not v or v.group(1) != 'SUCCESSFUL':
        return None, 'status %d:\n%s' % (p.returncode, p.stdout[-1500:])
    return float(m.group(1)), None


def main():
    launcher, kdir, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    bad = 0
    for name in names:
        ref, err = run([os.path.join(kdir, name + '.native')],
                       {'OMP_NUM_THREADS': '2', 'OMP_WAIT_POLICY': 'passive'})
        if err:
            print('FAIL %s native: %s' % (name, err))
            bad += 1
            continue
        for mig in ('off', 'diffs'):
            got, err = run([launcher, '--timeout', '240', '-np', '2',
                            os.path.join(kdir, name)],
                           {'OMPDSM_MIGRATION': mig, 'OMPDSM_TRANSPORT': 'shm'})
            what = '%s ompdsm np2 migration %s' % (name, mig)
            if err:
                print('FAIL %s: %s' % (what, err))
                bad += 1
            elif abs(got - ref) > 1e-9 * abs(ref):
                print('FAIL %s: checksum %.12e, native %.12e' % (what, got, ref))
                bad += 1
            else:
                print('ok   %s: checksum %.12e (native %.12e)' % (what, got, ref))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
