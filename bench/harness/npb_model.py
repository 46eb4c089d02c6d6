#!/usr/bin/python3
"""bench/harness/npb_model.py - the SNU NPB 3.3 OpenMP C kernels CG, MG, FT
and IS, built by ompcc from the user's own copy (third-party: never in this
repository), measured on 1 and 2 nodes over shm and fed into model.py's
prediction for 2 to 64 nodes of a 100 Gb/s InfiniBand cluster
(docs/model.md, "NPB class A").

    /usr/bin/python3 bench/harness/npb_model.py NPB_BIN_DIR --build DIR
        [--class A] [--programs cg,mg,ft,is] [--out DIR]
    /usr/bin/python3 bench/harness/npb_model.py --from-json DIR/npb_model.json

NPB_BIN_DIR holds cg.A.x, mg.A.x, ... as NPB's make puts them in bin/.
Each program runs once on 1 node and once on 2 nodes over shm with
OMPDSM_STATS (the build's launcher and, through LD_LIBRARY_PATH, its
runtime); its own "Time in seconds" and "Iterations" are parsed from its
output.  The binaries cannot be rebuilt with doubled iterations as
run.py's kernels are, so the model's per-iteration counts are the whole
job's divided by the timed iterations (model.py's "approx." rows:
set-up, warm-up and verification included).  Writes npb_model.json (the
runs, their statistics and this machine's costs) and npb_model.md to
--out and prints the tables: the counts per node per barrier interval,
model.py's inputs and predictions, where the 64-node time goes, and the
prediction again with c_fault from the start-up probe; --from-json
recomputes them from a saved npb_model.json.
"""
import argparse
import copy
import json
import os
import re
import subprocess
import sys
import types

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import model  # noqa: E402
from matrix.machine import git_describe, loadavg  # noqa: E402
from matrix.runs import comm_costs, parse_stats  # noqa: E402

PROGRAMS = ['cg', 'mg', 'ft', 'is']
PRED_NODES = [2, 4, 8, 16, 32, 64]

NPB_RE = {
    'time': re.compile(r'^\s*Time in seconds\s*=\s*([-+0-9.eE]+)', re.M),
    'iterations': re.compile(r'^\s*Iterations\s*=\s*(\d+)', re.M),
    'class': re.compile(r'^\s*Class\s*=\s*(\w+)', re.M),
    'verification': re.compile(r'^\s*Verification\s*=\s*(\w+)', re.M),
}


def parse_npb(text):
    """An NPB program's report: time (s), iterations, class and
    verification, each None when the line is missing (a failed run)."""
    r = {}
    for k, rx in NPB_RE.items():
        m = rx.findall(text)
        v = m[-1] if m else None
        r[k] = float(v) if k == 'time' and v else int(v) if k == 'iterations' and v else v
    return r


def interval_counts(raw):
    """Per node, from OMPDSM_STATS's JSON: the barrier intervals (barriers
    and forks, as the runtime's own "per barrier interval" lines count
    them) and per interval the faults, protection changes, sleeps (a
    wake-up each), pages fetched, diffs, diff bytes and bytes fetched."""
    out = []
    for n in raw['per_node']:
        iv = n['dsm_barriers'] + n['dsm_forks']
        per = float(iv) if iv else 1.0
        out.append({
            'intervals': iv,
            'faults': (n['dsm_read_faults'] + n['dsm_write_faults']) / per,
            'protects': n['dsm_protects'] / per,
            'sleeps': n['comm_sleeps'] / per,
            'fetched': n['dsm_pages_fetched'] / per,
            'diffs': n['dsm_diffs'] / per,
            'diff_bytes': n['dsm_diff_bytes'] / per,
            'get_bytes': n['comm_get_bytes'] / per,
        })
    return out


def run_one(ompdsmrun, runtime_dir, exe, nodes, stats_path, log_path):
    """One run over shm with statistics; the parsed report, its exit code."""
    env = dict(os.environ, OMPDSM_STATS=stats_path, OMPDSM_TRANSPORT='shm',
               LD_LIBRARY_PATH=runtime_dir)
    for v in ('OMP_NUM_THREADS', 'OMPDSM_THREADS_PER_NODE'):
        env.pop(v, None)
    cmd = [ompdsmrun, '--timeout', '600', '-np', str(nodes), exe]
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    with open(log_path, 'w') as f:
        f.write(r.stdout)
    return parse_npb(r.stdout), r.returncode


