#!/usr/bin/python3
"""bench/harness/run.py - the kernels' benchmark matrix (not a test).

    /usr/bin/python3 bench/harness/run.py --build DIR [--quick] [--reps N]
        [--one-node-reps N] [--out DIR] [--kernels K ...] [--update-docs]

For every kernel of bench/kernels (EP, CG, IS, MG, Himeno) it runs
  cc -fopenmp         1 and 2 threads        (the reference the goals name)
  clang -fopenmp      1 and 2 threads        (same backend compiler as ompcc)
  ompdsm              1 node; 2 nodes over shm; 2 nodes over tcp
each homogeneous and, for the two-wide configurations, with node 1 (native:
thread 1) slowed to half a CPU (slownode.py).  Repetitions are interleaved
(rep 1 of everything, then rep 2, ...) so that the machine's load drifts
over all configurations alike; medians per configuration, and every ratio
is the median over repetitions of the ratio of the two runs of one
repetition (adjacent in time: the machine's speed drifts between
repetitions by more than the goals' margins).  The 1-node goals (5%) come
from --one-node-reps extra runs of gcc, clang and ompdsm on 1 thread/node,
back to back.  Every run's verification is
checked (Himeno: GOSA against cc -fopenmp with 1 thread, 6 significant
digits); a failed run is reported in the table, never averaged in.
ompdsm runs write their DSM statistics (OMPDSM_STATS=<file>.json).

Outputs in --out (default bench/results; not to be committed): results.csv
(one row per run), results.json (everything), results.md (tables), PNG
plots, logs/ (each run's output) and stats/ (each run's statistics).
--update-docs rewrites the kernels section of docs/performance.md.
See docs/performance.md ("Kernels") and docs/model.md.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import re
import resource
import shlex
import signal
import statistics
import subprocess
import sys
import time
import typing

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import model      # noqa: E402
import slownode   # noqa: E402

# ---------------------------------------------------------------------------
# The kernels: class macro, the macro holding the timed iteration count (for
# the model's calibration variant), iteration counts, loop that is split.
KERNELS = {
    'ep': dict(define='CLASS', classes=['S', 'W', 'A'], iter_macro=None,
               iters={'S': 1, 'W': 1, 'A': 1}),
    'cg': dict(define='CLASS', classes=['S', 'W', 'A'], iter_macro='NITER',
               iters={'S': 15, 'W': 15, 'A': 15}),
    'is': dict(define='CLASS', classes=['S', 'W', 'A'], iter_macro='IMAX',
               iters={'S': 10, 'W': 10, 'A': 10}),
    'mg': dict(define='CLASS', classes=['S', 'W', 'A'], iter_macro='NIT',
               iters={'S': 4, 'W': 4, 'A': 4}),
    'himeno': dict(define='SIZE', classes=['XS', 'S'], iter_macro=None,
                   iters=None),  # iterations: the command-line argument
}
DEFAULT_KERNELS = ['ep.W', 'cg.A', 'is.A', 'mg.A', 'himeno.S']
QUICK_KERNELS = ['ep.S', 'cg.S', 'is.S', 'mg.S', 'himeno.XS']
HIMENO_ITERS = 200


class Config(typing.NamedTuple):
    """One column of the matrix."""
    name: str
    kind: str    # 'native' (cc/clang -fopenmp) or 'ompdsm'
    what: str    # native: the compiler; ompdsm: the transport
    width: int   # threads (native) or threads in all (ompdsm)
    label: str   # for tables and plots


CONFIGS = [Config(*c) for c in [
    ('gcc-1', 'native', 'gcc', 1, 'cc -fopenmp, 1 thread'),
    ('gcc-2', 'native', 'gcc', 2, 'cc -fopenmp, 2 threads'),
    ('clang-1', 'native', 'clang', 1, 'clang -fopenmp, 1 thread'),
    ('clang-2', 'native', 'clang', 2, 'clang -fopenmp, 2 threads'),
    ('dsm-1', 'ompdsm', 'shm', 1, 'ompdsm, 1 node'),
    ('dsm-shm-2', 'ompdsm', 'shm', 2, 'ompdsm, 2 nodes, shm'),
    ('dsm-tcp-2', 'ompdsm', 'tcp', 2, 'ompdsm, 2 nodes, tcp'),
    # Hybrid nodes (OMPDSM_THREADS_PER_NODE=2) are not accepted by the
    # runtime yet; select this with --configs once they are.
    ('dsm-hybrid-1x2', 'ompdsm', 'shm', 2, 'ompdsm, 1 node x 2 threads'),
]]
DEFAULT_CONFIGS = [c.name for c in CONFIGS if c.name != 'dsm-hybrid-1x2']
CONF = {c.name: c for c in CONFIGS}
SHORT = {'gcc-1': 'gcc 1t', 'gcc-2': 'gcc 2t', 'clang-1': 'clang 1t',
         'clang-2': 'clang 2t', 'dsm-1': 'dsm 1', 'dsm-shm-2': 'shm 2',
         'dsm-tcp-2': 'tcp 2', 'dsm-hybrid-1x2': 'hyb 1x2'}

# Statistics kept per run (totals over nodes and per node).
STAT_KEYS = ['read_faults', 'write_faults', 'pages_fetched', 'twins', 'diffs',
             'diff_bytes', 'diff_runs', 'notices_sent', 'notices_applied',
             'invalidations', 'barriers', 'forks', 'dsm_atomics', 'fault_ns',
             'barrier_ns', 'puts', 'put_bytes', 'gets', 'get_bytes',
             'comm_atomics', 'notifies', 'wait_ns', 'sleeps', 'region_ns',
             'remote_faults', 'migrations', 'migrate_bytes']

GOALS = [
    # (id, kernel, class or None, what, threshold, text)
    ('ep-speedup', 'ep', None, 'speedup_shm', 1.85, 'EP: 2 nodes (shm) >= 1.85x 1 node'),
    ('ep-native', 'ep', None, 'vs_native2_shm', 0.95, 'EP: 2 nodes (shm) >= 0.95x cc -fopenmp 2 threads'),
    ('himeno-speedup', 'himeno', 'S', 'speedup_shm', 1.6, 'Himeno S: 2 nodes (shm) >= 1.6x 1 node'),
    ('himeno-native', 'himeno', 'S', 'vs_native2_shm', 0.8, 'Himeno S: 2 nodes (shm) >= 0.8x cc -fopenmp 2 threads'),
    ('cg-speedup', 'cg', 'A', 'speedup_shm', 1.3, 'CG A: 2 nodes (shm) >= 1.3x 1 node'),
]
ONE_NODE_GOAL = 1.05  # ompdsm 1 node / cc -fopenmp 1 thread


# ---------------------------------------------------------------------------
def sh(cmd, **kw):
    """Output of a command, or '' if it fails (machine description only)."""
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=20, **kw).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ''


def loadavg():
    with open('/proc/loadavg') as f:
        return [float(x) for x in f.read().split()[:3]]


def _cpu_times():
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v), idle


def busy_fraction(interval=0.3):
    """Share of all CPUs used over `interval` s.  Called between runs, when
    none of ours runs: this is other people's load, right now (the load
    average lags by a minute)."""
    t0, i0 = _cpu_times()
    time.sleep(interval)
    t1, i1 = _cpu_times()
    return 1.0 - (i1 - i0) / float(max(1, t1 - t0))


def wait_quiet(limit, threshold=0.10):
    """Wait up to `limit` s for the machine to be idle; returns (busy
    fraction at the start of the run, seconds waited)."""
    b = busy_fraction()
    t0 = time.time()
    while b > threshold and time.time() - t0 < limit:
        time.sleep(1.0)
        b = busy_fraction()
    return b, time.time() - t0


def machine_info():
    cpu = ''
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                cpu = line.split(':', 1)[1].strip()
                break
    fam = sh(['sh', '-c', "lscpu | sed -n 's/^CPU family: *//p'"])
    mem_kb = 0
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemTotal:'):
                mem_kb = int(line.split()[1])
    os_name = ''
    try:
        with open('/etc/os-release') as f:
            for line in f:
                if line.startswith('PRETTY_NAME='):
                    os_name = line.split('=', 1)[1].strip().strip('"')
    except OSError:
        pass
    hyp = sh(['sh', '-c', "lscpu | sed -n 's/^Hypervisor vendor: *//p'"])
    cont = sh(['systemd-detect-virt', '--container'])
    virt = ('%s guest' % hyp if hyp else 'no hypervisor seen') + (
        ', in a %s container' % cont if cont and cont != 'none' else '')
    gcc = sh(['cc', '--version']).splitlines()
    return {
        'nproc': int(sh(['nproc']) or os.cpu_count()),
        'cpu_model': cpu + (' (family %s)' % fam if fam else ''),
        'kernel': platform.release(),
        'os': os_name,
        'memory_gib': round(mem_kb / 1048576.0, 1),
        'virtualization': virt,
        'cc': gcc[0] if gcc else '',
        'hostname': platform.node(),
    }


def git_describe():
    head = sh(['git', '-C', SRC, 'rev-parse', '--short', 'HEAD'])
    dirty = sh(['git', '-C', SRC, 'status', '--porcelain', '--untracked-files=no'])
    return head + (' (with uncommitted changes)' if dirty else '')


def median(xs):
    return statistics.median(xs) if xs else None


def fmt(x, nd=3):
    if x is None:
        return '-'
    if isinstance(x, str):
        return x
    if abs(x) >= 100:
        return '%.1f' % x
    return ('%.' + str(nd) + 'f') % x


def sig6(x):
    return float('%.5e' % x)


# ---------------------------------------------------------------------------
class Binaries:
    """Finds (or builds) every executable the matrix needs."""

    def __init__(self, build, out, log):
        self.build = os.path.abspath(build)
        self.out = out
        self.log = log
        self.ompcc = os.path.join(self.build, 'ompcc')
        self.ompdsmrun = os.path.join(self.build, 'ompdsmrun')
        for p in (self.ompcc, self.ompdsmrun):
            if not os.access(p, os.X_OK):
                sys.exit('run.py: %s not found: build first (meson setup DIR && ninja -C DIR)' % p)
        self.bindir = os.path.join(out, 'bin')
        os.makedirs(self.bindir, exist_ok=True)
        self.notes = []
        self.clang = None
        m = re.search(r'^clang:\s*(\S+)', sh([self.ompcc, '--version']), re.M)
        if m:
            self.clang = m.group(1)
        self.clang_ok = None
        self.versions = {'clang': sh([self.clang, '--version']).splitlines()[0] if self.clang else ''}

    def _compile(self, cmd, what):
        self.log('  compiling %s' % what)
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            self.log('  failed: %s\n%s' % (' '.join(cmd), r.stdout[-2000:]))
            return False
        return True

    def src(self, k):
        return os.path.join(SRC, 'bench', 'kernels', k + '.c')

    def flags(self, k, c):
        return ['-O2', '-g', '-D%s=%s' % (KERNELS[k]['define'], c)]

    def _kernel_binary(self, k, c, name, cc, what):
        """bench/kernels/<name> of the build tree, or <name> compiled here
        with cc (into --out's bin/), or None if that fails."""
        p = os.path.join(self.build, 'bench', 'kernels', name)
        if os.access(p, os.X_OK):
            return p
        q = os.path.join(self.bindir, name)
        if not os.access(q, os.X_OK):
            self._note_self_built()
            if not self._compile(cc + self.flags(k, c) + [self.src(k), '-o', q, '-lm'],
                                 '%s.%s with %s' % (k, c, what)):
                return None
        return q

    def ompdsm(self, k, c):
        return self._kernel_binary(k, c, '%s.%s' % (k, c), [self.ompcc], 'ompcc')

    def native(self, k, c, compiler):
        if compiler == 'gcc':
            return self._kernel_binary(k, c, '%s.%s.native' % (k, c), ['cc', '-fopenmp'],
                                       'cc -fopenmp')
        # clang -fopenmp (LLVM's libomp): the same code generator as ompcc's
        # backend, to tell the compiler's share of a difference from the DSM's.
        if not self.clang or self.clang_ok is False:
            return None
        q = os.path.join(self.bindir, '%s.%s.clang' % (k, c))
        if not os.access(q, os.X_OK):
            ok = self._compile([self.clang, '-fopenmp'] + self.flags(k, c) + [self.src(k), '-o', q, '-lm'],
                               '%s.%s with %s -fopenmp' % (k, c, self.clang))
            if not ok:
                if self.clang_ok is None:
                    self.notes.append('%s -fopenmp did not build (is libomp-19-dev installed?): '
                                      'the clang columns are empty' % self.clang)
                self.clang_ok = False
                return None
            self.clang_ok = True
        return q

    def variant(self, k, c, factor=2):
        """ompcc build of kernel k with its timed iteration count multiplied
        by factor, for the model's per-iteration statistics (the difference
        between this and the normal build is exactly factor-1 times the
        iterations' work: set-up, warm-up and verification cancel)."""
        macro = KERNELS[k]['iter_macro']
        if not macro:
            return None, None
        n = KERNELS[k]['iters'][c]
        q = os.path.join(self.bindir, '%s.%s.x%d' % (k, c, factor))
        srcv = os.path.join(self.bindir, '%s.x%d.c' % (k, factor))
        with open(self.src(k)) as f:
            text = f.read()
        text2, cnt = re.subn(r'(?m)^#define %s\s+(\d+)' % macro,
                             lambda m: '#define %s %d' % (macro, int(m.group(1)) * factor), text)
        if cnt == 0:
            return None, None
        with open(srcv, 'w') as f:
            f.write(text2)
        if not os.access(q, os.X_OK):
            if not self._compile([self.ompcc] + self.flags(k, c) + [srcv, '-o', q, '-lm'],
                                 '%s.%s with %d x the iterations (model calibration)' % (k, c, factor)):
                return None, None
        return q, n * (factor - 1)

    def _note_self_built(self):
        s = ('kernels not found in %s/bench/kernels (bench/kernels/meson.build not '
             'wired into bench/meson.build?): built by the harness with the same '
             'flags into %s' % (self.build, self.bindir))
        if s not in self.notes:
            self.notes.append(s)


# ---------------------------------------------------------------------------
OUT_RE = {
    'time': re.compile(r'^Time in seconds = *([-+0-9.eE]+)', re.M),
    'verification': re.compile(r'^Verification = *(\w+)', re.M),
    'mflops': re.compile(r'^MFLOPS measured : *([-+0-9.eE]+)', re.M),
    'mops': re.compile(r'^Mop/s total = *([-+0-9.eE]+)', re.M),
    'gosa': re.compile(r'^GOSA : *([-+0-9.eE]+)', re.M),
    'threads': re.compile(r'^Threads = *(\d+)', re.M),
}


def parse_output(text):
    r = {}
    for k, rx in OUT_RE.items():
        m = rx.findall(text)
        if m:
            v = m[-1]
            r[k] = v if k == 'verification' else float(v)
    return r


def load_stats(path):
    """The OMPDSM_STATS JSON: counters named by layer (dsm_read_faults,
    comm_puts, rt_regions); keep the layer only where two layers share a
    name (dsm_atomics, comm_atomics).  Older files named both "atomics"."""
    def pairs(kv):
        d = {}
        for k, v in kv:
            if k == 'atomics':
                k = 'dsm_atomics' if 'dsm_atomics' not in d else 'comm_atomics'
            elif k not in ('dsm_atomics', 'comm_atomics') and \
                    k.startswith(('dsm_', 'comm_', 'rt_')):
                k = k.split('_', 1)[1]
            d[k] = v
        return d
    with open(path) as f:
        j = json.load(f, object_pairs_hook=pairs)
    nodes = j.get('per_node', [])
    tot = {k: sum(n.get(k, 0) for n in nodes) for k in STAT_KEYS}
    per = [{k: n.get(k, 0) for k in STAT_KEYS} for n in nodes]
    return {'nodes': j.get('nodes'), 'transport': j.get('transport'), 'total': tot,
            'per_node': per, 'machine_costs': j.get('machine_costs'),
            'write_detection': j.get('write_detection')}


class Runner:
    def __init__(self, args, bins, slow, log):
        self.args = args
        self.bins = bins
        self.slow = slow
        self.log = log
        self.logdir = os.path.join(args.out, 'logs')
        self.statdir = os.path.join(args.out, 'stats')
        os.makedirs(self.logdir, exist_ok=True)
        os.makedirs(self.statdir, exist_ok=True)
        self.wrapper = os.path.join(HERE, 'slowwrap.sh')
        self.page_size = os.environ.get('OMPDSM_PAGE_SIZE', '64K')
        self.waited = 0.0  # seconds spent waiting for other jobs, all runs

    def kernel_args(self, k):
        if k == 'himeno':
            return [str(self.args.himeno_iters)]
        return []

    def command(self, k, c, cfg, slowed, exe=None):
        conf = CONF[cfg]
        kind, what, width = conf.kind, conf.what, conf.width
        env = dict(os.environ)
        for v in ('OMPDSM_STATS', 'OMP_NUM_THREADS', 'OMP_PROC_BIND', 'OMP_PLACES',
                  'OMPDSM_TRANSPORT', 'OMPDSM_THREADS_PER_NODE'):
            env.pop(v, None)
        if kind == 'native':
            exe = exe or self.bins.native(k, c, what)
            if not exe:
                return None, None
            env['OMP_NUM_THREADS'] = str(width)
            if self.args.native_bind:
                # Bound like ompdsmrun binds its nodes (node k on CPU k).
                env['OMP_PROC_BIND'] = 'true'
                env['OMP_PLACES'] = 'cores'
            return [exe] + self.kernel_args(k), env
        exe = exe or self.bins.ompdsm(k, c)
        if not exe:
            return None, None
        env['OMPDSM_TRANSPORT'] = what
        nodes = width
        if cfg == 'dsm-hybrid-1x2':
            nodes = 1
            env['OMPDSM_THREADS_PER_NODE'] = '2'
        prog = [exe] + self.kernel_args(k)
        if slowed:
            prog = self.slow.wrap_ompdsm(self.wrapper, prog)
        return [self.bins.ompdsmrun, '--timeout', str(self.args.timeout),
                '-np', str(nodes)] + prog, env

    def run(self, k, c, cfg, slowed, rep, exe=None, tag=''):
        name = '%s.%s_%s_%s_r%d%s' % (k, c, cfg, 'slow' if slowed else 'homo', rep, tag)
        cmd, env = self.command(k, c, cfg, slowed, exe)
        rec = {'kernel': k, 'class': c, 'config': cfg, 'slowed': slowed, 'rep': rep,
               'name': name, 'status': 'skipped', 'time': None}
        if cmd is None:
            rec['status'] = 'SKIPPED: no executable'
            return rec
        kind = CONF[cfg].kind
        stats_path = None
        if kind == 'ompdsm':
            stats_path = os.path.join(self.statdir, name + '.json')
            env['OMPDSM_STATS'] = stats_path
            if os.path.exists(stats_path):
                os.unlink(stats_path)
        limit = max(0.0, min(self.args.wait_idle, self.args.wait_budget - self.waited))
        rec['busy_before'], rec['waited'] = wait_quiet(limit)
        self.waited += rec['waited']
        rec['load_before'] = loadavg()[0]
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        thr0 = self.slow.throttled_ns() if slowed else None
        if slowed:
            self.slow.start_hog()
        t0 = time.time()
        logf = os.path.join(self.logdir, name + '.log')
        note = None
        try:
            with open(logf, 'w') as lf:
                lf.write('$ %s\n' % ' '.join(shlex.quote(x) for x in cmd))
                lf.flush()
                p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     stdin=subprocess.DEVNULL)
                if slowed and kind == 'native':
                    tid, why = self.slow.slow_native_thread(p.pid, alive=lambda: p.poll() is None)
                    note = ('thread %d throttled' % tid) if tid else why
                try:
                    out, _ = p.communicate(timeout=self.args.timeout + 15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    out, _ = p.communicate()
                    out += '\n[harness: killed after %d s]\n' % (self.args.timeout + 15)
                except BaseException:
                    p.terminate()  # ompdsmrun ends its nodes on SIGTERM
                    p.wait()
                    raise
                lf.write(out)
            rc = p.returncode
        finally:
            if slowed:
                self.slow.stop_hog()
        rec['wall'] = time.time() - t0
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        # CPU time of the job (all nodes / threads): against the wall time it
        # shows a run that was starved by other load.
        rec['cpu'] = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        rec['load_after'] = loadavg()[0]
        rec['exit'] = rc
        if thr0 is not None:
            thr1 = self.slow.throttled_ns()
            rec['throttled_ms'] = (thr1 - thr0) / 1e6 if thr1 is not None else None
        if note:
            rec['slow_note'] = note
        rec.update(parse_output(out))
        rec['log'] = os.path.relpath(logf, self.args.out)
        if stats_path and os.path.exists(stats_path):
            try:
                rec['stats'] = load_stats(stats_path)
                rec['stats_file'] = os.path.relpath(stats_path, self.args.out)
            except (OSError, ValueError) as e:
                rec['stats_error'] = str(e)
        # Status: loud and specific.
        problems = []
        if rc != 0:
            problems.append('exit %s' % rc + (' (timeout)' if rc in (124, -9) else ''))
        if rec.get('verification') != 'SUCCESSFUL' and not tag:
            problems.append('verification %s' % rec.get('verification', 'missing'))
        if rec.get('time') is None:
            problems.append('no time printed')
        if slowed and kind == 'native' and self.slow.method == 'cgroup' and not note.startswith('thread'):
            problems.append('slow-down not applied: %s' % note)
        rec['status'] = 'ok' if not problems else 'FAILED: ' + ', '.join(problems)
        if tag and rc not in (0, 1):
            rec['status'] = 'FAILED: exit %s' % rc
        elif tag and rec.get('time') is not None:
            rec['status'] = 'ok'
        return rec


# ---------------------------------------------------------------------------
def comm_costs(bins, log):
    """Per-operation costs of this machine's transports from bench/comm and
    bench/dsm (if they were built): the model's measured inputs."""
    out = {}
    cb = os.path.join(bins.build, 'bench', 'comm', 'comm_bench')
    if os.access(cb, os.X_OK):
        for t in ('shm', 'tcp'):
            env = dict(os.environ, OMPDSM_TRANSPORT=t)
            env.pop('OMPDSM_STATS', None)
            cmd = [bins.ompdsmrun, '--timeout', '60', '-np', '2', cb, '--iters', '2000',
                   '--barrier-iters', '1000', '--bind', '--no-hist']
            try:
                r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, timeout=90)
                txt = r.stdout
            except subprocess.SubprocessError:
                txt = ''
            for m in re.finditer(r'RESULT transport=(\w+) nodes=2 name=(\w+) .*?med=([0-9.]+)', txt):
                out.setdefault('comm_bench', {}).setdefault(t, {})[m.group(2)] = float(m.group(3))
        log('  comm_bench (2 nodes, medians, us): %s' % json.dumps(out.get('comm_bench', {})))
    db = os.path.join(bins.build, 'bench', 'dsm', 'bench_dsm_diff')
    if os.access(db, os.X_OK):
        try:
            txt = subprocess.run([db], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, timeout=60).stdout
        except subprocess.SubprocessError:
            txt = ''
        d = {}
        for line in txt.splitlines():
            m = re.match(r'(.+?)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$', line)
            if m:
                d[m.group(1).strip()] = {'diff_GBps': float(m.group(2)),
                                         'memcmp_GBps': float(m.group(3)),
                                         'runs_per_page': float(m.group(4))}
        if d:
            out['diff_bench'] = d
            log('  bench_dsm_diff: %s' % ', '.join('%s %.2f GB/s' % (k, v['diff_GBps']) for k, v in d.items()))
    fb = os.path.join(bins.build, 'bench', 'dsm', 'bench_dsm_fault')
    if os.access(fb, os.X_OK):
        env = dict(os.environ, OMPDSM_TRANSPORT='shm')
        env.pop('OMPDSM_STATS', None)
        try:
            txt = subprocess.run([bins.ompdsmrun, '--timeout', '60', '-np', '2', fb], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, timeout=90).stdout
        except subprocess.SubprocessError:
            txt = ''
        m = re.search(r'bare fault\+mprotect\s+n=\d+\s+min\s+[0-9.]+\s+median\s+([0-9.]+)', txt)
        if m:
            out['bare_fault_us'] = float(m.group(1))
            log('  bench_dsm_fault: bare fault+mprotect %.2f us' % out['bare_fault_us'])
    return out


