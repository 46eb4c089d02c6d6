#!/usr/bin/env python3
"""OMPDSM_TRANSPORT=verbs on a host without an RDMA device: the job must end
non-zero within a few seconds (not wait for a connection timeout), and the
cause must be one line naming it.  Skipped (77) where a device exists."""
import argparse
import os
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument('--devices', required=True)
ap.add_argument('--launcher', required=True)
ap.add_argument('--prog', required=True)
a = ap.parse_args()

n = int(subprocess.run([a.devices, '--count'], capture_output=True, text=True,
                       check=True).stdout)
if n:
    print(f'SKIP: this host has {n} RDMA device(s); the test needs none')
    sys.exit(77)

env = dict(os.environ, OMPDSM_TRANSPORT='verbs')
for np in (2, 4):
    t0 = time.monotonic()
    p = subprocess.run([a.launcher, '-np', str(np), a.prog, 'onesided'],
                       env=env, capture_output=True, text=True, timeout=30)
    dt = time.monotonic() - t0
    out = p.stdout + p.stderr
    print(f'np{np}: status {p.returncode} after {dt:.2f} s\n{out}')
    if p.returncode == 0:
        sys.exit(f'FAIL: np{np}: the job succeeded without a device')
    # Bounds a hang (tcp's connect timeout is 30 s), not speed: the exit
    # takes ~0.1 s on an idle host.
    if dt > 10:
        sys.exit(f'FAIL: np{np}: {dt:.1f} s to fail')
    cause = [l for l in out.splitlines() if 'no RDMA device' in l]
    if not cause:
        sys.exit(f'FAIL: np{np}: no line names the missing device')
    for l in cause:
        if 'OMPDSM_TRANSPORT=verbs' not in l or 'use tcp' not in l:
            sys.exit(f'FAIL: np{np}: the cause line does not say what to do: {l}')
    if len(set(l.split(': ', 2)[-1] for l in cause)) != 1:
        sys.exit(f'FAIL: np{np}: different causes reported: {cause}')
print('ok')