def measure(args, log):
    """Runs every program; the document the model is computed from."""
    build = os.path.abspath(args.build)
    ompdsmrun = os.path.join(build, 'ompdsmrun')
    if not os.access(ompdsmrun, os.X_OK):
        sys.exit('npb_model.py: %s not found: build first' % ompdsmrun)
    runtime_dir = os.path.join(build, 'runtime')
    os.makedirs(args.out, exist_ok=True)
    doc = {'class': args.cls, 'bin_dir': os.path.abspath(args.bin_dir),
           'commit': git_describe(), 'load_before': loadavg(),
           'page_size': os.environ.get('OMPDSM_PAGE_SIZE', '64K'), 'programs': {}}
    for p in args.programs:
        exe = os.path.join(args.bin_dir, '%s.%s.x' % (p, args.cls))
        if not os.access(exe, os.X_OK):
            log('%s: no %s, skipped' % (p, exe))
            continue
        e = {}
        for n in (1, 2):
            stats = os.path.join(args.out, '%s.%s.%d.json' % (p, args.cls, n))
            logf = os.path.join(args.out, '%s.%s.%d.log' % (p, args.cls, n))
            rep, rc = run_one(ompdsmrun, runtime_dir, exe, n, stats, logf)
            raw = None
            if rc == 0 and rep['verification'] == 'SUCCESSFUL' and os.path.exists(stats):
                with open(stats) as f:
                    raw = json.load(f)
            e[str(n)] = {'report': rep, 'rc': rc, 'stats': raw}
            log('%s.%s on %d node%s: %s s, %s' % (p, args.cls, n, 's' if n > 1 else '',
                                                 rep['time'], rep['verification']))
        doc['programs'][p] = e
    doc['costs'] = comm_costs(types.SimpleNamespace(build=build, ompdsmrun=ompdsmrun), log)
    doc['load_after'] = loadavg()
    return doc


def model_input(p, cls, e):
    """One program's entry of a model.build summary, or None when a run
    failed: its 1-node time, its 2-node time and statistics."""
    one, two = e.get('1', {}), e.get('2', {})
    if not one.get('report', {}).get('time') or not two.get('stats'):
        return None
    return {'kernel': p, 'class': cls, 'configs': {
        'dsm-1': {'median': one['report']['time']},
        'dsm-shm-2': {'median': two['report']['time'],
                      'stats': parse_stats(json.dumps(two['stats']))}}}


def probe_fault_costs(doc):
    """A copy of doc in which each 2-node run's fault handler time is what
    its start-up probe measured per fault (a fault, a protection change
    and a page copy) instead of the handler's own time, which on a
    shared machine holds waiting for the other node and for a CPU."""
    doc = copy.deepcopy(doc)
    for e in doc['programs'].values():
        st = e.get('2', {}).get('stats')
        if not st or not st.get('machine_costs'):
            continue
        mc = st['machine_costs']
        per = mc['fault_ns'] + mc['protect_ns'] + mc['page_copy_ns']
        for n in st['per_node']:
            n['dsm_fault_ns'] = (n['dsm_read_faults'] + n['dsm_write_faults']) * per
    return doc


def predict(doc, net=None):
    """model.build over the programs that ran, on doc's costs."""
    summary, kernels = {}, {}
    for p, e in doc['programs'].items():
        s = model_input(p, doc['class'], e)
        if s is None:
            continue
        summary['%s.%s' % (p, doc['class'])] = s
        kernels[p] = {'iters': {doc['class']: e['1']['report']['iterations']}}
    mdoc = {'summary': summary, 'costs': doc.get('costs', {}),
            'page_size': doc.get('page_size', '64K')}
    return model.build(mdoc, {}, kernels, net=net or model.NET)


def predicted_table(md):
    """Predicted seconds on PRED_NODES (speedup over the measured 1 node)."""
    L = ['| program | 1 node (measured) | ' + ' | '.join('N=%d' % n for n in PRED_NODES)
         + ' |', '|---|---|' + '---|' * len(PRED_NODES)]
    for kc, m in md['kernels'].items():
        L.append('| %s | %.2f | %s |' % (kc, m['T1'], ' | '.join(
            '%.3g (%.1fx)' % (m['pred'][str(n)], m['speedup'][str(n)]) for n in PRED_NODES)))
    return L


def breakdown_table(md, n):
    """Where the predicted time on n nodes goes: T1/n and each term of
    C(n) times the iterations (model.comm_terms), seconds."""
    net = md['network']
    lat, bw = net['latency_us'] * 1e-6, net['bandwidth_GBps'] * 1e9
    names = ['faults', 'fetches', 'diffs', 'diff_bytes', 'invalidations', 'notices', 'barriers']
    L = ['| program | compute T1/N | ' + ' | '.join(x.replace('_', ' ') for x in names) + ' |',
         '|---|---|' + '---|' * len(names)]
    for kc, m in md['kernels'].items():
        t = model.comm_terms(m, n, lat, bw, md['costs_s'], md['page_bytes'], md['fanout'])
        neff = min(n, m['nmax']) if m['nmax'] else n
        L.append('| %s | %.3f | %s |' % (kc, m['T1'] / neff, ' | '.join(
            '%.3f' % (m['iters'] * t[x]) for x in names)))
    return L


