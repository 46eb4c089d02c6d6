"""bench/harness/plots.py - the harness's PNG plots (Debian's
python3-matplotlib, so run the harness with /usr/bin/python3):

  times.png     median time per kernel and configuration, homogeneous and
                with node 1 slowed, normalised to cc -fopenmp 1 thread
                (min-max of the repetitions as error bars)
  speedups.png  the ratios the goals name, with the goals' thresholds
                (cf. the Omni/SCASH re-partitioning paper, figures 5-7)
  stats.png     faults, fetched and diff megabytes, barrier and fault time
                of the 2-node runs, shm against tcp (cf. the Omni/SCASH re-partitioning paper, table 2)
  model.png     predicted time and speedup for 1..256 nodes on InfiniBand
                beside the measured 1- and 2-node points
"""
import os

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {'gcc-1': '#bbbbbb', 'gcc-2': '#777777', 'clang-1': '#c6dbef', 'clang-2': '#6baed6',
          'dsm-1': '#fdd0a2', 'dsm-shm-2': '#e6550d', 'dsm-tcp-2': '#31a354',
          'dsm-hybrid-1x2': '#756bb1'}


def _save(fig, out, name):
    """Lays out, writes out/name and frees the figure; returns the path."""
    fig.tight_layout()
    p = os.path.join(out, name)
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return p


def _label(doc, c):
    return doc.get('config_labels', {}).get(c, c)


def times_plot(doc, out):
    summ = doc['summary']
    cfgs = doc['configs']
    kcs = list(summ)
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    for ax, slowed in zip(axes, (False, True)):
        w = 0.8 / max(1, len(cfgs))
        for j, c in enumerate(cfgs):
            xs, ys, lo, hi = [], [], [], []
            for i, kc in enumerate(kcs):
                e = summ[kc]
                ref = e['configs'].get('gcc-1', {}).get('median')
                s = e['configs'].get(c + ('/slow' if slowed else ''))
                if not s or not s.get('median') or not ref:
                    continue
                xs.append(i + (j - (len(cfgs) - 1) / 2) * w)
                ys.append(s['median'] / ref)
                lo.append((s['median'] - s['min']) / ref)
                hi.append((s['max'] - s['median']) / ref)
                if s['failed']:
                    ax.text(xs[-1], ys[-1], 'FAIL', rotation=90, color='red', fontsize=7,
                            ha='center', va='bottom')
            if xs:
                ax.bar(xs, ys, w, yerr=[lo, hi], color=COLORS.get(c, None), label=_label(doc, c),
                       capsize=2, error_kw={'elinewidth': 0.7})
        ax.set_xticks(range(len(kcs)))
        ax.set_xticklabels(kcs)
        ax.axhline(1.0, color='k', lw=0.5)
        ax.set_yscale('log')
        ax.set_title('node 1 / thread 1 slowed (%s)' % doc.get('slow_method_short', '')
                     if slowed else 'homogeneous')
        ax.grid(axis='y', alpha=0.3)
    axes[0].set_ylabel('time / cc -fopenmp 1 thread (log; lower is better)')
    axes[0].legend(fontsize=7, ncol=2)
    fig.suptitle('Kernel times, medians of %d repetition(s); bars: min..max' % doc['reps'])
    return _save(fig, out, 'times.png')


def speedups_plot(doc, out):
    summ = doc['summary']
    kcs = list(summ)
    series = [('speedup_gcc', 'cc -fopenmp 2t / 1t', '#777777'),
              ('speedup_clang', 'clang -fopenmp 2t / 1t', '#6baed6'),
              ('speedup_shm', 'ompdsm 2 nodes shm / 1 node', '#e6550d'),
              ('speedup_tcp', 'ompdsm 2 nodes tcp / 1 node', '#31a354'),
              ('vs_native2_shm', 'ompdsm shm 2 vs cc 2 threads', '#fdae6b'),
              ('slow_dsm-shm-2', 'shm 2: slowed / homogeneous time', '#9e9ac8')]
    fig, ax = plt.subplots(figsize=(12, 4.8))
    w = 0.8 / len(series)
    for j, (key, lab, col) in enumerate(series):
        xs, ys = [], []
        for i, kc in enumerate(kcs):
            v = summ[kc]['ratios'].get(key)
            if v:
                xs.append(i + (j - (len(series) - 1) / 2) * w)
                ys.append(v)
        if xs:
            ax.bar(xs, ys, w, label=lab, color=col)
    # The goals' thresholds, drawn over the bars they apply to.
    for g in doc['goals']:
        if g.get('threshold') is None or g['id'].startswith('one-node') or not g.get('kernel'):
            continue
        if g['kernel'] not in kcs:
            continue
        i = kcs.index(g['kernel'])
        key = 'speedup_shm' if 'speedup' in g['id'] else 'vs_native2_shm'
        j = [s[0] for s in series].index(key)
        x = i + (j - (len(series) - 1) / 2) * w
        ax.plot([x - w / 2, x + w / 2], [g['threshold']] * 2, color='k', lw=2)
        ax.text(x, g['threshold'], ' goal %.3g' % g['threshold'], fontsize=7, va='bottom',
                ha='center')
    ax.axhline(1.0, color='k', lw=0.5)
    ax.axhline(2.0, color='k', lw=0.5, ls=':')
    ax.set_xticks(range(len(kcs)))
    ax.set_xticklabels(kcs)
    ax.set_ylabel('ratio (higher is faster; slowed/homogeneous: higher is slower)')
    ax.set_title('Speedups and ratios of one run, paired per repetition (black bars: goals)')
    ax.legend(fontsize=7, ncol=3)
    ax.grid(axis='y', alpha=0.3)
    return _save(fig, out, 'speedups.png')


