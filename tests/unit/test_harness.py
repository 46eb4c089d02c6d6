#!/usr/bin/python3
"""tests/unit/test_harness.py - the benchmark harness's ratios, on made-up
runs: paired per repetition (the machine's speed drifts between
repetitions), falling back to the ratio of medians; the goals they
decide; and slowcg.py's variant environments and ratios of medians.  Exits 1 on the first wrong value."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'bench', 'harness'))
import run  # noqa: E402


def runs_of(kernel, cls, cfg, times, start_rep=1):
    return [{'kernel': kernel, 'class': cls, 'config': cfg, 'slowed': False,
             'rep': start_rep + i, 'status': 'ok', 'time': t}
            for i, t in enumerate(times)]


def check(name, got, want):
    if got is None or abs(got - want) > 1e-9:
        print('FAIL: %s = %r, expected %r' % (name, got, want))
        sys.exit(1)
    print('ok: %s = %.4f' % (name, got))


# Rep 2 ran on a machine twice as slow: the pairs say 2.0, 2.0 and 1.80,
# while the medians (1.1 / 0.61 = 1.80) would miss the EP goal of 1.85.
runs = (runs_of('ep', 'W', 'dsm-1', [1.0, 2.0, 1.1]) +
        runs_of('ep', 'W', 'dsm-shm-2', [0.5, 1.0, 0.61]) +
        runs_of('ep', 'W', 'gcc-1', [1.0, 2.0, 1.0]) +
        runs_of('ep', 'W', 'gcc-2', [0.5, 1.05, 0.5]) +
        # no repetition in common with dsm-1: ratio of medians
        runs_of('ep', 'W', 'dsm-tcp-2', [0.4, 0.5, 0.6], start_rep=4))
summ = run.summarize(runs, ['ep.W'], ['gcc-1', 'gcc-2', 'dsm-1', 'dsm-shm-2', 'dsm-tcp-2'])
r = summ['ep.W']['ratios']
check('speedup_shm (paired)', r['speedup_shm'], 2.0)
check('speedup_gcc (paired)', r['speedup_gcc'], 2.0)
check('vs_native2_shm (paired: 1, 1.05, 0.82)', r['vs_native2_shm'], 1.0)
check('one_node_vs_gcc1 (paired)', r['one_node_vs_gcc1'], 1.0)
check('speedup_tcp (medians, no common repetition)', r['speedup_tcp'], 1.1 / 0.5)
goals = {g['id']: g for g in run.evaluate_goals(summ)}
ep = [g for g in goals.values() if g.get('kernel') == 'ep.W' and g.get('threshold') == 1.85]
if len(ep) != 1 or ep[0]['status'] != 'met':
    print('FAIL: the EP speedup goal should be met: %r' % ep)
    sys.exit(1)
print('ok: EP goal met on paired ratios')

# A failed run drops out of its pair only.
runs[1]['status'] = 'FAILED: verification'
summ = run.summarize(runs, ['ep.W'], ['dsm-1', 'dsm-shm-2'])
check('speedup_shm without rep 2', summ['ep.W']['ratios']['speedup_shm'],
      (2.0 + 1.1 / 0.61) / 2)

# The alternating 1-node series decides the 1-node goal when present.
runs = (runs_of('cg', 'A', 'gcc-1', [1.0, 1.0, 1.0]) +
        runs_of('cg', 'A', 'dsm-1', [1.2, 1.2, 1.2]) +
        runs_of('cg', 'A', 'gcc-1', [1.0, 2.0, 1.0, 1.0, 1.0]) +
        runs_of('cg', 'A', 'dsm-1', [1.02, 2.1, 1.03, 0.99, 1.01]))
for r in runs[6:]:
    r['tag'] = 'one-node'
summ = run.summarize(runs, ['cg.A'], ['gcc-1', 'dsm-1'])
check('one_node_vs_gcc1 (matrix)', summ['cg.A']['ratios']['one_node_vs_gcc1'], 1.2)
check('one_node_vs_gcc1_alt', summ['cg.A']['ratios']['one_node_vs_gcc1_alt'], 1.02)
g = [g for g in run.evaluate_goals(summ) if g['id'] == 'one-node-cg.A'][0]
if g['status'] != 'met' or abs(g['value'] - 1.02) > 1e-9:
    print('FAIL: the 1-node goal should be decided by the alternating runs: %r' % g)
    sys.exit(1)
print('ok: 1-node goal from the alternating runs')

# slowcg.py: the variants as sched.py schedules (static's split for loops written
# schedule(profiled), migration only for +diffs, --env for profiled runs
# only) and its ratios of medians per kind and kernel, failed runs left out.
import slowcg  # noqa: E402
for v, want in (('static', 'static:OMPDSM_PROFILED=*=static'),
                ('profiled', 'profiled:OMPDSM_PROFILED_STALLS=on'),
                ('profiled+diffs', 'profiled+diffs:OMPDSM_PROFILED_STALLS=on')):
    got = slowcg.variant_sched(v, {'OMPDSM_PROFILED_STALLS': 'on'})
    if got != want:
        print('FAIL: slowcg %s schedule %r, expected %r' % (v, got, want))
        sys.exit(1)
print('ok: slowcg variant environments')


def slow_run(kind, variant, t, status='ok', migr=0):
    return {'kind': kind, 'kc': 'cgband.A', 'variant': variant, 'time': t, 'status': status,
            'moves': 2, 'undone': 1, 'migrations': migr, 'load_before': 1.0, 'load_after': 2.0}


runs = ([slow_run('hog', 'static', t) for t in (2.0, 2.2, 1.8)] +
        [slow_run('hog', 'profiled', t) for t in (1.6, 1.5, 1.7)] +
        [slow_run('hog', 'profiled+diffs', t, migr=m) for t, m in ((1.0, 40), (1.2, 50), (1.1, 44))] +
        [slow_run('hog', 'profiled+diffs', 0.1, status='FAILED: verification')])
row = slowcg.summarize(runs, ['hog'], ['cgband.A'], slowcg.VARIANTS)[0]
check('slowcg profiled/static', row['prof_vs_static'], 0.8)
check('slowcg +diffs/static (failed run left out)', row['diffs_vs_static'], 0.55)
check('slowcg migrations (median)', row['migrations'], 44)
if row['failed'] != 1:
    print('FAIL: slowcg failed count %r' % row['failed'])
    sys.exit(1)
print('ok: slowcg failed runs counted')
