#!/usr/bin/python3
"""tests/comm/comm_fail.py - failure tests of the tcp transport.

Nodes run `comm_check barrier-loop DIR` (barriers back to back, each node
writes DIR/pid.R first).  Then one node is killed with SIGKILL.

  --launcher L   the job runs under `L -np N` (L split into words: mpirun
                 and its options, for the PMIx start-up): it must end with a
                 non-zero status within 5 s and leave no node process behind;
                 with --names-victim its stderr must name the killed node
                 ("node R" or "rank R").
  --own-boot     this script is the bootstrap server (comm/boot_proto.h) and
                 never kills anybody, so the survivors must notice the loss
                 themselves: each must exit non-zero within 5 s and say which
                 node was lost.
  --lose-launcher  (with --own-boot) instead of killing a node, the bootstrap
                 server closes its connections: every node must exit
                 non-zero within 5 s.
Exit status 0 on success, 1 on failure (77 would mean skip)."""
import argparse
import hashlib
import hmac
import os
import re
import shlex
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

LIMIT = 5.0


def fail(msg):
    print('FAIL: ' + msg, file=sys.stderr)
    sys.exit(1)


def alive(pid):
    """True when pid runs (a zombie does not count)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def wait_pids(d, n, timeout=30.0):
    t0 = time.time()
    while time.time() - t0 < timeout:
        pids = {}
        for r in range(n):
            try:
                with open(os.path.join(d, 'pid.%d' % r)) as f:
                    pids[r] = int(f.read())
            except (FileNotFoundError, ValueError):
                break
        if len(pids) == n:
            return pids
        time.sleep(0.02)
    fail('the %d nodes did not all start within %.0f s' % (n, timeout))


def recvall(c, k):
    b = b''
    while len(b) < k:
        x = c.recv(k - len(b))
        if not x:
            raise EOFError
        b += x
    return b


def auth_mac(key, label, kind, nonce_a, nonce_c):
    """comm/util/auth.c's HMAC-SHA256 of the handshake."""
    msg = label.encode().ljust(16, b'\0') + bytes([kind]) + nonce_a + nonce_c
    return hmac.new(key, msg, hashlib.sha256).digest()


def auth_accept(c, key, kind=1):
    """The acceptor's side of comm/util/auth.h's handshake on socket c:
    True when the connector holds key (the proof is then sent)."""
    nonce_a = os.urandom(32)
    c.sendall(b'OMPDSMA1' + nonce_a)
    resp = recvall(c, 64)
    nonce_c = resp[:32]
    if not hmac.compare_digest(
            resp[32:], auth_mac(key, 'ompdsm-connector', kind, nonce_a,
                                nonce_c)):
        return False
    c.sendall(auth_mac(key, 'ompdsm-acceptor', kind, nonce_a, nonce_c))
    return True


