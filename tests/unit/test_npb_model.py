#!/usr/bin/python3
"""tests/unit/test_npb_model.py - bench/harness/npb_model.py's pure logic on
made-up inputs (no NPB program runs): an NPB report's time, iterations and
verification, a failed run's missing lines, the per-interval counts of an
OMPDSM_STATS object, and the prediction it hands to model.py, checked
against the model's formula worked out here by hand (docs/model.md).
Exits 1 on the first wrong value."""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'bench', 'harness'))
import npb_model  # noqa: E402


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def check(name, got, want, tol=1e-9):
    if got is None or abs(got - want) > tol * max(1.0, abs(want)):
        fail('%s = %r, expected %r' % (name, got, want))
    print('ok: %s = %.6g' % (name, got))


REPORT = """
 CG Benchmark Completed.
 Class           =                        A
 Size            =                    14000
 Iterations      =                       10
 Time in seconds =                     2.00
 Total threads   =                        1
 Verification    =               SUCCESSFUL
"""
r = npb_model.parse_npb(REPORT)
check('time', r['time'], 2.0)
check('iterations', r['iterations'], 10)
if r['class'] != 'A' or r['verification'] != 'SUCCESSFUL':
    fail('class/verification %r' % r)
r = npb_model.parse_npb(' NAS Parallel Benchmarks (NPB3.3-OMP-C) - CG Benchmark\n')
if r['time'] is not None or r['iterations'] is not None or r['verification'] is not None:
    fail('a report without its summary should parse to None: %r' % r)
print('ok: a failed run parses to None')


def node(i, faults, protects, fetched, diffs, diff_bytes, get_bytes, barriers, forks, fault_ns):
    return {'node': i, 'dsm_read_faults': faults - 1, 'dsm_write_faults': 1,
            'dsm_pages_fetched': fetched, 'dsm_diffs': diffs, 'dsm_diff_bytes': diff_bytes,
            'dsm_invalidations': 0, 'dsm_notices_sent': 0, 'dsm_barriers': barriers,
            'dsm_forks': forks, 'dsm_protects': protects, 'comm_get_bytes': get_bytes,
            'comm_sleeps': 25 * i,
            'dsm_fault_ns': fault_ns, 'dsm_barrier_ns': 0}


# Node 1 is the busier: 200 faults (10 us each in the handler), 100 pages
# fetched, 50 diffs of 1000 bytes, 40 barriers and 10 forks (50 intervals).
STATS = {'nodes': 2, 'transport': 'shm',
         'machine_costs': {'fault_ns': 1000, 'protect_ns': 5000, 'page_copy_ns': 3000},
         'per_node': [node(0, 100, 150, 50, 20, 20000, 50 * 65536, 40, 10, 100 * 10000),
                      node(1, 200, 300, 100, 50, 50000, 100 * 65536, 40, 10, 200 * 10000)]}
iv = npb_model.interval_counts(STATS)
check('intervals (barriers + forks)', iv[1]['intervals'], 50)
check('faults per interval', iv[1]['faults'], 4.0)
check('protection changes per interval', iv[1]['protects'], 6.0)
check('wake-ups per interval', iv[1]['sleeps'], 0.5)
check('pages fetched per interval', iv[1]['fetched'], 2.0)
check('diffs per interval', iv[1]['diffs'], 1.0)
check('diff bytes per interval', iv[1]['diff_bytes'], 1000.0)
check('fetched bytes per interval', iv[0]['get_bytes'], 65536.0)

doc = {'class': 'A', 'page_size': '64K', 'costs': {}, 'programs': {
    'cg': {'1': {'report': {'time': 2.0, 'iterations': 10, 'verification': 'SUCCESSFUL'}},
           '2': {'report': {'time': 1.5, 'iterations': 10, 'verification': 'SUCCESSFUL'},
                 'stats': STATS}},
    'is': {'1': {'report': {'time': 1.0, 'iterations': 10}},
           '2': {'report': {'time': None, 'verification': None}, 'stats': None}}}}
md = npb_model.predict(doc)
if set(md['kernels']) != {'cg.A'}:
    fail('the failed IS run should be left out: %r' % sorted(md['kernels']))
m = md['kernels']['cg.A']

# model.py's formula with its default costs (no comm_bench/bench_dsm_* here)
# and the counts per timed iteration (whole job / 10) of the busier node:
# F = 20, G = 10, D = 5, Db = 5000, I = S = 0, Nb = 4; CG is all-to-all,
# f(4) = 2 * 3/4; the barrier tree of fan-out 4 has depth 1 on 4 nodes.
L, B, P = 2e-6, 12e9, 65536
o, c_bar, c_trap = 0.1e-6, 0.2e-6, 2.6e-6
c_diff = P / 5e9 + P / 10e9
c_fault = (100 * 10000 + 200 * 10000) / 300.0 * 1e-9 + c_trap
f4 = 2.0 * 3 / 4
comm4 = f4 * (20 * c_fault + 10 * (L + P / B) + 5 * (c_diff + L + o) + 5000 / B) \
    + 4 * (c_bar + 2 * 1 * (L + o))
check('predicted T(4)', m['pred']['4'], 2.0 / 4 + 10 * comm4)
check('predicted T(1) is the measured time', m['pred']['1'], 2.0)
if not m['pred']['64'] < m['pred']['2']:
    fail('T(64) %r should be below T(2) %r for these counts' % (m['pred']['64'], m['pred']['2']))
text = '\n'.join(npb_model.markdown(doc, md))
row = [x for x in text.splitlines() if x.startswith('| cg.A | 10 | 2.00 | 1.50 | 50 / 50 |')]
if len(row) != 1 or '4.00' not in row[0] or math.isnan(m['pred']['64']):
    fail('measured row missing or wrong in:\n' + text)
if '| is.A | - | 1.0 | failed (None) | | | | | | | | |' not in text:
    fail('the failed run should show as failed:\n' + text)
print('ok: markdown tables')

# The breakdown's terms add up to the prediction, and the probe variant
# charges a fault what the start-up probe measured (1 + 5 + 3 us) plus the
# trap, leaving the measured statistics as they were.
t = npb_model.model.comm_terms(m, 4, L, B, md['costs_s'], md['page_bytes'], md['fanout'])
check('breakdown adds up to T(4)', 2.0 / 4 + 10 * sum(t.values()), m['pred']['4'])
mp = npb_model.predict(npb_model.probe_fault_costs(doc))['kernels']['cg.A']
check('c_fault from the probe', mp['c_fault'], 9e-6 + c_trap)
check('statistics left as measured', STATS['per_node'][1]['dsm_fault_ns'], 200 * 10000)
text = '\n'.join(npb_model.markdown(doc, md, npb_model.predict(npb_model.probe_fault_costs(doc))))
if 'Where the time on 64 nodes goes' not in text or 'cg.A 11.6 us' not in text:
    fail('breakdown or probe table missing:\n' + text)
print('ok: breakdown and probe variant')