def stats_plot(doc, out):
    summ = doc['summary']
    kcs = [kc for kc in summ if summ[kc]['configs'].get('dsm-shm-2', {}).get('stats')]
    if not kcs:
        return None
    metrics = [('faults', lambda t, p: t['read_faults'] + t['write_faults'], 'page faults'),
               ('fetched', lambda t, p: t['get_bytes'] / 1e6, 'MB fetched'),
               ('diffs', lambda t, p: t['diff_bytes'] / 1e6, 'diff MB'),
               ('fault', lambda t, p: max(n['fault_ns'] for n in p) / 1e6, 'fault ms (max node)'),
               ('barrier', lambda t, p: max(n['barrier_ns'] for n in p) / 1e6, 'barrier ms (max node)')]
    fig, axes = plt.subplots(1, len(metrics), figsize=(16, 3.8))
    for ax, (_, fn, title) in zip(axes, metrics):
        for j, (c, col) in enumerate((('dsm-shm-2', '#e6550d'), ('dsm-tcp-2', '#31a354'))):
            xs, ys = [], []
            for i, kc in enumerate(kcs):
                st = summ[kc]['configs'].get(c, {}).get('stats')
                if st:
                    xs.append(i + (j - 0.5) * 0.4)
                    ys.append(fn(st['total'], st['per_node']))
            ax.bar(xs, ys, 0.4, color=col, label=c.replace('dsm-', '').replace('-2', ' 2 nodes'))
        ax.set_xticks(range(len(kcs)))
        ax.set_xticklabels(kcs, fontsize=7, rotation=30)
        ax.set_title(title, fontsize=9)
        ax.set_yscale('log')
        ax.grid(axis='y', alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle('DSM statistics of the 2-node runs (whole job, median run)')
    return _save(fig, out, 'stats.png')


def model_plot(doc, out):
    md = doc.get('model')
    if not md or not md.get('kernels'):
        return None
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 5))
    cmap = plt.get_cmap('tab10')
    for i, (kc, m) in enumerate(md['kernels'].items()):
        col = cmap(i % 10)
        ns = [p[0] for p in m['curve']]
        ts = [p[1] for p in m['curve']]
        a1.plot(ns, ts, '-', color=col, label='%s model' % kc)
        a2.plot(ns, [m['T1'] / t for t in ts], '-', color=col, label='%s model' % kc)
        pts = [(1, m['T1'], 'o'), (2, m['T2_shm'], 's'), (2, m['T2_tcp'], '^')]
        for n, t, mk in pts:
            if t:
                a1.plot([n], [t], mk, color=col, mfc='none' if mk == '^' else col)
                a2.plot([n], [m['T1'] / t], mk, color=col, mfc='none' if mk == '^' else col)
    for ax in (a1, a2):
        ax.set_xscale('log', base=2)
        ax.set_xlabel('nodes')
        ax.grid(alpha=0.3, which='both')
    a1.set_yscale('log')
    a1.set_ylabel('time of the timed section, s')
    a2.set_yscale('log', base=2)
    a2.plot([1, 256], [1, 256], 'k:', lw=0.7, label='linear')
    a2.set_ylabel('speedup over 1 node')
    a1.set_title('predicted (lines) and measured (o: 1 node, filled square: 2 shm, open '
                 'triangle: 2 tcp)', fontsize=8)
    net = md['network']
    a2.set_title('model: %s, %.0f us, %.0f GB/s, page %d KiB' % (
        net['name'], net['latency_us'], net['bandwidth_GBps'], md['page_bytes'] // 1024), fontsize=9)
    a2.legend(fontsize=7)
    return _save(fig, out, 'model.png')


def make_all(doc, out):
    made = []
    for fn in (times_plot, speedups_plot, stats_plot, model_plot):
        p = fn(doc, out)
        if p:
            made.append(os.path.basename(p))
    return made