# ---------------------------------------------------------------------------
def summarize(runs, kernels, configs):
    """Medians per (kernel, config, slowed); ratios from medians."""
    summ = {}
    for kc in kernels:
        k, c = kc.split('.')
        e = {'kernel': k, 'class': c, 'configs': {}}
        for cfg in configs:
            for slowed in (False, True):
                rs = [r for r in runs if r['kernel'] == k and r['class'] == c and
                      r['config'] == cfg and r['slowed'] == slowed and 'tag' not in r]
                if not rs:
                    continue
                ok = [r for r in rs if r['status'] == 'ok']
                bad = [r for r in rs if r['status'] != 'ok' and not r['status'].startswith('SKIPPED')]
                ts = [r['time'] for r in ok]
                s = {'n': len(rs), 'ok': len(ok), 'failed': [r['status'] for r in bad],
                     'median': median(ts), 'min': min(ts) if ts else None,
                     'max': max(ts) if ts else None,
                     'times': ts, 'by_rep': {r['rep']: r['time'] for r in ok}}
                if s['median'] and len(ts) > 1:
                    s['spread'] = (s['max'] - s['min']) / s['median']
                mf = [r['mflops'] for r in ok if r.get('mflops') is not None]
                if mf:
                    s['mflops'] = median(mf)
                gs = [r['gosa'] for r in ok if r.get('gosa') is not None]
                if gs:
                    s['gosa'] = gs[0]
                thr = [r['throttled_ms'] for r in rs if r.get('throttled_ms') is not None]
                if thr:
                    s['throttled_ms'] = median(thr)
                # Statistics of the run whose time is the median one.
                st = [r for r in ok if r.get('stats')]
                if st:
                    st.sort(key=lambda r: r['time'])
                    mid = st[(len(st) - 1) // 2]
                    s['stats'] = mid['stats']
                    s['stats_run'] = mid['name']
                if all(r['status'].startswith('SKIPPED') for r in rs):
                    continue
                e['configs'][cfg + ('/slow' if slowed else '')] = s
        def ratio(a, b):
            """Paired: the median over repetitions of the ratio of the two
            runs of one repetition (run next to each other, so a drift of
            the machine's speed between repetitions cancels); the ratio of
            the medians when no repetition has both."""
            ca, cb = e['configs'].get(a, {}), e['configs'].get(b, {})
            ra, rb = ca.get('by_rep', {}), cb.get('by_rep', {})
            pairs = [ra[r] / rb[r] for r in ra if r in rb and ra[r] and rb[r]]
            if pairs:
                return median(pairs)
            ma, mb = ca.get('median'), cb.get('median')
            return ma / mb if ma and mb else None
        e['ratios'] = {
            'speedup_shm': ratio('dsm-1', 'dsm-shm-2'),
            'speedup_tcp': ratio('dsm-1', 'dsm-tcp-2'),
            'speedup_gcc': ratio('gcc-1', 'gcc-2'),
            'speedup_clang': ratio('clang-1', 'clang-2'),
            'vs_native2_shm': ratio('gcc-2', 'dsm-shm-2'),
            'vs_native2_tcp': ratio('gcc-2', 'dsm-tcp-2'),
            'vs_clang2_shm': ratio('clang-2', 'dsm-shm-2'),
            'one_node_vs_gcc1': ratio('dsm-1', 'gcc-1'),
            'one_node_vs_clang1': ratio('dsm-1', 'clang-1'),
            'tcp_vs_shm': ratio('dsm-tcp-2', 'dsm-shm-2'),
        }
        for cfg in ('gcc-2', 'clang-2', 'dsm-shm-2', 'dsm-tcp-2'):
            e['ratios']['slow_' + cfg] = ratio(cfg + '/slow', cfg)
        # The alternating 1-node series, when there is one.
        one = {}
        for r in runs:
            if r.get('tag') == 'one-node' and r['kernel'] == k and r['class'] == c \
                    and r['status'] == 'ok' and r.get('time'):
                one.setdefault(r['config'], {})[r['rep']] = r['time']
        for key, base in (('one_node_vs_gcc1', 'gcc-1'), ('one_node_vs_clang1', 'clang-1')):
            d, b = one.get('dsm-1', {}), one.get(base, {})
            ps = [d[i] / b[i] for i in d if i in b]
            if ps:
                e['ratios'][key + '_alt'] = median(ps)
                e['ratios'][key + '_alt_n'] = len(ps)
        summ[kc] = e
    return summ


def check_gosa(runs):
    """Himeno: every run's GOSA must equal cc -fopenmp 1 thread's to 6
    significant digits (same size, same iterations, same rep or any rep)."""
    ref = {}
    for r in runs:
        if r['kernel'] == 'himeno' and r['config'] == 'gcc-1' and r.get('gosa') is not None \
                and r['status'] == 'ok':
            ref.setdefault(r['class'], r['gosa'])
    for r in runs:
        if r['kernel'] != 'himeno' or r.get('gosa') is None or 'tag' in r:
            continue
        g0 = ref.get(r['class'])
        if g0 is None:
            continue
        r['gosa_ref'] = g0
        if sig6(r['gosa']) != sig6(g0):
            msg = 'GOSA %.9e != cc -fopenmp 1 thread %.9e' % (r['gosa'], g0)
            r['status'] = ('FAILED: ' + msg) if r['status'] == 'ok' else r['status'] + ', ' + msg


def evaluate_goals(summ):
    res = []
    for gid, k, cls, what, thr, text in GOALS:
        cands = [e for e in summ.values() if e['kernel'] == k and (cls is None or e['class'] == cls)]
        if not cands:
            res.append({'id': gid, 'goal': text, 'status': 'not measured', 'value': None})
            continue
        # The largest class measured, for EP (any class counts).
        e = cands[-1]
        v = e['ratios'].get(what)
        fails = sum(len(s['failed']) for s in e['configs'].values())
        st = 'not measured' if v is None else ('met' if v >= thr else 'NOT MET')
        res.append({'id': gid, 'goal': text, 'kernel': '%s.%s' % (e['kernel'], e['class']),
                    'value': v, 'threshold': thr, 'status': st,
                    'failed_runs': fails})
    for kc, e in summ.items():
        # The alternating series when measured, else the matrix's pairs.
        v = e['ratios'].get('one_node_vs_gcc1_alt', e['ratios'].get('one_node_vs_gcc1'))
        vc = e['ratios'].get('one_node_vs_clang1_alt', e['ratios'].get('one_node_vs_clang1'))
        st = 'not measured' if v is None else ('met' if v <= ONE_NODE_GOAL else 'NOT MET')
        res.append({'id': 'one-node-' + kc, 'goal': '%s: ompdsm 1 node within 5%% of cc -fopenmp 1 thread' % kc,
                    'kernel': kc, 'value': v, 'threshold': ONE_NODE_GOAL, 'status': st,
                    'vs_clang': vc,
                    'status_vs_clang': None if vc is None else ('met' if vc <= ONE_NODE_GOAL else 'NOT MET')})
    return res


# ---------------------------------------------------------------------------
def stat_line(s, iters):
    """Key statistics of a 2-node run (totals over nodes, per timed-run)."""
    if not s:
        return None
    t = s['total']
    per = s['per_node']
    return {
        'faults': t['read_faults'] + t['write_faults'],
        'fetched_MB': t['get_bytes'] / 1e6,
        'twins': t['twins'],
        'diffs': t['diffs'],
        'diff_MB': t['diff_bytes'] / 1e6,
        'notices': t['notices_sent'],
        'invalidations': t['invalidations'],
        'barriers': max(n['barriers'] for n in per) if per else 0,
        'fault_ms_max': max(n['fault_ns'] for n in per) / 1e6 if per else 0,
        'barrier_ms_max': max(n['barrier_ns'] for n in per) / 1e6 if per else 0,
        'wait_ms_max': max(n['wait_ns'] for n in per) / 1e6 if per else 0,
    }


def markdown(doc):
    L = []
    summ = doc['summary']
    cfgs = doc['configs']
    n = doc.get('noise', {})
    # The price of a fault and of a protection change varies between
    # machines of one kind (4 to 130 us for an mprotect): every report
    # names this machine's, as ompdsm's start-up probe measured them.
    costs = [r['stats']['machine_costs'] for r in doc.get('runs', [])
             if r.get('stats', {}).get('machine_costs')]
    if costs:
        med = lambda k: sorted(c[k] for c in costs)[len(costs) // 2] / 1000.0
        L.append('This machine, as ompdsm measured it at the start of its runs (medians of '
                 '%d runs): a fault %.1f us, a protection change (mprotect of a page) %.1f us, '
                 'a page copy %.1f us.' % (len(costs), med('fault_ns'), med('protect_ns'),
                                          med('page_copy_ns')))
        L.append('')
    if n.get('busy_median', 0) > 0.5:
        L.append('**Warning: other jobs kept this machine busy during the run (median %.0f%% of both '
                 'CPUs just before a run; see "Noise" below). The 2-wide configurations (native 2 '
                 'threads, ompdsm 2 nodes) competed with them for the two CPUs, so the ratios below '
                 'say more about the load than about ompdsm: they do not settle the goals either '
                 'way. Re-run on a quiet machine.**' % (100 * n['busy_median']))
        L.append('')
    L.append('`clang -fopenmp` is the clang that ompcc uses as its backend (%s), with LLVM\'s '
             'libomp: the same code generator as the ompdsm builds, to tell the compiler\'s '
             'share of a difference from the DSM\'s. `cc -fopenmp` is %s with libgomp.'
             % (doc.get('compilers', {}).get('clang', 'clang'), doc.get('compilers', {}).get('cc', 'cc')))
    L.append('')
    L.append('Times are the median timed section in seconds (the kernel\'s own `Time in '
             'seconds`), %d repetition(s) per cell, interleaved. `slow`: node 1 (native: '
             'thread 1) slowed to half a CPU by %s. A cell marked **FAIL** had a failed '
             'run (listed below); its median is over the successful runs only.'
             % (doc['reps'], doc['slow_method_short']))
    L.append('')
    head = ['kernel'] + [SHORT[c] for c in cfgs]
    L.append('| ' + ' | '.join(head) + ' |')
    L.append('|' + '---|' * len(head))
    for slowed in (False, True):
        for kc, e in summ.items():
            row = [kc + (' slow' if slowed else '')]
            any_cell = False
            for c in cfgs:
                s = e['configs'].get(c + ('/slow' if slowed else ''))
                if not s:
                    row.append('')
                    continue
                any_cell = True
                cell = fmt(s['median'])
                if s['failed']:
                    cell = '**FAIL %d/%d** %s' % (len(s['failed']), s['n'], cell)
                row.append(cell)
            if any_cell:
                L.append('| ' + ' | '.join(row) + ' |')
    L.append('')
    L.append('Ratios (each the median over the repetitions of the ratio of that repetition\'s '
             'two runs, which ran one after the other, so that a drift of the machine\'s speed '
             'between repetitions cancels; speedup = 1 node / 2 nodes; "vs gcc 2t" = '
             'time of cc -fopenmp 2 threads / time of ompdsm, above 1 is faster than '
             'native; "1 node / gcc 1t" and "/ clang 1t" = ompdsm 1 node time over '
             'native 1 thread; slow = slowed time / homogeneous time):')
    L.append('')
    cols = [('speedup_shm', 'speedup shm'), ('speedup_tcp', 'speedup tcp'),
            ('speedup_gcc', 'speedup gcc'), ('speedup_clang', 'speedup clang'),
            ('vs_native2_shm', 'shm vs gcc 2t'), ('vs_native2_tcp', 'tcp vs gcc 2t'),
            ('vs_clang2_shm', 'shm vs clang 2t'),
            ('one_node_vs_gcc1', '1 node / gcc 1t'), ('one_node_vs_clang1', '1 node / clang 1t'),
            ('slow_gcc-2', 'slow gcc 2t'), ('slow_clang-2', 'slow clang 2t'),
            ('slow_dsm-shm-2', 'slow shm 2'), ('slow_dsm-tcp-2', 'slow tcp 2')]
    L.append('| kernel | ' + ' | '.join(c[1] for c in cols) + ' |')
    L.append('|---|' + '---|' * len(cols))
    for kc, e in summ.items():
        L.append('| %s | ' % kc + ' | '.join(fmt(e['ratios'].get(c[0]), 2) for c in cols) + ' |')
    L.append('')
    # Himeno MFLOPS.
    hm = [(kc, e) for kc, e in summ.items() if e['kernel'] == 'himeno']
    if hm:
        L.append('Himeno MFLOPS (medians): ' + '; '.join(
            '%s: ' % kc + ', '.join('%s %s' % (SHORT[c], fmt(e['configs'][c].get('mflops'), 0))
                                    for c in cfgs if c in e['configs'] and e['configs'][c].get('mflops'))
            for kc, e in hm) + '.')
        L.append('')
    # Goals.
    L.append('Goals (2 nodes of this 2-core machine, shm):')
    L.append('')
    n_one = max([e['ratios'].get('one_node_vs_gcc1_alt_n', 0) for e in doc['summary'].values()] or [0])
    if n_one:
        L.append('The 1-node goals use %d extra runs per kernel of gcc 1 thread, clang 1 thread and '
                 'ompdsm 1 node, one after the other (the median of the %d paired ratios); the '
                 'ratio table above has the matrix\'s own, whose runs of one repetition are '
                 'further apart in time.' % (n_one, n_one))
        L.append('')
    L.append('| goal | measured | status |')
    L.append('|---|---|---|')
    for g in doc['goals']:
        v = g.get('value')
        extra = ''
        if g.get('vs_clang') is not None:
            extra = ' (vs clang 1t: %.3f, %s)' % (g['vs_clang'], g['status_vs_clang'])
        fails = ' (%d failed runs)' % g['failed_runs'] if g.get('failed_runs') else ''
        L.append('| %s | %s%s | **%s**%s |' % (g['goal'], fmt(v), extra, g['status'], fails))
    L.append('')
    # Statistics.
    L.append('DSM statistics of the 2-node runs (the median run of each cell; whole job, '
             'so set-up, warm-up and verification are included; totals over both nodes, '
             'times: the larger node\'s):')
    L.append('')
    L.append('| kernel | run | faults | fetched MB | twins | diffs | diff MB | notices | '
             'invalidations | barriers | fault ms | barrier ms | wait ms |')
    L.append('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
    for kc, e in summ.items():
        for c in ('dsm-shm-2', 'dsm-tcp-2', 'dsm-shm-2/slow', 'dsm-tcp-2/slow'):
            s = e['configs'].get(c)
            sl = stat_line(s.get('stats'), None) if s else None
            if not sl:
                continue
            L.append('| %s | %s | %d | %.1f | %d | %d | %.2f | %d | %d | %d | %.1f | %.1f | %.1f |' % (
                kc, c.replace('dsm-', '').replace('-2', ' 2'), sl['faults'], sl['fetched_MB'],
                sl['twins'], sl['diffs'], sl['diff_MB'], sl['notices'], sl['invalidations'],
                sl['barriers'], sl['fault_ms_max'], sl['barrier_ms_max'], sl['wait_ms_max']))
    L.append('')
    # Per iteration: what the shm and tcp times are made of.
    if doc.get('per_iteration'):
        L.extend(model.per_iteration_markdown(doc['per_iteration']))
    md = doc.get('model')
    if md:
        L.extend(model.markdown(md))
    # Failures.
    fails = [r for r in doc['runs'] if r['status'] not in ('ok',) and not r['status'].startswith('SKIPPED')]
    L.append('')
    if fails:
        L.append('**Failed runs (%d)**, not included in any median:' % len(fails))
        L.append('')
        for r in fails:
            L.append('- **%s**: %s (log: `%s`)' % (r['name'], r['status'], r.get('log', '')))
    else:
        L.append('Every run verified (`Verification = SUCCESSFUL`%s).' %
                 (', Himeno GOSA equal to cc -fopenmp 1 thread to 6 significant digits'
                  if any(e['kernel'] == 'himeno' for e in summ.values()) else ''))
    L.append('')
    # Noise.
    n = doc['noise']
    L.append('Noise: load average (1 min) %.2f before the run, %.2f after; per run %.2f to %.2f '
             '(median %.2f). Spread (max-min)/median over the repetitions of a cell: median %s, '
             'largest %s (%s).' % (
                 doc['load_before'][0], doc['load_after'][0], n['load_min'], n['load_max'],
                 n['load_median'], fmt(n.get('spread_median'), 2), fmt(n.get('spread_max'), 2),
                 n.get('spread_max_cell', '-')))
    L.append('Other jobs\' CPU use just before each run (share of both CPUs, /proc/stat over '
             '0.3 s, after waiting up to %g s for it to fall below 10%%): median %.0f%%, largest '
             '%.0f%%; %d of %d runs started with more than 10%% (%.0f s spent waiting).' % (
                 doc.get('wait_idle', 0), 100 * n.get('busy_median', 0), 100 * n.get('busy_max', 0), n.get('busy_runs', 0),
                 n.get('runs', 0), n.get('waited_s', 0)))
    return '\n'.join(L) + '\n'


def noise_summary(runs, summ):
    loads = [r['load_before'] for r in runs if 'load_before' in r]
    spreads = []
    for kc, e in summ.items():
        for c, s in e['configs'].items():
            if s.get('spread') is not None:
                spreads.append((s['spread'], '%s %s' % (kc, c)))
    busy = [r['busy_before'] for r in runs if 'busy_before' in r]
    n = {'load_min': min(loads) if loads else 0, 'load_max': max(loads) if loads else 0,
         'load_median': median(loads) or 0,
         'busy_median': median(busy) or 0, 'busy_max': max(busy) if busy else 0,
         'busy_runs': sum(1 for b in busy if b > 0.10), 'runs': len(busy),
         'waited_s': sum(r.get('waited', 0) for r in runs)}
    if spreads:
        spreads.sort()
        n['spread_median'] = median([s for s, _ in spreads])
        n['spread_max'] = spreads[-1][0]
        n['spread_max_cell'] = spreads[-1][1]
    return n


def write_csv(path, runs):
    keys = ['kernel', 'class', 'config', 'slowed', 'rep', 'status', 'time', 'mflops', 'mops',
            'gosa', 'verification', 'exit', 'wall', 'cpu', 'busy_before', 'waited',
            'load_before', 'load_after', 'throttled_ms',
            'slow_note', 'tag', 'log', 'stats_file']
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(keys + ['stat_' + k for k in STAT_KEYS] + ['stat_node1_' + k for k in STAT_KEYS])
        for r in runs:
            row = [r.get(k, '') for k in keys]
            st = r.get('stats')
            row += [st['total'][k] if st else '' for k in STAT_KEYS]
            row += [st['per_node'][1][k] if st and len(st['per_node']) > 1 else '' for k in STAT_KEYS]
            w.writerow(row)


def update_docs(doc, md_text):
    path = os.path.join(SRC, 'docs', 'performance.md')
    with open(path) as f:
        text = f.read()
    begin, end = '<!-- kernels:begin -->', '<!-- kernels:end -->'
    mach = doc['machine']
    sec = []
    sec.append('## Kernels')
    sec.append('')
    sec.append('NPB-specification EP, CG, IS, MG and the Himeno-style kernel '
               '(`bench/kernels/`), each built by `ompcc` and by `cc -fopenmp`, run by '
               '`bench/harness/run.py` (the matrix, medians, ratios, DSM statistics, '
               'plots; the model in [model.md](model.md)). Generated by the harness '
               '(`--update-docs`); edit the harness, not this section.')
    sec.append('')
    sec.append('**Reproduce** (from the source tree):')
    sec.append('')
    sec.append('    meson setup build && ninja -C build')
    sec.append('    ' + doc['command'])
    sec.append('')
    sec.append('Results, logs, each run\'s statistics and the plots go to `%s` '
               '(not committed).' % doc['out_rel'])
    sec.append('')
    sec.append('**Machine**: %d CPUs (`nproc`), %s, %s GiB, %s, Linux %s, %s; %s. '
               'Load average (1 min) %.2f before the run and %.2f after. Source %s, %s.'
               % (mach['nproc'], mach['cpu_model'], mach['memory_gib'],
                  mach['virtualization'] or 'bare metal', mach['kernel'], mach['os'],
                  mach['cc'], doc['load_before'][0], doc['load_after'][0], doc['source'],
                  doc['date']))
    sec.append('')
    sec.append('**How it runs**: native builds get `OMP_NUM_THREADS` and%s; `ompdsmrun` binds node '
               'k to CPU k. The slowed runs take half of CPU 1 from node 1 (native: from '
               'thread 1, bound to CPU 1): %s. Page size %s, protocol %s. Kernels: %s '
               '(Himeno: %d iterations).%s'
               % (' `OMP_PROC_BIND=true OMP_PLACES=cores`' if doc['native_bind'] else ' no binding',
                  doc['slow_method'], doc['page_size'], doc['protocol'],
                  ', '.join(doc['kernels']), doc['himeno_iters'],
                  ''.join(' Note: %s.' % n for n in doc['notes'])))
    sec.append('')
    sec.append(md_text.rstrip())
    sec.append('')
    sec.append('Plots (in the output directory): `times.png` (median time per kernel and '
               'configuration, homogeneous and slowed), `speedups.png` (2-node speedups and '
               'ratios against the goals), `model.png` (predicted time and speedup for 1 to '
               '256 nodes on InfiniBand beside the measured 1- and 2-node points).')
    new = begin + '\n' + '\n'.join(sec) + '\n' + end
    if begin in text and end in text:
        a = text.index(begin)
        b = text.index(end) + len(end)
        text = text[:a] + new + text[b:]
    else:
        text = text.rstrip('\n') + '\n\n' + new + '\n'
    with open(path, 'w') as f:
        f.write(text)
    return path


# ---------------------------------------------------------------------------
def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', required=True, help='meson build directory (has ompcc, ompdsmrun)')
    ap.add_argument('--quick', action='store_true',
                    help='smoke run: S classes (Himeno XS), 1 repetition')
    ap.add_argument('--reps', type=int, default=None, help='repetitions per cell (default 3, quick 1)')
    ap.add_argument('--out', default=None, help='output directory (default bench/results)')
    ap.add_argument('--kernels', nargs='+', default=None,
                    help='kernels as name.class (ep.W himeno.S) or name (its default class); '
                         'default %s' % ' '.join(DEFAULT_KERNELS))
    ap.add_argument('--configs', nargs='+', default=None,
                    help='configurations (default %s; also: dsm-hybrid-1x2)' % ' '.join(DEFAULT_CONFIGS))
    ap.add_argument('--no-slow', action='store_true', help='homogeneous runs only')
    ap.add_argument('--slow-method', choices=['auto', 'cgroup', 'hog', 'duty'], default='auto',
                    help='how node 1 is slowed (slownode.py): duty is closest to a slower CPU')
    ap.add_argument('--duty-period', type=int, default=400,
                    help='with --slow-method duty: the duty cycle\'s period in us (default 400)')
    # Half a CPU, as DESIGN.md's 50000 of 100000, but with a 10 ms period:
    # with 100 ms a kernel's 50 ms of set-up can use up a period's quota
    # unthrottled, timed sections shorter than 50 ms are not slowed at all,
    # and node 1 stops for 50 ms at a time (a stall, not a slower node).
    ap.add_argument('--slow-quota', type=int, default=5000, help='cpu.cfs_quota_us (default 5000)')
    ap.add_argument('--slow-period', type=int, default=10000, help='cpu.cfs_period_us (default 10000)')
    ap.add_argument('--himeno-iters', type=int, default=None,
                    help='Himeno iterations (default %d, quick 100)' % HIMENO_ITERS)
    ap.add_argument('--no-native-bind', dest='native_bind', action='store_false',
                    help='do not bind native threads (OMP_PROC_BIND); the slowed native '
                         'runs then need --slow-method hog')
    ap.add_argument('--one-node-reps', type=int, default=None,
                    help='extra runs per kernel of gcc 1 thread, clang 1 thread and ompdsm 1 '
                         'node, alternating, for the 1-node goals (default 5, quick 0)')
    ap.add_argument('--no-model', action='store_true', help='skip the calibration runs and the model')
    ap.add_argument('--wait-idle', type=float, default=None,
                    help='before each run wait up to this many seconds for the CPUs to be '
                         'at least 90%% idle (other jobs); the busy share is recorded per run '
                         '(default 20, quick 0)')
    ap.add_argument('--wait-budget', type=float, default=900.0,
                    help='total seconds the whole run may spend waiting for idle CPUs '
                         '(default 900); after that runs start regardless, and say so')
    ap.add_argument('--timeout', type=int, default=300, help='per-run limit in seconds')
    ap.add_argument('--render-only', action='store_true',
                    help='run nothing: redo results.md, the plots and (with --update-docs) '
                         'the docs section from --out\'s results.json')
    ap.add_argument('--update-docs', action='store_true',
                    help='rewrite the kernels section of docs/performance.md')
    a = ap.parse_args(argv)
    if a.reps is None:
        a.reps = 1 if a.quick else 3
    if a.one_node_reps is None:
        a.one_node_reps = 0 if a.quick else 5
    if a.one_node_reps < 0:
        ap.error('--one-node-reps must be at least 0')
    if a.wait_idle is None:
        a.wait_idle = 0.0 if a.quick else 20.0
    if a.himeno_iters is None:
        a.himeno_iters = 100 if a.quick else HIMENO_ITERS
    if a.out is None:
        a.out = os.path.join(SRC, 'bench', 'results')
    a.out = os.path.abspath(a.out)
    ks = a.kernels or (QUICK_KERNELS if a.quick else DEFAULT_KERNELS)
    full = []
    for k in ks:
        if '.' not in k:
            d = [x for x in (QUICK_KERNELS if a.quick else DEFAULT_KERNELS) if x.startswith(k + '.')]
            k = d[0] if d else k + '.S'
        name, cls = k.split('.', 1)
        if name not in KERNELS or cls not in KERNELS[name]['classes']:
            ap.error('unknown kernel %s (known: %s)' % (k, ', '.join(
                '%s.{%s}' % (n, ','.join(v['classes'])) for n, v in KERNELS.items())))
        full.append(k)
    a.kernels = full
    a.configs = a.configs or DEFAULT_CONFIGS
    for c in a.configs:
        if c not in CONF:
            ap.error('unknown configuration %s (known: %s)' % (c, ', '.join(CONF)))
    if a.reps < 1:
        ap.error('--reps must be at least 1')
    return a


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.render_only:
        with open(os.path.join(args.out, 'results.json')) as f:
            doc = json.load(f)
        doc['machine']['virtualization'] = machine_info()['virtualization']
        print(render(doc, args, lambda m: print(m, flush=True)))
        return 0
    os.makedirs(args.out, exist_ok=True)
    logpath = os.path.join(args.out, 'harness.log')
    logfile = open(logpath, 'w')

    def log(msg):
        print(msg, flush=True)
        logfile.write(msg + '\n')
        logfile.flush()

    t_start = time.time()
    command = '/usr/bin/python3 bench/harness/run.py ' + ' '.join(
        shlex.quote(os.path.relpath(x, SRC)) if x == args.build and os.path.isabs(x)
        and x.startswith(SRC) else shlex.quote(x) for x in argv)
    load0 = loadavg()
    source = git_describe()  # now: the tree may move while the matrix runs
    log('ompdsm kernel benchmarks: %s' % command)
    log('load average before: %s' % ' '.join('%.2f' % x for x in load0))
    bins = Binaries(args.build, args.out, log)
    slow = slownode.SlowNode(args.slow_method, args.slow_quota, args.slow_period,
                             build=args.build, duty_period_us=args.duty_period)
    # A SIGTERM (or Ctrl-C) still removes the cgroup and stops a hog.
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    try:
        return run_all(args, log, t_start, command, load0, source, bins, slow)
    finally:
        slow.teardown()


def render(doc, args, log):
    """results.md, results.json, the plots and the docs section from doc."""
    md_text = markdown(doc)
    with open(os.path.join(args.out, 'results.md'), 'w') as f:
        f.write('# ompdsm kernel benchmarks\n\n`%s` (%s, %s)\n\n' % (doc['command'], doc['date'],
                                                                      doc['source']))
        f.write(md_text)
    with open(os.path.join(args.out, 'results.json'), 'w') as f:
        json.dump(doc, f, indent=1, default=str)
    try:
        import plots
        made = plots.make_all(doc, args.out)
        log('plots: ' + ', '.join(made))
    except ImportError as e:
        log('plots skipped (%s): run with /usr/bin/python3 (Debian\'s, with python3-matplotlib)' % e)
    if args.update_docs:
        p = update_docs(doc, md_text)
        log('updated ' + os.path.relpath(p, SRC))
    return md_text


def run_all(args, log, t_start, command, load0, source, bins, slow):
    """Everything after the arguments: executables, the runs, the outputs.
    Returns the exit status (1 if any run failed)."""
    if not args.no_slow:
        setup_slow(args, slow, log)
    runner = Runner(args, bins, slow, log)
    variants = prepare_binaries(args, bins, log)
    costs = {}
    if not args.no_model:
        log('per-operation costs (bench/comm, bench/dsm):')
        costs = comm_costs(bins, log)
    runs = run_matrix(args, runner, log)
    runs += run_one_node(args, runner, log)
    calib = run_calibration(args, runner, variants, log)
    runs += list(calib.values())
    check_gosa(runs)
    load1 = loadavg()
    log('load average after: %s' % ' '.join('%.2f' % x for x in load1))
    if not args.no_slow:
        slow.teardown()
    doc = build_doc(args, runs, calib, costs, bins, slow, log,
                    command=command, t_start=t_start, source=source, load0=load0, load1=load1)
    write_outputs(doc, args, log, t_start)
    nfail = sum(1 for r in runs if r['status'] != 'ok' and not r['status'].startswith('SKIPPED'))
    return 1 if nfail else 0


def setup_slow(args, slow, log):
    slow.setup()
    log('slow node: ' + slow.describe())
    if slow.method == 'cgroup' and not args.native_bind:
        log('  (native slowed runs need bound threads: --no-native-bind leaves them unslowed)')


def prepare_binaries(args, bins, log):
    """Builds (or finds) every executable before the first run, so that
    compiles do not land between runs.  Returns the model's calibration
    variants, kernel.class -> (executable, extra iterations)."""
    log('executables:')
    for kc in args.kernels:
        k, c = kc.split('.')
        for cfg in args.configs:
            conf = CONF[cfg]
            if conf.kind == 'ompdsm':
                p = bins.ompdsm(k, c)
            else:
                p = bins.native(k, c, conf.what)
            if p is None and conf.kind == 'native' and conf.what == 'clang':
                continue
            if p is None:
                log('  %s: no executable for %s' % (kc, cfg))
    variants = {}
    if not args.no_model and ('dsm-shm-2' in args.configs or 'dsm-tcp-2' in args.configs):
        for kc in args.kernels:
            k, c = kc.split('.')
            variants[kc] = bins.variant(k, c)
    for n in bins.notes:
        log('note: ' + n)
    return variants


def run_matrix(args, runner, log):
    """The matrix, repetitions interleaved; the two-wide configurations
    also with node 1 slowed."""
    cells = []
    for kc in args.kernels:
        for cfg in args.configs:
            cells.append((kc, cfg, False))
        if not args.no_slow:
            for cfg in args.configs:
                if CONF[cfg].width == 2:
                    cells.append((kc, cfg, True))
    runs = []
    total = len(cells) * args.reps
    i = 0
    for rep in range(1, args.reps + 1):
        for kc, cfg, slowed in cells:
            i += 1
            k, c = kc.split('.')
            r = runner.run(k, c, cfg, slowed, rep)
            runs.append(r)
            log('[%3d/%d] %-10s %-15s %-5s rep %d: %s  %s  (others %2.0f%% busy, load %.2f)' % (
                i, total, kc, cfg, 'slow' if slowed else 'homo', rep,
                fmt(r.get('time'), 4) + ' s' if r.get('time') is not None else '-',
                r['status'], 100 * r.get('busy_before', 0), r.get('load_before', 0)))
    return runs


def run_one_node(args, runner, log):
    """The 1-node goals ask for 5%, less than the drift of this VM's speed
    between a matrix repetition's runs of gcc-1 and dsm-1 (several runs
    apart): the three 1-node configurations alternate back to back."""
    runs = []
    one_cfgs = [c for c in ('gcc-1', 'clang-1', 'dsm-1') if c in args.configs]
    if not (args.one_node_reps and 'dsm-1' in one_cfgs and len(one_cfgs) > 1):
        return runs
    log('one node, alternating (%d each):' % args.one_node_reps)
    for kc in args.kernels:
        k, c = kc.split('.')
        for i in range(1, args.one_node_reps + 1):
            line = []
            for cfg in one_cfgs:
                r = runner.run(k, c, cfg, False, i, tag='_one')
                r['tag'] = 'one-node'
                runs.append(r)
                line.append('%s %s%s' % (cfg, fmt(r.get('time'), 4),
                                         '' if r['status'] == 'ok' else ' ' + r['status']))
            log('  %s %d: %s' % (kc, i, ', '.join(line)))
    return runs


def run_calibration(args, runner, variants, log):
    """Each 2-node configuration once more with twice the timed iterations;
    the difference from the normal runs is the statistics of the
    iterations alone (the model's inputs, and the per-iteration
    explanation of the shm and tcp times).  Returns
    (kernel.class, config) -> run, in the order run."""
    calib = {}
    calib_cfgs = [c for c in ('dsm-shm-2', 'dsm-tcp-2') if c in args.configs]
    if args.no_model or not calib_cfgs:
        return calib
    log('calibration (2 nodes, twice the iterations):')
    for kc in args.kernels:
        k, c = kc.split('.')
        for cfg in calib_cfgs:
            if k == 'himeno':
                extra = args.himeno_iters
                args.himeno_iters = 2 * extra
                r = runner.run(k, c, cfg, False, 1, tag='_calib')
                args.himeno_iters = extra
            else:
                exe, extra = variants.get(kc, (None, None))
                if not exe:
                    continue
                r = runner.run(k, c, cfg, False, 1, exe=exe, tag='_calib')
            r['tag'] = 'calibration'
            r['extra_iters'] = extra
            calib[(kc, cfg)] = r
            log('  %s %s: +%d iterations: %s %s' % (kc, cfg, extra, fmt(r.get('time'), 4),
                                                   r['status']))
    return calib


def build_doc(args, runs, calib, costs, bins, slow, log, *, command, t_start, source,
              load0, load1):
    """results.json's document: the runs, their summary, goals, noise and
    the model."""
    summ = summarize(runs, args.kernels, args.configs)
    goals = evaluate_goals(summ)
    doc = {
        'command': command,
        'date': datetime.datetime.now().strftime('%Y-%m-%d %H:%M'),
        'duration_s': round(time.time() - t_start, 1),
        'source': source,
        'machine': machine_info(),
        'compilers': {'cc': machine_info()['cc'], 'clang': bins.versions['clang']},
        'load_before': load0,
        'load_after': load1,
        'reps': args.reps,
        'kernels': args.kernels,
        'configs': args.configs,
        'config_labels': {c: CONF[c].label for c in args.configs},
        'himeno_iters': args.himeno_iters,
        'wait_idle': args.wait_idle,
        'native_bind': args.native_bind,
        'slow_method': slow.describe() if not args.no_slow else 'none (--no-slow)',
        'slow_method_short': slow.method if not args.no_slow else 'none',
        'page_size': os.environ.get('OMPDSM_PAGE_SIZE', '64K (default)'),
        'protocol': os.environ.get('OMPDSM_PROTOCOL', 'invalidate (default)'),
        'notes': bins.notes,
        'out_rel': os.path.relpath(args.out, SRC) if args.out.startswith(SRC) else args.out,
        'costs': costs,
        'runs': runs,
        'summary': summ,
        'goals': goals,
    }
    doc['noise'] = noise_summary(runs, summ)
    if not args.no_model:
        try:
            doc['model'] = model.build(doc, calib, KERNELS, args)
            doc['per_iteration'] = model.per_iteration_table(doc, calib, KERNELS)
        except Exception as e:  # the model must not cost the measurements
            log('model failed: %r' % e)
            doc['model_error'] = repr(e)
    return doc


def write_outputs(doc, args, log, t_start):
    """results.csv, then results.md/.json, the plots and the docs section."""
    write_csv(os.path.join(args.out, 'results.csv'), doc['runs'])
    md_text = render(doc, args, log)
    log('')
    log(md_text)
    log('results in %s (%.0f s)' % (args.out, time.time() - t_start))


if __name__ == '__main__':
    sys.exit(main())
