"""bench/harness/matrix/config.py - what the kernels' benchmark matrix runs:
the kernels and their classes, the configurations (columns), the DSM
statistics kept per run and the goals the ratios are held to."""
import os
import typing

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bench/harness
SRC = os.path.dirname(os.path.dirname(HERE))


# The kernels: class macro, the macro holding the timed iteration count (for
# the model's calibration variant), iteration counts, loop that is split.
KERNELS = {
    'ep': dict(define='CLASS', classes=['S', 'W', 'A'], iter_macro=None,
               iters={'S': 1, 'W': 1, 'A': 1}),
    'cg': dict(define='CLASS', classes=['S', 'W', 'A'], iter_macro='NITER',
               iters={'S': 15, 'W': 15, 'A': 15}),
    'is': dict(define='CLASS', classes=['S', 'W', 'A'], iter_macro='IMAX',
               iters={'S': 10, 'W': 10, 'A': 10}),
    'mg': dict(define='CLASS', classes=['S', 'W', 'A'], iter_macro='NIT',
               iters={'S': 4, 'W': 4, 'A': 4}),
    'himeno': dict(define='SIZE', classes=['XS', 'S'], iter_macro=None,
                   iters=None),  # iterations: the command-line argument
}
DEFAULT_KERNELS = ['ep.W', 'cg.A', 'is.A', 'mg.A', 'himeno.S']
QUICK_KERNELS = ['ep.S', 'cg.S', 'is.S', 'mg.S', 'himeno.XS']
HIMENO_ITERS = 200


class Config(typing.NamedTuple):
    """One column of the matrix."""
    name: str
    kind: str    # 'native' (cc/clang -fopenmp) or 'ompdsm'
    what: str    # native: the compiler; ompdsm: the transport
    width: int   # threads (native) or threads in all (ompdsm)
    label: str   # for tables and plots


CONFIGS = [Config(*c) for c in [
    ('gcc-1', 'native', 'gcc', 1, 'cc -fopenmp, 1 thread'),
    ('gcc-2', 'native', 'gcc', 2, 'cc -fopenmp, 2 threads'),
    ('clang-1', 'native', 'clang', 1, 'clang -fopenmp, 1 thread'),
    ('clang-2', 'native', 'clang', 2, 'clang -fopenmp, 2 threads'),
    ('dsm-1', 'ompdsm', 'shm', 1, 'ompdsm, 1 node'),
    ('dsm-shm-2', 'ompdsm', 'shm', 2, 'ompdsm, 2 nodes, shm'),
    ('dsm-tcp-2', 'ompdsm', 'tcp', 2, 'ompdsm, 2 nodes, tcp'),
    # Hybrid nodes (OMPDSM_THREADS_PER_NODE=2) are not accepted by the
    # runtime yet; select this with --configs once they are.
    ('dsm-hybrid-1x2', 'ompdsm', 'shm', 2, 'ompdsm, 1 node x 2 threads'),
]]
DEFAULT_CONFIGS = [c.name for c in CONFIGS if c.name != 'dsm-hybrid-1x2']
CONF = {c.name: c for c in CONFIGS}
SHORT = {'gcc-1': 'gcc 1t', 'gcc-2': 'gcc 2t', 'clang-1': 'clang 1t',
         'clang-2': 'clang 2t', 'dsm-1': 'dsm 1', 'dsm-shm-2': 'shm 2',
         'dsm-tcp-2': 'tcp 2', 'dsm-hybrid-1x2': 'hyb 1x2'}

# Statistics kept per run (totals over nodes and per node).
STAT_KEYS = ['read_faults', 'write_faults', 'pages_fetched', 'twins', 'diffs',
             'diff_bytes', 'diff_runs', 'notices_sent', 'notices_applied',
             'invalidations', 'barriers', 'forks', 'dsm_atomics', 'fault_ns',
             'barrier_ns', 'puts', 'put_bytes', 'gets', 'get_bytes',
             'comm_atomics', 'notifies', 'wait_ns', 'sleeps', 'region_ns',
             'remote_faults', 'migrations', 'migrate_bytes']

GOALS = [
    # (id, kernel, class or None, what, threshold, text)
    ('ep-speedup', 'ep', None, 'speedup_shm', 1.85, 'EP: 2 nodes (shm) >= 1.85x 1 node'),
    ('ep-native', 'ep', None, 'vs_native2_shm', 0.95, 'EP: 2 nodes (shm) >= 0.95x cc -fopenmp 2 threads'),
    ('himeno-speedup', 'himeno', 'S', 'speedup_shm', 1.6, 'Himeno S: 2 nodes (shm) >= 1.6x 1 node'),
    ('himeno-native', 'himeno', 'S', 'vs_native2_shm', 0.8, 'Himeno S: 2 nodes (shm) >= 0.8x cc -fopenmp 2 threads'),
    ('cg-speedup', 'cg', 'A', 'speedup_shm', 1.3, 'CG A: 2 nodes (shm) >= 1.3x 1 node'),
]
ONE_NODE_GOAL = 1.05  # ompdsm 1 node / cc -fopenmp 1 thread
