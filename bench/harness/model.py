#!/usr/bin/python3
"""bench/harness/model.py - predicted run time of the kernels on 4 to 256
nodes over 100 Gb/s InfiniBand, from what the 1- and 2-node runs measured.

Used by run.py (model.build), or standalone on a results.json:

    /usr/bin/python3 bench/harness/model.py bench/results/results.json [--out DIR]
        [--latency-us 2] [--bandwidth-GBps 12]

which recomputes the model, prints its tables and redraws model.png.

The model (docs/model.md states it with its assumptions and limits):

    T(1) = the measured 1-node time T1
    T(N) = n * ( T1 / (n * min(N, Nmax))  +  C(N) )              N >= 2
    C(N) = f(N) * [ F * c_fault + G * (L + P / B) + D * (c_diff + L + o)
                    + Db / B + I * c_inval + S * 16 / B ]
           + Nb * ( c_bar + 2 * ceil(log_k N) * (L + o) )

per timed iteration (n of them), where F, G, D, Db, I, S, Nb are the
faults, pages fetched, diffs, diff bytes, invalidations, write notices and
barriers per iteration of the busiest node, measured on 2 nodes (shm) by
differencing a run with twice the iterations; c_* are this machine's
software costs per operation; L, B the network's latency and bandwidth, o
the software overhead per message, k the barrier tree's fan-out, P the DSM
page size; f(N) scales one node's traffic with N as the kernel's sharing
pattern implies (f(2) = 1).
"""
import argparse
import json
import math
import os
import sys

NET = {'name': '100 Gb/s InfiniBand', 'latency_us': 2.0, 'bandwidth_GBps': 12.0}
NODES = [1, 2, 4, 8, 16, 32, 64, 128, 256]
CURVE = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256]

# Sharing pattern of each kernel, the length of the loop that is split over
# the nodes (no more nodes than iterations can work), and the bytes of the
# main partitioned array (below one page per node, pages are shared by
# several writers: false sharing the model does not scale).
PATTERNS = {
    'ep': dict(pattern='local', why='independent batches; one reduction per run',
               nmax={'S': 256, 'W': 512, 'A': 4096}, array={'S': 0, 'W': 0, 'A': 0}),
    'cg': dict(pattern='all-to-all',
               why='every node reads the whole p vector in each mat-vec; the vectors are '
                   'homed in blocks, so a node fetches the (N-1)/N of them it is not home of',
               nmax={'S': 1400, 'W': 7000, 'A': 14000},
               array={'S': 1400 * 8, 'W': 7000 * 8, 'A': 14000 * 8}),
    'is': dict(pattern='all-to-all',
               why='every node adds its keys into the shared bucket counts and reads all '
                   'of them back; ranking touches the key ranges of all nodes',
               nmax={'S': 2 ** 11, 'W': 2 ** 16, 'A': 2 ** 19},
               array={'S': 2 ** 16 * 4, 'W': 2 ** 20 * 4, 'A': 2 ** 23 * 4}),
    # NPB FT (bench/harness/npb_model.py; no kernel of its own here): 256 x
    # 256 x 128 complex points for class A, its loops split over the 128
    # planes of the last dimension (cffts1/2, evolve) or 256 of the second.
    'ft': dict(pattern='all-to-all',
               why='the FFT along the split dimension reads every plane: a node fetches '
                   'the (N-1)/N of the array homed at the others (a transpose)',
               nmax={'S': 64, 'W': 32, 'A': 128},
               array={'S': 64 ** 3 * 16, 'W': 128 * 128 * 32 * 16, 'A': 256 * 256 * 128 * 16}),
    'mg': dict(pattern='neighbour',
               why='27-point stencils over planes: a node reads the boundary planes of its '
                   'two neighbours on every level',
               nmax={'S': 32, 'W': 128, 'A': 256},
               array={'S': 34 ** 3 * 8, 'W': 130 ** 3 * 8, 'A': 258 ** 3 * 8}),
    'himeno': dict(pattern='neighbour',
                   why='19-point stencil split over i-planes: a node reads one boundary plane '
                       'of each neighbour per sweep',
                   nmax={'XS': 30, 'S': 62},
                   array={'XS': 32 * 32 * 64 * 4, 'S': 64 * 64 * 128 * 4}),
}


