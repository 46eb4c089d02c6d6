#!/usr/bin/python3
"""tests/unit/test_duty.py BENCH_DUTY - the slow-node duty cycle of the
heterogeneous benchmarks (bench/harness/duty.c, slownode.py method "duty"):
it refuses bad arguments with a message, takes the cgroup quota's share of
each period, and never outlives the process that started it (an orphaned
SCHED_FIFO busy loop would slow every later run on its CPU; without
PR_SET_PDEATHSIG in bench_duty this fails "outlived its parent").  Exits 1
on the first failure, 77 when SCHED_FIFO is refused (not root)."""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'bench', 'harness'))
import slownode  # noqa: E402

exe = os.path.abspath(sys.argv[1])


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def alive(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().split(')')[-1].split()[0] != 'Z'
    except OSError:
        return False


# Bad arguments: exit 2, a message naming the argument, no busy loop.
for args, word in ((['1', '400'], 'usage'), (['x', '400', '200'], 'CPU'),
                   (['0', '10', '5'], 'PERIOD_US'), (['0', '400', '0'], 'BUSY_US'),
                   (['0', '400', '400'], 'less than PERIOD_US')):
    p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=10)
    if p.returncode != 2 or word not in p.stderr:
        fail('bench_duty %s: exit %d, stderr %r (want 2 and %r)'
             % (' '.join(args), p.returncode, p.stderr, word))
    print('ok: bench_duty %s refused: %s' % (' '.join(args), p.stderr.strip()))

# The share: 1 - quota/period of each duty period, at least 1 us, never all.
for quota, period, dper, want in ((5000, 10000, 400, 200), (2500, 10000, 400, 300),
                                  (7500, 10000, 1000, 250), (10000, 10000, 400, 1),
                                  (0, 10000, 400, 399)):
    got = slownode.SlowNode('duty', quota, period, 1, build='.',
                            duty_period_us=dper).duty_busy_us()
    if got != want:
        fail('duty_busy_us(quota %d, period %d, duty period %d) = %d, want %d'
             % (quota, period, dper, got, want))
print('ok: busy share of each duty period')

# Started by a shell that exits at once: it must die with it.  1 us busy in
# 400, on CPU 0, so the test costs nothing even if it were left running.
sh = subprocess.Popen(['/bin/sh', '-c', '"$0" 0 400 1 & echo $!; sleep 0.5', exe],
                      stdout=subprocess.PIPE, text=True)
pid = int(sh.stdout.readline())
time.sleep(0.2)
if not alive(pid):
    # It exited on its own: say why (SCHED_FIFO refused is a skip).
    sh.wait()
    p = subprocess.run([exe, '0', '400', '1'], capture_output=True, text=True, timeout=10)
    if p.returncode == 1 and 'SCHED_FIFO refused' in p.stderr:
        print('SKIP: ' + p.stderr.strip())
        sys.exit(77)
    fail('bench_duty exited before its parent: %d %r' % (p.returncode, p.stderr))
with open('/proc/%d/sched' % pid) as f:
    policy = [ln for ln in f if ln.startswith('policy')]
if not policy or policy[0].split()[-1] != '1':
    fail('bench_duty runs with %r, not SCHED_FIFO (1)' % policy)
print('ok: bench_duty %d runs at SCHED_FIFO' % pid)
sh.wait()
for _ in range(100):
    if not alive(pid):
        break
    time.sleep(0.05)
else:
    os.kill(pid, 9)
    fail('bench_duty %d outlived its parent by 5 s' % pid)
print('ok: bench_duty ended with its parent')