def markdown(doc, md, md_probe=None):
    cls = doc['class']
    L = ['Commit %s; load average before %s, after %s.' % (
        doc.get('commit', '?'), ' '.join('%.2f' % x for x in doc.get('load_before', [])),
        ' '.join('%.2f' % x for x in doc.get('load_after', [])))]
    costs = next((e['2']['stats'].get('machine_costs') for e in doc['programs'].values()
                  if e.get('2', {}).get('stats')), None)
    if costs:
        L.append('This machine at the 2-node runs\' start (dsm/probe.c): a fault %.1f us, '
                 'a protection change %.1f us, a 64 KiB page copy %.1f us.' % (
                     costs['fault_ns'] / 1e3, costs['protect_ns'] / 1e3,
                     costs['page_copy_ns'] / 1e3))
    L += ['', 'Measured, 1 node and 2 nodes over shm (one run each; times are the '
          'program\'s own "Time in seconds"), and per node per barrier interval of the '
          '2-node run (whole job, set-up included; node 0 / node 1):', '',
          '| program | iters | 1 node s | 2 nodes s | intervals | faults | protection changes '
          '| wake-ups | pages fetched | diffs | diff KB | fetched KB |',
          '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for p, e in doc['programs'].items():
        rep1, rep2 = e.get('1', {}).get('report', {}), e.get('2', {}).get('report', {})
        st = e.get('2', {}).get('stats')
        if not st:
            L.append('| %s.%s | - | %s | failed (%s) | | | | | | | | |' % (
                p, cls, rep1.get('time'), rep2.get('verification')))
            continue
        iv = interval_counts(st)

        def pair(k, scale=1.0, fmt='%.2f'):
            return ' / '.join(fmt % (x[k] / scale) for x in iv)
        L.append('| %s.%s | %s | %.2f | %.2f | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            p, cls, rep1.get('iterations'), rep1.get('time') or 0, rep2.get('time') or 0,
            pair('intervals', fmt='%d'), pair('faults'), pair('protects'), pair('sleeps'),
            pair('fetched'),
            pair('diffs'), pair('diff_bytes', 1e3, '%.1f'), pair('get_bytes', 1e3, '%.1f')))
    L += [''] + model.markdown(md) + ['']
    L += ['Predicted on %s, seconds (speedup over the measured 1 node):' % md['network']['name'],
          ''] + predicted_table(md)
    L += ['', 'Where the time on %d nodes goes (seconds):' % PRED_NODES[-1], '']
    L += breakdown_table(md, PRED_NODES[-1])
    if md_probe:
        L += ['', 'The same with c_fault from the start-up probe (a fault + a protection '
              'change + a page copy, + the trap) instead of the handler\'s time: %s.' % ', '.join(
                  '%s %.1f us' % (kc, m['c_fault'] * 1e6) for kc, m in md_probe['kernels'].items()),
              ''] + predicted_table(md_probe)
    return L


def main(argv=None):
    ap = argparse.ArgumentParser(description='NPB class A through the DSM model')
    ap.add_argument('bin_dir', nargs='?', help="the user's NPB bin directory (cg.A.x, ...)")
    ap.add_argument('--build', help='ompdsm build directory (ompdsmrun, runtime/)')
    ap.add_argument('--class', dest='cls', default='A')
    ap.add_argument('--programs', default=','.join(PROGRAMS))
    ap.add_argument('--out', default='npb-model', help='where runs, logs and tables go')
    ap.add_argument('--from-json', help='recompute the tables from a saved npb_model.json')
    a = ap.parse_args(argv)
    a.programs = [p for p in a.programs.split(',') if p]
    if a.from_json:
        with open(a.from_json) as f:
            doc = json.load(f)
    else:
        if not a.bin_dir or not a.build:
            ap.error('NPB_BIN_DIR and --build are needed (or --from-json)')
        doc = measure(a, lambda s: print(s, file=sys.stderr))
        with open(os.path.join(a.out, 'npb_model.json'), 'w') as f:
            json.dump(doc, f, indent=1)
    text = '\n'.join(markdown(doc, predict(doc), predict(probe_fault_costs(doc)))) + '\n'
    if not a.from_json:
        with open(os.path.join(a.out, 'npb_model.md'), 'w') as f:
            f.write(text)
    print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
