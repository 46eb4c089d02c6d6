"""bench/harness/matrix/report.py - the matrix's outputs: the markdown
tables (results.md and the kernels section of docs/performance.md) and
results.csv."""
import csv
import os

import model
from matrix.config import SHORT, SRC, STAT_KEYS


def fmt(x, nd=3):
    if x is None:
        return '-'
    if isinstance(x, str):
        return x
    if abs(x) >= 100:
        return '%.1f' % x
    return ('%.' + str(nd) + 'f') % x


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