class BootServer:
    """The launcher's side of comm/boot_proto.h, minus ending the job, with
    a key of its own (its nodes get self.env_key() in their environment).
    Listens on addr (tests/comm/nsrun.py uses a test host's address)."""

    def __init__(self, n, addr='127.0.0.1'):
        self.n = n
        self.key = os.urandom(32)
        self.ls = socket.socket()
        self.ls.bind((addr, 0))
        self.ls.listen(256)
        self.port = self.ls.getsockname()[1]
        self.conns = {}
        self.rounds = {}
        self.aborts = []
        self.lock = threading.Lock()
        threading.Thread(target=self.acceptor, daemon=True).start()

    def acceptor(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def env_key(self):
        return {'OMPDSM_JOB_KEY': self.key.hex()}

    def serve(self, c):
        rank = None
        try:
            if not auth_accept(c, self.key):
                c.close()
                return
            while True:
                t, ln = struct.unpack('II', recvall(c, 8))
                d = recvall(c, ln)
                if t == 1:
                    rank = struct.unpack('IIiiiI', d[:24])[2]
                    with self.lock:
                        self.conns[rank] = c
                elif t == 2:
                    with self.lock:
                        self.rounds[rank] = d
                        if len(self.rounds) == self.n:
                            res = b''.join(self.rounds[i] for i in range(self.n))
                            self.rounds.clear()
                            for i in range(self.n):
                                self.conns[i].sendall(struct.pack('II', 3, len(res)) + res)
                elif t == 4:
                    self.aborts.append((rank, d[16:].decode(errors='replace')))
                elif t == 5:
                    return
        except (EOFError, OSError):
            return

    def close_all(self):
        with self.lock:
            for c in self.conns.values():
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                c.close()
        self.ls.close()


def run_launcher(a, d):
    victim = a.np // 2
    cmd = shlex.split(a.launcher) + ['-np', str(a.np), a.prog, 'barrier-loop', d]
    job = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    pids = wait_pids(d, a.np)
    time.sleep(0.3)
    if job.poll() is not None:
        fail('the job ended before the kill (status %d)' % job.returncode)
    t0 = time.time()
    os.kill(pids[victim], signal.SIGKILL)
    try:
        _, err = job.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        job.kill()
        for p in pids.values():
            if alive(p):
                os.kill(p, signal.SIGKILL)
        fail('the job was still running %.0f s after node %d was killed' %
             (LIMIT, victim))
    dt = time.time() - t0
    sys.stderr.write(err)
    if job.returncode == 0:
        fail('the job exited 0 after node %d was killed' % victim)
    if a.names_victim and not re.search(r'\b(node|rank) %d\b' % victim, err):
        fail('nothing on stderr names node %d, the one killed' % victim)
    time.sleep(0.2)
    left = [r for r, p in pids.items() if alive(p)]
    for r in left:
        os.kill(pids[r], signal.SIGKILL)
    if left:
        fail('nodes %s still ran after the job ended' % left)
    print('job ended with status %d %.2f s after node %d was killed' %
          (job.returncode, dt, victim))


def run_own_boot(a, d):
    srv = BootServer(a.np)
    env = dict(os.environ, OMPDSM_SIZE=str(a.np),
               OMPDSM_BOOT='127.0.0.1:%d' % srv.port, OMPDSM_JOBID='fail%d' % os.getpid(),
               OMPDSM_LOCAL_SIZE=str(a.np), **srv.env_key())
    procs = []
    for r in range(a.np):
        e = dict(env, OMPDSM_RANK=str(r), OMPDSM_LOCAL_RANK=str(r))
        procs.append(subprocess.Popen([a.prog, 'barrier-loop', d], env=e,
                                      stderr=subprocess.PIPE, text=True))
    try:
        wait_pids(d, a.np)
        time.sleep(0.3)
        victim = a.np // 2
        t0 = time.time()
        if a.lose_launcher:
            srv.close_all()
            survivors = list(range(a.np))
            what = 'the bootstrap server closed its connections'
        else:
            procs[victim].kill()
            survivors = [r for r in range(a.np) if r != victim]
            what = 'node %d was killed' % victim
        bad = []
        for r in survivors:
            try:
                procs[r].wait(timeout=max(0.1, LIMIT - (time.time() - t0)))
            except subprocess.TimeoutExpired:
                bad.append('node %d still ran %.0f s after %s' % (r, LIMIT, what))
                continue
            err = procs[r].stderr.read()
            sys.stderr.write(err)
            if procs[r].returncode == 0:
                bad.append('node %d exited 0 after %s' % (r, what))
            elif not a.lose_launcher and 'node %d' % victim not in err:
                bad.append('node %d did not name the lost node %d' % (r, victim))
        if bad:
            fail('; '.join(bad))
        print('every node ended non-zero %.2f s after %s' % (time.time() - t0, what))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--np', type=int, default=4)
    ap.add_argument('--prog', required=True)
    ap.add_argument('--launcher')
    ap.add_argument('--own-boot', action='store_true')
    ap.add_argument('--lose-launcher', action='store_true')
    ap.add_argument('--names-victim', action='store_true')
    a = ap.parse_args()
    os.environ['OMPDSM_TRANSPORT'] = os.environ.get('OMPDSM_TRANSPORT', 'tcp')
    with tempfile.TemporaryDirectory(prefix='comm-fail-') as d:
        if a.own_boot:
            run_own_boot(a, d)
        else:
            run_launcher(a, d)


if __name__ == '__main__':
    main()