def pattern_factor(pattern, n):
    """One node's traffic on N nodes relative to what it was on 2."""
    if n <= 2:
        return 1.0
    if pattern == 'local':
        return 1.0
    if pattern == 'neighbour':
        return 2.0   # two neighbours instead of one, independent of N
    return 2.0 * (n - 1) / n   # all-to-all: the share homed elsewhere


def tree_depth(n, fanout):
    d, reach = 0, 1
    while reach < n:
        reach *= fanout
        d += 1
    return d


def comm_terms(m, n, lat, bw, c, page, fanout):
    """C(N) of one kernel m (build's inputs: F, G, D, Db, I, S, Nb,
    c_fault, pattern) on n nodes, term by term, in seconds per iteration;
    c holds the costs o, c_bar, c_diff and c_inval."""
    f = pattern_factor(m['pattern'], n)
    return {'faults': f * m['F'] * m['c_fault'],
            'fetches': f * m['G'] * (lat + page / bw),
            'diffs': f * m['D'] * (c['c_diff'] + lat + c['o']),
            'diff_bytes': f * m['Db'] / bw,
            'invalidations': f * m['I'] * c['c_inval'],
            'notices': f * m['S'] * 16.0 / bw,
            'barriers': m['Nb'] * (c['c_bar'] + 2 * tree_depth(n, fanout) * (lat + c['o']))}


def per_iteration(base, calib, extra, n_iters):
    """Per-iteration counters of each node: (calibration - base) / extra
    when the calibration run is there, else the whole run / n (approximate:
    includes set-up, warm-up and verification)."""
    out, exact = [], False
    if base and calib and extra and len(base['per_node']) == len(calib['per_node']):
        exact = True
        for b, c in zip(base['per_node'], calib['per_node']):
            out.append({k: max(0.0, (c[k] - b[k]) / float(extra)) for k in b})
    elif base:
        for b in base['per_node']:
            out.append({k: b[k] / float(n_iters) for k in b})
    return out, exact


