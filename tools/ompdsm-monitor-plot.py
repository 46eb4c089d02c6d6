#!/usr/bin/python3
"""ompdsm-monitor-plot - draws the samples of `ompdsmrun --monitor=FILE`
(JSON lines, docs/diagnostics.md) as a timeline PNG: one panel per node,
the share of each second spent computing, waiting in barriers, waiting for
locks and serving faults (stacked), and the faults per second on a second
axis.

  ompdsm-monitor-plot.py SAMPLES.jsonl OUT.png

Needs matplotlib (Debian's python3-matplotlib: run with /usr/bin/python3).
Exit 0, or 1 with one line saying what is wrong.
"""
import json
import sys


def load(path):
    nodes = {}
    with open(path) as f:
        for no, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                s = json.loads(line)
                nodes.setdefault(int(s["node"]), []).append(s)
            except (ValueError, KeyError, TypeError) as e:
                raise SystemExit("ompdsm-monitor-plot: %s:%d: not a sample "
                                 "(%s)" % (path, no, e))
    if not nodes:
        raise SystemExit("ompdsm-monitor-plot: %s has no samples" % path)
    return nodes


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    nodes = load(argv[1])
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("ompdsm-monitor-plot: matplotlib is missing (install "
                         "python3-matplotlib and run with /usr/bin/python3)")
    ks = sorted(nodes)
    fig, axes = plt.subplots(len(ks), 1, sharex=True, squeeze=False,
                             figsize=(9, 1.6 + 1.4 * len(ks)))
    parts = [("compute", "#31a354"), ("barrier", "#e6550d"),
             ("lock", "#756bb1"), ("fault", "#3182bd")]
    for ax, k in zip(axes[:, 0], ks):
        ss = nodes[k]
        t = [s["t"] for s in ss]
        ax.stackplot(t, *[[s[p] for s in ss] for p, _ in parts],
                     labels=[p for p, _ in parts],
                     colors=[c for _, c in parts], alpha=0.85)
        ax.set_ylim(0, 1)
        ax.set_ylabel("node %d" % k)
        ax2 = ax.twinx()
        ax2.plot(t, [s["faults_per_s"] for s in ss], color="black", lw=1,
                 label="faults/s")
        ax2.set_ylabel("faults/s", fontsize=8)
    axes[0, 0].legend(loc="upper left", fontsize=7, ncol=4)
    axes[-1, 0].set_xlabel("seconds since the job started")
    fig.suptitle("ompdsm: share of each second per node")
    fig.tight_layout()
    fig.savefig(argv[2], dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
