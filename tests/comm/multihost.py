#!/usr/bin/python3
"""tests/comm/multihost.py - the comm layer across test hosts made of
network namespaces (tests/cluster/netns.sh), nodes started by
tests/comm/nsrun.py.  Exit 0 on success, 1 on failure, 77 (with the reason)
where namespaces cannot be made.

  --case 2x2   2 hosts x 2 nodes, OMPDSM_TRANSPORT=auto:
               - every node reports shm for the node of its own host and tcp
                 for the others (comm_check peers, and OMPDSM_TRACE=comm);
               - `comm_check stream` (4 MiB per ordered pair of nodes) moves
                 at least 2 x 2 x 4 MiB through each host's veth (eth0), and
                 under 1 MiB through its loopback, while the same run with
                 OMPDSM_TRANSPORT=tcp moves at least 2 x 1 x 4 MiB through
                 loopback (the check can tell the two apart);
               - the comm_check groups pass;
               - OMPDSM_TRANSPORT=shm fails with a one-line reason.
  --case 4x1   4 hosts x 1 node: every peer over tcp; the groups pass.
  --case iface 2 hosts x 1 node, each host also on a second network (eth1,
               10.98.0.0/24, its own bridge): by default the tcp transport
               listens on the address that routes to the bootstrap server
               (eth0) and comm_check stream's 4 MiB per node cross eth0;
               with OMPDSM_IFACE=eth1 or =10.98.0.0/24 they cross eth1 and
               under 1 MiB crosses eth0; an OMPDSM_IFACE naming nothing, a
               malformed one, and an OMPDSM_TCP_ADDR that is no local
               address (which wins over OMPDSM_IFACE) each fail with a
               one-line reason.
  --case build 2 hosts x 2 nodes, host 1 running --prog-b (comm_check
               built with another define): the job fails, and one line names
               node 2, both hosts (their addresses), the executable and both
               build ids; the same program on both hosts passes (2x2).
  --case omp --src FILE...  each conformance program (tests/omp) on 2 hosts
               x 2 nodes against gcc -fopenmp (tests/omp/conformance.py).
Options: --prog comm_check, --ompcc, --netns netns.sh; --mpirun PATH: the
nodes are started by Open MPI's mpirun inside host 0's namespace, with
netns.sh rsh as its plm_rsh_agent and -H with every host's address (the
PMIx start-up across hosts; 2x2 and 4x1 only; 77 without mpirun), through
tests/comm/mpi_rsh.sh (netns.sh rsh with a temporary directory per host)."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NSRUN = os.path.join(HERE, 'nsrun.py')
MIB = 1 << 20
STREAM_BYTES = 4 * MIB  # comm_check stream: STREAM_ROUNDS x WIN per pair
GROUPS = ['onesided', 'atomics', 'barrier', 'coll', 'send', 'threads']


def fail(msg):
    print('FAIL: ' + msg, file=sys.stderr)
    sys.exit(1)


# Passed to the nodes by mpirun -x (ompdsmrun and nsrun pass everything).
PASS_VARS = ['OMPDSM_TRANSPORT', 'OMPDSM_TRACE', 'OMPDSM_IFACE',
             'OMPDSM_TCP_ADDR']


class Hosts:
    def __init__(self, netns, n, mpirun=None):
        self.netns, self.n, self.mpirun = netns, n, mpirun
        self.prefix = 'cm%d' % os.getpid()
        chk = subprocess.run(['sh', netns, 'check'])
        if chk.returncode == 77:
            sys.exit(77)
        subprocess.run(['sh', netns, 'up', self.prefix, str(n)], check=True,
                       stdout=subprocess.DEVNULL)

    def down(self):
        subprocess.run(['sh', self.netns, 'down', self.prefix])
        tmp = os.environ.get('TMPDIR', '/tmp')
        for d in os.listdir(tmp):
            if d.startswith('ompdsm-mpi-%s-' % self.prefix):
                shutil.rmtree(os.path.join(tmp, d), ignore_errors=True)

    def addr(self, i):
        return subprocess.check_output(['sh', self.netns, 'addr', self.prefix,
                                        str(i)], text=True).strip()

    def tx_bytes(self, host, dev):
        out = subprocess.check_output(['ip', '-n', '%s-h%d' % (self.prefix, host),
                                       '-s', '-j', 'link', 'show', 'dev', dev])
        return json.loads(out)[0]['stats64']['tx']['bytes']

    def run(self, per_host, cmd, transport='auto', trace=False, timeout=120,
            other=None):
        env = dict(os.environ, OMPDSM_TRANSPORT=transport)
        if trace:
            env['OMPDSM_TRACE'] = 'comm'
        np = self.n * per_host
        if self.mpirun:
            hosts = ['%s:%d' % (self.addr(i), per_host) for i in range(self.n)]
            env['OMPDSM_NETNS_PREFIX'] = self.prefix
            launcher = ['ip', 'netns', 'exec', self.prefix + '-h0', self.mpirun,
                        '--allow-run-as-root', '--oversubscribe', '--mca',
                        'plm_rsh_agent', os.path.join(HERE, 'mpi_rsh.sh'),
                        '-H', ','.join(hosts), '-np', str(np)]
            for v in PASS_VARS:
                if v in env:
                    launcher += ['-x', v]
        else:
            launcher = [sys.executable, NSRUN, '--prefix', self.prefix,
                        '--per-host', str(per_host), '-np', str(np)] + \
                (['--other-prog', other] if other else [])
        try:
            p = subprocess.run(launcher + cmd, env=env, capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            fail('%s (np %d, %s) did not end within %d s' %
                 (' '.join(cmd), np, transport, timeout))
        return p


def check_peers(h, prog, per_host):
    p = h.run(per_host, [prog, 'peers'], trace=True)
    if p.returncode:
        fail('comm_check peers exited %d:\n%s' % (p.returncode, p.stderr))
    np = h.n * per_host
    seen = set()
    for m in re.finditer(r'^node (\d+): peer (\d+) (\w+) (\S+)$', p.stdout, re.M):
        r, q, tr, where = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
        same = r // per_host == q // per_host
        want = ('shm', 'same-host') if same else ('tcp', 'other-host')
        if (tr, where) != want:
            fail('node %d reports peer %d as %s %s, expected %s %s' %
                 (r, q, tr, where, want[0], want[1]))
        seen.add((r, q))
    if len(seen) != np * (np - 1):
        fail('%d of %d peer lines:\n%s' % (len(seen), np * (np - 1), p.stdout))
    # The trace says the same, in its own words.
    traced = 0
    for m in re.finditer(r'n(\d+)\] transports: .* by peer (.*)$', p.stderr, re.M):
        r = int(m.group(1))
        for pair in m.group(2).split():
            q, tr = pair.split(':')
            want = 'shm' if r // per_host == int(q) // per_host else 'tcp'
            if tr != want:
                fail('OMPDSM_TRACE: node %d uses %s for peer %s, expected %s' %
                     (r, tr, q, want))
        traced += 1
    if traced != np:
        fail('OMPDSM_TRACE=comm named the transports of %d nodes, not %d:\n%s'
             % (traced, np, p.stderr))


def stream_bytes(h, prog, per_host, transport):
    """(eth0, lo) tx bytes of each host during one comm_check stream run."""
    before = [(h.tx_bytes(i, 'eth0'), h.tx_bytes(i, 'lo')) for i in range(h.n)]
    p = h.run(per_host, [prog, 'stream'], transport=transport)
    if p.returncode:
        fail('comm_check stream (%s) exited %d:\n%s' %
             (transport, p.returncode, p.stderr))
    return [(h.tx_bytes(i, 'eth0') - e, h.tx_bytes(i, 'lo') - l)
            for i, (e, l) in enumerate(before)]


def check_groups(h, prog, per_host):
    # Under mpirun, fewer: its start-up costs more (the groups themselves
    # ran under nsrun already).
    for g in (['onesided', 'coll'] if h.mpirun else GROUPS):
        p = h.run(per_host, [prog, g])
        if p.returncode:
            fail('comm_check %s on %d hosts x %d nodes exited %d:\n%s' %
                 (g, h.n, per_host, p.returncode, p.stderr))
        print(p.stderr.strip().splitlines()[-1])


def case_2x2(a):
    h = Hosts(a.netns, 2, a.mpirun)
    try:
        check_peers(h, a.prog, 2)
        k, remote = 2, 2
        auto = stream_bytes(h, a.prog, 2, 'auto')
        tcp = stream_bytes(h, a.prog, 2, 'tcp')
        print('tx bytes per host (eth0, lo): auto %s, tcp %s' % (auto, tcp))
        for i in range(h.n):
            if auto[i][0] < k * remote * STREAM_BYTES:
                fail('host %d sent %d bytes through its veth, fewer than the '
                     '%d its nodes put to the other host' %
                     (i, auto[i][0], k * remote * STREAM_BYTES))
            if auto[i][1] >= MIB:
                fail('host %d sent %d bytes through loopback with '
                     'OMPDSM_TRANSPORT=auto: its two nodes did not use shm' %
                     (i, auto[i][1]))
            if tcp[i][1] < k * (k - 1) * STREAM_BYTES:
                fail('host %d sent only %d bytes through loopback with '
                     'OMPDSM_TRANSPORT=tcp (expected %d): the counters do not '
                     'see the traffic' % (i, tcp[i][1], k * (k - 1) * STREAM_BYTES))
        check_groups(h, a.prog, 2)
        p = h.run(2, [a.prog, 'barrier'], transport='shm')
        if p.returncode == 0 or 'OMPDSM_TRANSPORT=shm needs every node on one ' \
                'host' not in p.stderr or 'network namespace' not in p.stderr:
            fail('OMPDSM_TRANSPORT=shm across hosts: status %d, output:\n%s' %
                 (p.returncode, p.stderr))
    finally:
        h.down()


def case_4x1(a):
    h = Hosts(a.netns, 4, a.mpirun)
    try:
        check_peers(h, a.prog, 1)
        check_groups(h, a.prog, 1)
    finally:
        h.down()


def add_second_network(h):
    br = h.prefix + '-br'
    subprocess.run(['ip', '-n', br, 'link', 'add', 'br1', 'type', 'bridge'],
                   check=True)
    subprocess.run(['ip', '-n', br, 'link', 'set', 'br1', 'up'], check=True)
    for i in range(h.n):
        ns = '%s-h%d' % (h.prefix, i)
        for cmd in (['ip', '-n', ns, 'link', 'add', 'eth1', 'type', 'veth',
                     'peer', 'name', 'w%d' % i, 'netns', br],
                    ['ip', '-n', ns, 'addr', 'add', '10.98.0.%d/24' % (i + 1),
                     'dev', 'eth1'],
                    ['ip', '-n', ns, 'link', 'set', 'eth1', 'up'],
                    ['ip', '-n', br, 'link', 'set', 'w%d' % i, 'master', 'br1'],
                    ['ip', '-n', br, 'link', 'set', 'w%d' % i, 'up']):
            subprocess.run(cmd, check=True)


def iface_run(h, prog, iface):
    """Runs comm_check stream with OMPDSM_IFACE=iface on 2 x 1 nodes;
    returns (addresses the nodes listened on, per-host tx bytes of eth0 and
    eth1)."""
    if iface:
        os.environ['OMPDSM_IFACE'] = iface
    else:
        os.environ.pop('OMPDSM_IFACE', None)
    before = [(h.tx_bytes(i, 'eth0'), h.tx_bytes(i, 'eth1')) for i in range(h.n)]
    p = h.run(1, [prog, 'stream'], trace=True)
    os.environ.pop('OMPDSM_IFACE', None)
    if p.returncode:
        fail('OMPDSM_IFACE=%s: comm_check stream exited %d:\n%s' %
             (iface, p.returncode, p.stderr))
    addrs = sorted(re.findall(r'tcp: listening on ([\d.]+):', p.stderr))
    return addrs, [(h.tx_bytes(i, 'eth0') - e0, h.tx_bytes(i, 'eth1') - e1)
                   for i, (e0, e1) in enumerate(before)]


def case_iface(a):
    h = Hosts(a.netns, 2)
    try:
        add_second_network(h)
        for iface, net, dev in ((None, '10.99.0.', 0),
                                ('eth1', '10.98.0.', 1),
                                ('10.98.0.0/24', '10.98.0.', 1)):
            addrs, tx = iface_run(h, a.prog, iface)
            print('OMPDSM_IFACE=%s: listened on %s; tx bytes (eth0, eth1) %s'
                  % (iface, addrs, tx))
            want = [net + '1', net + '2']
            if addrs != want:
                fail('OMPDSM_IFACE=%s: nodes listened on %s, expected %s' %
                     (iface, addrs, want))
            for i in range(h.n):
                if tx[i][dev] < STREAM_BYTES or tx[i][1 - dev] >= MIB:
                    fail('OMPDSM_IFACE=%s: host %d sent %s bytes through '
                         '(eth0, eth1), expected >= %d through eth%d only' %
                         (iface, i, tx[i], STREAM_BYTES, dev))
        for env, words in (({'OMPDSM_IFACE': 'eth9'},
                            ['OMPDSM_IFACE=eth9: no up interface', 'eth1 10.98.0.']),
                           ({'OMPDSM_IFACE': '10.97.0.0/16'},
                            ['OMPDSM_IFACE=10.97.0.0/16: no up interface']),
                           ({'OMPDSM_IFACE': '10.98.0.0/40'},
                            ["OMPDSM_IFACE='10.98.0.0/40' is neither"]),
                           ({'OMPDSM_IFACE': 'eth1', 'OMPDSM_TCP_ADDR': '10.97.0.1'},
                            ['cannot listen on 10.97.0.1 (OMPDSM_TCP_ADDR)'])):
            os.environ.update(env)
            p = h.run(1, [a.prog, 'barrier'], timeout=60)
            for k in env:
                os.environ.pop(k)
            if p.returncode == 0 or not all(w in p.stderr for w in words):
                fail('%s: status %d, expected a failure saying %s; output:\n%s'
                     % (env, p.returncode, words, p.stderr))
            print('%s: %s' % (env, [l for l in p.stderr.splitlines()
                                    if words[0] in l][0]))
    finally:
        h.down()


def build_id(path):
    out = subprocess.run(['readelf', '-n', path], capture_output=True,
                         text=True).stdout
    m = re.search(r'Build ID: ([0-9a-f]+)', out)
    return m.group(1) if m else None


def case_build(a):
    ida, idb = build_id(a.prog), build_id(a.prog_b)
    if not ida or not idb or ida == idb:
        fail('%s and %s must have two different GNU build ids (%s, %s)' %
             (a.prog, a.prog_b, ida, idb))
    h = Hosts(a.netns, 2)
    try:
        p = h.run(2, [a.prog, 'barrier'], other=a.prog_b, timeout=60)
        lines = [l for l in p.stderr.splitlines()
                 if 'runs a different executable' in l]
        print('\n'.join(lines))
        if p.returncode == 0 or len(lines) != 1:
            fail('two builds: status %d, %d lines saying "runs a different '
                 'executable" (want 1):\n%s' % (p.returncode, len(lines), p.stderr))
        for w in ('node 2 on host', '10.99.0.2', '10.99.0.1', a.prog_b,
                  ida[:40], idb[:40]):
            if w not in lines[0]:
                fail('the line does not name %r: %s' % (w, lines[0]))
    finally:
        h.down()


def case_omp(a):
    conf = os.path.join(HERE, '..', 'omp', 'conformance.py')
    h = Hosts(a.netns, 2)
    try:
        bad = []
        for src in a.src:
            launcher = '%s %s --prefix %s --per-host 2' % (sys.executable, NSRUN,
                                                         h.prefix)
            p = subprocess.run([sys.executable, conf, '--one', src, '--threads',
                                '4', '--transports', 'auto', '--ompcc', a.ompcc,
                                '--ompdsmrun', launcher, '--timeout', '120'],
                               capture_output=True, text=True)
            sys.stdout.write(p.stdout)
            if p.returncode:
                sys.stderr.write(p.stderr)
                bad.append(os.path.basename(src))
        if bad:
            fail('on 2 hosts x 2 nodes: %s' % ', '.join(bad))
    finally:
        h.down()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--case', required=True,
                    choices=['2x2', '4x1', 'iface', 'build', 'omp'])
    ap.add_argument('--prog-b', help='comm_check_b')
    ap.add_argument('--prog', help='comm_check')
    ap.add_argument('--ompcc')
    ap.add_argument('--src', nargs='*', default=[])
    ap.add_argument('--netns', default=os.path.join(HERE, '..', 'cluster',
                                                    'netns.sh'))
    ap.add_argument('--mpirun', help='start the nodes with this mpirun')
    ap.add_argument('--pmix', default='1', help='0: built without PMIx')
    a = ap.parse_args()
    if a.mpirun is not None and not (a.mpirun and os.access(a.mpirun, os.X_OK)):
        print('mpirun (Open MPI) not found; skipping', file=sys.stderr)
        sys.exit(77)
    if a.mpirun is not None and a.pmix != '1':
        print('libompdsm was built without PMIx (libpmix-dev); skipping',
              file=sys.stderr)
        sys.exit(77)
    {'2x2': case_2x2, '4x1': case_4x1, 'iface': case_iface,
     'build': case_build, 'omp': case_omp}[a.case](a)


if __name__ == '__main__':
    main()