def build(doc, calib_runs, kernels, args=None, net=None):
    """The model's inputs, predictions and checks, as a JSON-able dict."""
    net = dict(net or NET)
    L = net['latency_us'] * 1e-6
    B = net['bandwidth_GBps'] * 1e9
    page = page_bytes(doc.get('page_size', '64K'))
    costs = doc.get('costs', {})
    cb = costs.get('comm_bench', {})
    shm = cb.get('shm', {})
    diffb = costs.get('diff_bench', {})
    fanout = int(os.environ.get('OMPDSM_TREE_FANOUT', '4'))

    # Software costs on this machine (seconds).
    src = {}
    o = shm.get('rtt8', 0.2) / 2 * 1e-6
    src['o'] = 'comm_bench shm 8-byte round trip / 2' if 'rtt8' in shm else 'assumed 0.1 us'
    c_bar = shm.get('barrier', 0.2) * 1e-6
    src['c_bar'] = 'comm_bench shm 2-node barrier' if 'barrier' in shm else 'assumed 0.2 us'
    sparse = next((v for k, v in diffb.items() if k.startswith('sparse')), None)
    unchanged = diffb.get('unchanged')
    diff_rate = (sparse['diff_GBps'] if sparse else 5.0) * 1e9
    copy_rate = (unchanged['memcmp_GBps'] if unchanged else 10.0) * 1e9
    c_diff = page / diff_rate + page / copy_rate  # the diff's scan + the twin's copy
    src['c_diff'] = ('bench_dsm_diff: page / sparse-diff rate + page / memcmp rate (twin copy)'
                     if sparse and unchanged else 'assumed 5 GB/s diff, 10 GB/s copy')
    # fault_ns starts in the handler: the trap itself (SIGSEGV delivery and
    # return, and the handler's mprotect) is added as c_trap.
    c_trap = costs.get('bare_fault_us', 2.6) * 1e-6
    src['c_trap'] = ('bench_dsm_fault bare fault+mprotect' if 'bare_fault_us' in costs
                     else 'DESIGN.md: mprotect + SIGSEGV ~2.6 us a fault')
    c_inval = (costs.get('bare_fault_us', 2.0) / 2) * 1e-6
    src['c_inval'] = ('bench_dsm_fault bare fault+mprotect / 2' if 'bare_fault_us' in costs
                      else 'assumed 1 us (one mprotect)')

    costs_s = {'o': o, 'c_bar': c_bar, 'c_diff': c_diff, 'c_inval': c_inval}
    kern_out = {}
    pooled_ns = pooled_f = 0.0
    for kc, e in doc['summary'].items():
        k, c = e['kernel'], e['class']
        base_cell = e['configs'].get('dsm-shm-2', {})
        base = base_cell.get('stats')
        t1 = e['configs'].get('dsm-1', {}).get('median')
        if not base or not t1:
            continue
        n_iters = (doc.get('himeno_iters', 100) if k == 'himeno' else kernels[k]['iters'][c])
        cr = calib_runs.get((kc, 'dsm-shm-2'))
        cstats = cr.get('stats') if cr and cr.get('status') == 'ok' else None
        per, exact = per_iteration(base, cstats, cr.get('extra_iters') if cr else None, n_iters)
        if not per:
            continue
        # The busiest node, counter by counter (an upper bound of the critical path).
        mx = {key: max(p[key] for p in per) for key in per[0]}
        faults = mx['read_faults'] + mx['write_faults']
        tf = sum(p['fault_ns'] for p in per)
        nf = sum(p['read_faults'] + p['write_faults'] for p in per)
        kern_out[kc] = {
            'kernel': k, 'class': c, 'iters': n_iters, 'T1': t1,
            'T2_shm': base_cell.get('median'),
            'T2_tcp': e['configs'].get('dsm-tcp-2', {}).get('median'),
            'per_iter_exact': exact,
            'F': faults, 'G': mx['pages_fetched'], 'D': mx['diffs'], 'Db': mx['diff_bytes'],
            'I': mx['invalidations'], 'S': mx['notices_sent'], 'Nb': mx['barriers'],
            'fault_ns_per_fault': (tf / nf) if nf else None, 'faults_total_per_iter': nf,
            'pattern': PATTERNS[k]['pattern'], 'pattern_why': PATTERNS[k]['why'],
            'nmax': PATTERNS[k]['nmax'].get(c), 'array_bytes': PATTERNS[k]['array'].get(c),
        }
        if nf:
            pooled_ns += tf
            pooled_f += nf
    pooled = pooled_ns / pooled_f * 1e-9 if pooled_f else 5e-6
    src['c_fault'] = ('fault_ns / faults of the 2-node shm calibration runs (the kernel\'s own '
                      'when it made >= 1000 faults per iteration, else pooled over the kernels)')

    for kc, m in kern_out.items():
        own = m['fault_ns_per_fault']
        m['c_fault'] = (own * 1e-9 if own and m['faults_total_per_iter'] >= 1000 else pooled) + c_trap
        m['page_limit_nodes'] = (m['array_bytes'] // page) if m['array_bytes'] else None

        def comm(n, lat, bw, m=m):
            return sum(comm_terms(m, n, lat, bw, costs_s, page, fanout).values())

        def T(n, lat=L, bw=B, m=m):
            if n == 1:
                return m['T1']
            neff = min(n, m['nmax']) if m['nmax'] else n
            return m['T1'] / neff + m['iters'] * comm(n, lat, bw)

        m['pred'] = {str(n): T(n) for n in NODES}
        m['speedup'] = {str(n): m['T1'] / T(n) for n in NODES}
        m['curve'] = [[n, T(n)] for n in CURVE]
        m['comm_share'] = {str(n): (m['iters'] * comm(n, L, B)) / T(n) for n in NODES if n > 1}
        # Consistency check at N = 2 over shm: shm's latency (an 8-byte
        # round trip / 2) and a memory-speed copy; c_fault already holds the
        # shm fetch, so fetched pages add only the latency.
        lat_shm = shm.get('rtt8', 0.2) / 2 * 1e-6
        m['check_shm2'] = T(2, lat_shm, 1e15)
        best = max(m['speedup'].items(), key=lambda kv: kv[1])
        m['best_N'] = int(best[0])
        m['best_speedup'] = best[1]

    return {'network': net, 'page_bytes': page, 'fanout': fanout,
            'costs_s': dict(costs_s, c_trap=c_trap, c_fault_pooled=pooled),
            'cost_sources': src, 'nodes': NODES, 'kernels': kern_out}


def per_iteration_table(doc, calib_runs, kernels):
    """What one timed iteration costs on 2 nodes over shm and over tcp:
    time, the ideal compute share, and the DSM's counters and times per
    iteration (calibration difference; "approx." rows divide the whole
    job).  The node shown for times is the one with the most fault +
    barrier time."""
    rows = []
    for kc, e in doc['summary'].items():
        k, c = e['kernel'], e['class']
        t1 = e['configs'].get('dsm-1', {}).get('median')
        n = doc.get('himeno_iters', 100) if k == 'himeno' else kernels[k]['iters'][c]
        for cfg in ('dsm-shm-2', 'dsm-tcp-2'):
            cell = e['configs'].get(cfg, {})
            base = cell.get('stats')
            if not base or not cell.get('median'):
                continue
            cr = calib_runs.get((kc, cfg))
            cst = cr.get('stats') if cr and cr.get('status') == 'ok' else None
            per, exact = per_iteration(base, cst, cr.get('extra_iters') if cr else None, n)
            if not per:
                continue
            busy = max(per, key=lambda p: p['fault_ns'] + p['barrier_ns'])
            tot = {key: sum(p[key] for p in per) for key in per[0]}
            faults = tot['read_faults'] + tot['write_faults']
            rows.append({
                'kernel': kc, 'config': cfg, 'exact': exact, 'iters': n,
                't_iter_ms': cell['median'] / n * 1e3,
                'compute_ms': t1 / n / 2 * 1e3 if t1 else None,
                'fault_ms': busy['fault_ns'] / 1e6, 'barrier_ms': busy['barrier_ns'] / 1e6,
                'faults': faults, 'read_faults': tot['read_faults'],
                'write_faults': tot['write_faults'], 'fetched': tot['pages_fetched'],
                'twins': tot['twins'], 'diffs': tot['diffs'], 'diff_KB': tot['diff_bytes'] / 1e3,
                'invalidations': tot['invalidations'], 'notices': tot['notices_sent'],
                'barriers': max(p['barriers'] for p in per),
                'us_per_fault': tot['fault_ns'] / faults / 1e3 if faults else None,
                'us_per_barrier': (busy['barrier_ns'] / busy['barriers'] / 1e3
                                   if busy['barriers'] else None),
            })
    return rows


def per_iteration_markdown(rows):
    L = ['Per timed iteration on 2 nodes (difference of a run with twice the iterations, so '
         'set-up, warm-up and verification cancel; "approx." = whole job / iterations): the '
         'measured time, the ideal compute share (1-node time / 2), the fault and barrier time '
         'of the busier node (barrier time includes waiting for the other node), and the '
         'counters summed over both nodes. Twins = write faults on pages whose home is the '
         'other node; each becomes a diff at the next barrier.', '',
         '| kernel | run | ms/iter | compute ms | fault ms | barrier ms | faults (r+w) | '
         'fetched | twins/diffs | diff KB | invalidations | barriers | us/fault | us/barrier |',
         '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in rows:
        L.append('| %s | %s%s | %.2f | %s | %.2f | %.2f | %.0f (%.0f+%.0f) | %.0f | %.0f | %.0f | '
                 '%.0f | %.0f | %s | %s |' % (
                     r['kernel'], r['config'].replace('dsm-', '').replace('-2', ''),
                     '' if r['exact'] else ' (approx.)', r['t_iter_ms'],
                     '%.2f' % r['compute_ms'] if r['compute_ms'] is not None else '-',
                     r['fault_ms'], r['barrier_ms'], r['faults'], r['read_faults'],
                     r['write_faults'], r['fetched'], r['diffs'], r['diff_KB'],
                     r['invalidations'], r['barriers'],
                     '%.1f' % r['us_per_fault'] if r['us_per_fault'] else '-',
                     '%.1f' % r['us_per_barrier'] if r['us_per_barrier'] else '-'))
    L.append('')
    return L


def page_bytes(s):
    s = str(s).split()[0].upper()
    mult = {'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


def us(x):
    return '%.2f' % (x * 1e6)


def markdown(md):
    L = []
    net = md['network']
    c = md['costs_s']
    L.append('### Model: %s (latency %.1f us, %.0f GB/s)' % (net['name'], net['latency_us'],
                                                             net['bandwidth_GBps']))
    L.append('')
    L.append('Inputs per timed iteration, busiest node, measured on 2 nodes over shm (difference '
             'of a run with twice the iterations, so set-up, warm-up and verification cancel; '
             '"approx." = whole run / iterations). Costs on this machine: fault (c_fault, '
             'software: the handler\'s time on shm, with its 64 KiB copy, + %s us for the trap) '
             'per kernel below; diff + twin %s us; '
             'invalidation %s us; barrier software %s us; per message %s us; page %d KiB; '
             'barrier tree fan-out %d.' % (us(c.get('c_trap', 0.0)), us(c['c_diff']), us(c['c_inval']), us(c['c_bar']),
                                          us(c['o']), md['page_bytes'] // 1024, md['fanout']))
    L.append('')
    L.append('| kernel | iters | T1 s | faults | fetched | diffs | diff KB | invalid. | '
             'notices | barriers | c_fault us | pattern | per-iter |')
    L.append('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
    for kc, m in md['kernels'].items():
        L.append('| %s | %d | %.3f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s | %s |' % (
            kc, m['iters'], m['T1'], m['F'], m['G'], m['D'], m['Db'] / 1e3, m['I'], m['S'],
            m['Nb'], us(m['c_fault']), m['pattern'], 'exact' if m['per_iter_exact'] else 'approx.'))
    L.append('')
    L.append('Predicted time in seconds (speedup over the measured 1 node), and the check at '
             'N = 2 against the measured shm run:')
    L.append('')
    ns = md['nodes']
    L.append('| kernel | measured 2 shm | model 2 (shm costs) | ' +
             ' | '.join('N=%d' % n for n in ns if n >= 2) + ' | best N | comm share at 256 |')
    L.append('|---|---|---|' + '---|' * len([n for n in ns if n >= 2]) + '---|---|')
    for kc, m in md['kernels'].items():
        cells = ['%.3g (%.1fx)' % (m['pred'][str(n)], m['speedup'][str(n)]) for n in ns if n >= 2]
        L.append('| %s | %s | %.3f | %s | %d (%.1fx) | %.0f%% |' % (
            kc, '%.3f' % m['T2_shm'] if m['T2_shm'] else '-', m['check_shm2'], ' | '.join(cells),
            m['best_N'], m['best_speedup'], 100 * m['comm_share']['256']))
    return L


def main(argv=None):
    ap = argparse.ArgumentParser(description='recompute the model from a results.json')
    ap.add_argument('results')
    ap.add_argument('--out', default=None, help='where model.png goes (default: beside results)')
    ap.add_argument('--latency-us', type=float, default=NET['latency_us'])
    ap.add_argument('--bandwidth-GBps', type=float, default=NET['bandwidth_GBps'])
    a = ap.parse_args(argv)
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import run  # noqa: E402  (kernel table)
    with open(a.results) as f:
        doc = json.load(f)
    calib = {('%s.%s' % (r['kernel'], r['class']), r['config']): r for r in doc['runs']
             if r.get('tag') == 'calibration'}
    net = dict(NET, latency_us=a.latency_us, bandwidth_GBps=a.bandwidth_GBps)
    md = build(doc, calib, run.KERNELS, net=net)
    print('\n'.join(markdown(md)))
    out = a.out or os.path.dirname(os.path.abspath(a.results))
    try:
        import plots
        doc['model'] = md
        print('wrote', plots.model_plot(doc, out))
    except ImportError as e:
        print('no plot (%s)' % e)
    return 0


if __name__ == '__main__':
    sys.exit(main())
