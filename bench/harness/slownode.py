"""bench/harness/slownode.py - make node 1 (or native thread 1) slow.

Three ways, the first two as in DESIGN.md ("Tools found to work here"):

  cgroup  a cgroup v1 cpu group with cpu.cfs_quota_us / cpu.cfs_period_us
          (5000 / 10000 halves whatever is in it; run.py says why it uses a
          10 ms period rather than DESIGN.md's 100 ms).  An ompdsm node puts
          itself in the group through slowwrap.sh when OMPDSM_RANK=1; for a
          native run the harness moves the one OpenMP thread bound to CPU 1
          (cgroup v1 accepts a thread id in `tasks`), so exactly the same
          share of the same CPU is taken from the same member of the team.
  hog     a busy loop pinned on CPU 1 (the multi-user case of the Omni/SCASH
          re-partitioning paper): node 1
          (bound to CPU 1 by ompdsmrun) or native thread 1 (bound to CPU 1
          by OMP_PROC_BIND) gets about half of that CPU.
  duty    bench_duty (bench/harness/duty.c, built in BUILD/bench/harness):
          a SCHED_FIFO duty cycle on CPU 1 that takes the same share as the
          cgroup quota (1 - quota/period) in slices of --duty-period us
          (default 400: 200 us busy, 200 us free), so node 1 or native
          thread 1 runs at that share of its speed in every stretch of a
          millisecond or more, as on a slower CPU.  The cgroup quota gives
          the share over 10 ms in one piece (full speed, then stopped for up
          to 5 ms), and the hog in the scheduler's slices of milliseconds;
          a loop whose executions last about a millisecond (CG's) sees a
          fast node that sometimes stalls, not a slow one
          (docs/performance.md, "A slower CPU").

auto picks cgroup when the controller is there and writable (we run as
root), else hog, and the output says which one was used.
"""
import os
import signal
import subprocess
import sys
import time

CPU_CGROUP = '/sys/fs/cgroup/cpu'


def _write(path, value):
    with open(path, 'w') as f:
        f.write(str(value))


def _read(path):
    with open(path) as f:
        return f.read()


