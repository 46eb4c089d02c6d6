#!/usr/bin/python3
"""ompdsm-tune - picks schedule(profiled, chunk_size, eval_size, eval_skip)
arguments for a program's profiled loops by running it.

    ompdsm-tune [-np N] [-H HOSTS | --hostfile FILE] [other ompdsmrun
                options] [--reps R] [--settings "c,s,k;..."] [--png FILE]
                [--runtime] [--ompdsmrun PATH] [--timeout S] -- PROGRAM [ARGS...]

ompdsmrun's job options (-np, -n, --np, -H, --host, --hostfile,
--machinefile, --map-by, -npernode, --oversubscribe, -x, --bind-to,
--threads-per-node, --tag-output; docs/ompdsmrun.md) are passed to every
run as given, so a program is tuned on the hosts it will run on; without
-np and hosts it runs on 2 nodes of this host.

It runs PROGRAM under ompdsmrun once to find the loops that run
schedule(profiled) (the OMPDSM_STATS JSON lists them), then R times with
every such loop static (the baseline) and R times per setting, each loop
given the setting through OMPDSM_PROFILED (no rebuild).  A loop's time in
a run is the sum over its executions of the slowest node's time (from the
statistics).  For each loop it prints the median time per setting and the
clause to write:

    cg.c:512: schedule(profiled, 0, 2, 1)  1.31x over static

--png draws each loop's per-node time per execution for static and for the
best setting (matplotlib).  --runtime also tunes schedule(runtime) loops,
running them as profiled (OMP_SCHEDULE=profiled).  Exit status: 0, or 1
with one line saying what went wrong (the program failed, no profiled loop
ran, no statistics).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

DEFAULT_SETTINGS = '0,1,0;0,2,1;0,4,2;8,2,1'


def die(msg):
    print('ompdsm-tune: ' + msg, file=sys.stderr)
    sys.exit(1)


def parse_settings(s):
    out = []
    for part in s.split(';'):
        part = part.strip()
        if not part:
            continue
        try:
            v = tuple(int(x) for x in part.split(','))
        except ValueError:
            v = ()
        if len(v) != 3 or min(v) < 0:
            die("--settings: '%s' is not chunk,eval_size,eval_skip "
                "(three non-negative integers, e.g. 0,2,1)" % part)
        out.append(v)
    if not out:
        die('--settings: no setting given')
    return out


def find_ompdsmrun(given):
    if given:
        return given
    here = os.path.dirname(os.path.abspath(__file__))
    p = os.path.join(here, 'ompdsmrun')
    if os.access(p, os.X_OK):
        return p
    return shutil.which('ompdsmrun') or die(
        'ompdsmrun not found beside ompdsm-tune or on PATH: give --ompdsmrun')


# ompdsmrun's options for the job, passed through to every run: the names
# of each, and whether it takes a value (docs/ompdsmrun.md).
LAUNCHER_OPTIONS = [
    (('-np', '-n', '--np'), 'np', True, 'number of nodes (default 2 without '
     'hosts; with hosts, every slot)'),
    (('-H', '--host'), 'host', True, 'hosts: host1,host2:K,...'),
    (('--hostfile', '--machinefile'), 'hostfile', True, 'hosts, one a line'),
    (('--map-by',), 'map_by', True, 'slot or node'),
    (('-npernode', '--npernode'), 'npernode', True,
     'at most K nodes on each host'),
    (('--oversubscribe',), 'oversubscribe', False,
     'allow more nodes than slots'),
    (('-x',), 'x', True, 'VAR or VAR=VALUE for every node (repeatable)'),
    (('--bind-to',), 'bind_to', True, 'core or none'),
    (('--threads-per-node',), 'threads_per_node', True,
     'OpenMP threads in each node'),
    (('--tag-output',), 'tag_output', False,
     'prefix output lines with the node'),
]


def launcher_args(a):
    """The job options given, in ompdsmrun's words; -np 2 by default on
    this host."""
    out = []
    for names, dest, takes, _ in LAUNCHER_OPTIONS:
        v = getattr(a, 'launch_' + dest)
        if v is None or v is False:
            continue
        for x in (v if isinstance(v, list) else [v]):
            out += [names[0], str(x)] if takes else [names[0]]
    if a.launch_np is None and a.launch_host is None and \
            a.launch_hostfile is None:
        out = ['-np', '2'] + out
    return out


class Runner:
    def __init__(self, a, tmp):
        self.a = a
        self.tmp = tmp
        self.count = 0

    def run(self, overrides, what):
        """One run; returns the statistics' profiled_loops keyed by file:line."""
        self.count += 1
        stats = os.path.join(self.tmp, 'run%d.json' % self.count)
        env = dict(os.environ)
        env['OMPDSM_STATS'] = stats
        env.pop('OMPDSM_PROFILED', None)
        if overrides:
            env['OMPDSM_PROFILED'] = overrides
        if self.a.runtime:
            env['OMP_SCHEDULE'] = 'profiled'
        cmd = [self.a.ompdsmrun, '--timeout', str(self.a.timeout)] + \
            launcher_args(self.a) + self.a.program
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            tail = '\n'.join(r.stdout.splitlines()[-5:])
            die('%s failed (%s, exit status %d):\n%s' % (
                ' '.join(self.a.program), what, r.returncode, tail))
        try:
            with open(stats) as f:
                j = json.load(f)
        except (OSError, ValueError) as e:
            die('no statistics from %s (%s): %s' % (' '.join(self.a.program), what, e))
        loops = {}
        for l in j.get('profiled_loops', []):
            loops['%s:%d' % (os.path.basename(l['file']), l['line'])] = l
        return loops


