"""bench/harness/matrix/summary.py - the matrix's numbers from its runs:
medians per cell, paired ratios, Himeno's GOSA check, the goals met or
not, and the noise (load, spread) the runs saw."""
import statistics

from matrix.config import GOALS, ONE_NODE_GOAL


def median(xs):
    return statistics.median(xs) if xs else None


def sig6(x):
    return float('%.5e' % x)


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