class SlowNode:
    """One slow-down mechanism for the whole harness run.

    method: 'cgroup' or 'hog' after setup(); describe() says what it is."""

    def __init__(self, method='auto', quota_us=5000, period_us=10000, cpu=1,
                 build=None, duty_period_us=400):
        self.want = method
        self.build = build
        self.duty_period_us = duty_period_us
        self.method = None
        self.quota_us = quota_us
        self.period_us = period_us
        self.cpu = cpu
        self.group = None
        self.hog = None
        self.why_not_cgroup = None

    # -- setup / teardown ---------------------------------------------
    def duty_exe(self):
        return os.path.join(self.build or '.', 'bench', 'harness', 'bench_duty')

    def duty_busy_us(self):
        """The duty cycle's busy part of each period: the share the cgroup
        quota would take (1 - quota/period)."""
        share = 1.0 - float(self.quota_us) / float(self.period_us)
        return max(1, min(self.duty_period_us - 1, int(round(share * self.duty_period_us))))

    def setup(self):
        if self.want == 'duty':
            exe = self.duty_exe()
            if not os.access(exe, os.X_OK):
                raise RuntimeError('slow node: %s not built (meson compile -C BUILD '
                                   'bench_duty)' % exe)
            self.method = 'duty'
            # Fail now, not at the first slowed run, if SCHED_FIFO is refused.
            self.start_hog()
            self.stop_hog()
            return self
        if self.want in ('auto', 'cgroup'):
            err = self._setup_cgroup()
            if err is None:
                self.method = 'cgroup'
                return self
            self.why_not_cgroup = err
            if self.want == 'cgroup':
                raise RuntimeError('slow node: cgroup unavailable: ' + err)
        self.method = 'hog'
        return self

    def _setup_cgroup(self):
        if not os.path.isfile(os.path.join(CPU_CGROUP, 'cpu.cfs_quota_us')):
            return 'no cgroup v1 cpu controller at ' + CPU_CGROUP
        g = os.path.join(CPU_CGROUP, 'ompdsm-bench-slow-%d' % os.getpid())
        try:
            if not os.path.isdir(g):
                os.mkdir(g)
            _write(os.path.join(g, 'cpu.cfs_period_us'), self.period_us)
            _write(os.path.join(g, 'cpu.cfs_quota_us'), self.quota_us)
        except OSError as e:
            return '%s: %s' % (g, e.strerror)
        self.group = g
        return None

    def teardown(self):
        self.stop_hog()
        if self.group:
            # Every process that was in the group has exited by now; a
            # straggler would keep rmdir from working, so say so.
            for _ in range(50):
                try:
                    os.rmdir(self.group)
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                print('slow node: could not remove %s (still in use)' % self.group,
                      file=sys.stderr)
            self.group = None

    def describe(self):
        if self.method == 'cgroup':
            return ('cgroup v1 cpu controller: cpu.cfs_quota_us=%d of '
                    'cpu.cfs_period_us=%d (%.0f%% of one CPU) on node 1 / '
                    'native thread 1' % (self.quota_us, self.period_us,
                                         100.0 * self.quota_us / self.period_us))
        if self.method == 'duty':
            busy = self.duty_busy_us()
            return ('a SCHED_FIFO duty cycle (bench_duty) on CPU %d taking %d of every '
                    '%d us (%.0f%% of the CPU in slices of %d us) from node 1 / native '
                    'thread 1' % (self.cpu, busy, self.duty_period_us,
                                  100.0 * busy / self.duty_period_us,
                                  self.duty_period_us - busy))
        why = (' (cgroup not used: %s)' % self.why_not_cgroup) if self.why_not_cgroup else ''
        return ('a CPU hog (busy loop) pinned on CPU %d beside node 1 / native '
                'thread 1%s' % (self.cpu, why))

    # -- per run --------------------------------------------------------
    def throttled_ns(self):
        """The group's cumulated throttled time (cpu.stat), or None."""
        if not self.group:
            return None
        try:
            for line in _read(os.path.join(self.group, 'cpu.stat')).splitlines():
                k, v = line.split()
                if k == 'throttled_time':
                    return int(v)
        except (OSError, ValueError):
            pass
        return None

    def wrap_ompdsm(self, wrapper, argv):
        """The PROGRAM ARGS to give ompdsmrun so that node 1 is slowed."""
        if self.method == 'cgroup':
            return ['/bin/sh', wrapper, self.group] + argv
        return argv

    def start_hog(self):
        if self.method not in ('hog', 'duty') or self.hog:
            return
        if self.method == 'duty':
            self.hog = subprocess.Popen([self.duty_exe(), str(self.cpu),
                                         str(self.duty_period_us), str(self.duty_busy_us())],
                                        stdin=subprocess.DEVNULL)
            time.sleep(0.05)
            if self.hog.poll() is not None:
                rc = self.hog.returncode
                self.hog = None
                raise RuntimeError('slow node: bench_duty exited %d (its message above)' % rc)
            return
        code = ('import os\nos.sched_setaffinity(0, {%d})\nwhile True:\n    pass\n'
                % self.cpu)
        self.hog = subprocess.Popen([sys.executable, '-c', code],
                                    stdin=subprocess.DEVNULL)
        time.sleep(0.05)

    def stop_hog(self):
        if self.hog:
            self.hog.send_signal(signal.SIGKILL)
            self.hog.wait()
            self.hog = None

    def slow_native_thread(self, pid, alive, timeout=10.0):
        """Move the thread of process pid that is bound to CPU self.cpu
        (OpenMP thread 1 under OMP_PROC_BIND) into the group, polling until
        it exists.  alive() says whether the process still runs.  Returns
        the thread id, or None (with the reason in the second element)."""
        if self.method != 'cgroup':
            return None, 'hog'
        want = str(self.cpu)
        t_end = time.time() + timeout
        while time.time() < t_end:
            if not alive():
                return None, ('the run ended before its thread 1 could be moved '
                              '(too short to slow)')
            try:
                tids = os.listdir('/proc/%d/task' % pid)
            except OSError:
                return None, 'process ended'
            for tid in tids:
                if int(tid) == pid:
                    continue
                try:
                    st = _read('/proc/%d/task/%s/status' % (pid, tid))
                except OSError:
                    continue
                for line in st.splitlines():
                    if line.startswith('Cpus_allowed_list:') and line.split()[1] == want:
                        try:
                            _write(os.path.join(self.group, 'tasks'), tid)
                        except OSError as e:
                            return None, 'tasks: %s' % e.strerror
                        return int(tid), None
            time.sleep(0.0005)
        return None, 'no thread bound to CPU %d appeared' % self.cpu