def nodes_of(loops):
    """How many nodes ran the loops (each has one time list per node)."""
    return max((len(l['times_ns']) for l in loops.values()), default=0)


def loop_time(l):
    """Sum over executions of the slowest node's time, in seconds."""
    t = l['times_ns']
    n = min(len(x) for x in t) if t else 0
    return sum(max(x[e] for x in t) for e in range(n)) / 1e9


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog='ompdsm-tune', description=__doc__.split('\n\n')[0],
        usage='ompdsm-tune [options] -- PROGRAM [ARGS...]', allow_abbrev=False)
    job = ap.add_argument_group('job options, passed to ompdsmrun')
    for names, dest, takes, what in LAUNCHER_OPTIONS:
        dest = 'launch_' + dest
        if not takes:
            job.add_argument(*names, dest=dest, action='store_true', help=what)
        elif names == ('-x',):
            job.add_argument(*names, dest=dest, action='append',
                             metavar='VAR[=VALUE]', help=what)
        else:
            job.add_argument(*names, dest=dest, metavar=dest[7:].upper(),
                             help=what)
    ap.add_argument('--reps', type=int, default=3,
                    help='runs per setting; medians (default 3)')
    ap.add_argument('--settings', default=DEFAULT_SETTINGS,
                    help='chunk,eval_size,eval_skip;... (default %s)' % DEFAULT_SETTINGS)
    ap.add_argument('--png', help='plot of per-node times per execution')
    ap.add_argument('--runtime', action='store_true',
                    help='tune schedule(runtime) loops too (OMP_SCHEDULE=profiled)')
    ap.add_argument('--ompdsmrun', help='launcher (default: beside ompdsm-tune, or PATH)')
    ap.add_argument('--timeout', type=int, default=600, help='seconds per run (default 600)')
    ap.add_argument('program', nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    if a.program and a.program[0] == '--':
        a.program = a.program[1:]
    if not a.program:
        die('no program given: ompdsm-tune [options] -- PROGRAM [ARGS...]')
    if a.reps < 1:
        die('--reps must be at least 1')
    settings = parse_settings(a.settings)
    a.ompdsmrun = find_ompdsmrun(a.ompdsmrun)

    with tempfile.TemporaryDirectory(prefix='ompdsm-tune.') as tmp:
        R = Runner(a, tmp)
        found = R.run(None, 'finding the profiled loops')
        if not found:
            die('no profiled loop ran in %s (ompdsmrun %s): give loops '
                'schedule(profiled) (or schedule(runtime) and --runtime), and '
                'run on 2 or more nodes' % (a.program[0],
                                            ' '.join(launcher_args(a))))
        sites = sorted(found)
        nodes = nodes_of(found)

        def over(kind):
            return ';'.join('%s=%s' % (s, kind) for s in sites)

        times = {s: {} for s in sites}   # site -> setting -> [seconds]
        runs = {s: {} for s in sites}    # site -> setting -> last loop record
        cands = [('static', over('static'))] + [
            ('%d,%d,%d' % v, over('%d,%d,%d' % v)) for v in settings]
        for rep in range(a.reps):
            for name, ov in cands:
                loops = R.run(ov, 'setting ' + name)
                for s in sites:
                    if s in loops:
                        times[s].setdefault(name, []).append(loop_time(loops[s]))
                        runs[s][name] = loops[s]
        best_of = {}
        for s in sites:
            med = {k: statistics.median(v) for k, v in times[s].items()}
            base = med.get('static')
            print('%s (%d nodes, %d runs per setting; loop time = sum over '
                  'executions of the slowest node):' % (s, nodes, a.reps))
            print('  %-16s %12s %10s' % ('setting', 'time (s)', 'vs static'))
            for name, _ in cands:
                if name in med:
                    print('  %-16s %12.6f %9.2fx' % (
                        'static' if name == 'static' else 'profiled,' + name,
                        med[name], base / med[name] if base and med[name] else 0))
            prof = [(med[n], n) for n, _ in cands[1:] if n in med]
            if not prof:
                print('%s: no timing for a profiled setting' % s)
                continue
            t, best = min(prof)
            best_of[s] = best
            c, z, k = best.split(',')
            ratio = base / t if base and t else 0
            print('%s: schedule(profiled, %s, %s, %s)  %.2fx over static' % (
                s, c, z, k, ratio))
        if a.png:
            try:
                plot(a.png, sites, runs, best_of)
                print('wrote %s' % a.png)
            except ImportError:
                die('--png needs matplotlib (python3-matplotlib)')
    return 0


def plot(path, sites, runs, best_of):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    sites = [s for s in sites if s in best_of and 'static' in runs[s]]
    if not sites:
        raise SystemExit('ompdsm-tune: nothing to plot')
    fig, axes = plt.subplots(len(sites), 2, figsize=(10, 3.2 * len(sites)),
                             squeeze=False)
    for row, s in zip(axes, sites):
        for ax, (name, title) in zip(row, [('static', 'static (before)'),
                                           (best_of[s], 'profiled,%s (after)' % best_of[s])]):
            l = runs[s][name]
            for node, ts in enumerate(l['times_ns']):
                ax.plot(range(1, len(ts) + 1), [x / 1e6 for x in ts],
                        marker='o', ms=3, label='node %d' % node)
            ax.set_title('%s: %s' % (s, title), fontsize=9)
            ax.set_xlabel('execution')
            ax.set_ylabel('time (ms)')
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == '__main__':
    sys.exit(main())
