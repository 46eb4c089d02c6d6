"""bench/harness/matrix/runs.py - the matrix's executables and runs: finds
or builds each kernel for each configuration (Binaries), runs one cell of
one repetition and records its time, verification and DSM statistics
(Runner), and measures the transports' per-operation costs for the model
(comm_costs)."""
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import time

from matrix.config import CONF, HERE, KERNELS, SRC, STAT_KEYS
from matrix.machine import loadavg, sh, wait_quiet


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
    """The OMPDSM_STATS JSON file, as parse_stats reads it."""
    with open(path) as f:
        return parse_stats(f.read())


def parse_stats(text):
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
    j = json.loads(text, object_pairs_hook=pairs)
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
