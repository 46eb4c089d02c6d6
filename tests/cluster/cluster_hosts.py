"""tests/cluster/cluster_hosts.py - what every cluster test case shares:
hosts made of network namespaces (tests/cluster/netns.sh) and deleted on
exit, ompdsmrun started inside host 0's namespace with netns.sh as
OMPDSM_RSH, waits with deadlines on a job's status and output, the
processes and /dev/shm files a job must not leave, and the programs the
cases build with ompcc.

cluster_test.py sets ARGS (in place) and PREFIX before a case runs; case
modules read PREFIX as cluster_hosts.PREFIX, which is assigned then.
"""

import argparse
import os
import re
import select
import signal
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NETNS = os.path.join(HERE, "netns.sh")

# The command line (cluster_test.py), filled in place before a case runs.
ARGS = argparse.Namespace()
# This test's namespaces are PREFIX-h0, PREFIX-h1, ... and PREFIX-br.
PREFIX = None
# /dev/shm before the test: nothing_left() looks for files beyond these.
SHM_BEFORE = set()


class TestFailure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


def addr(i):
    return "10.99.0.%d" % (i + 1)


def sh(*cmd, check_rc=True, timeout=30):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    if check_rc and p.returncode != 0:
        raise TestFailure("%s failed (%d): %s" % (" ".join(cmd), p.returncode,
                                                  p.stderr.decode().strip()))
    return p


class Hosts:
    """A set of namespace hosts, deleted on exit (also on SIGTERM, which
    meson sends at a timeout)."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        sh("sh", NETNS, "up", PREFIX, str(self.n))
        return self

    def __exit__(self, *exc):
        down()
        return False


def down():
    subprocess.run(["sh", NETNS, "down", PREFIX], timeout=30,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def job_env(extra=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPDSM_", "OMP_"))}
    env["OMPDSM_RSH"] = NETNS + " rsh"
    env["OMPDSM_NETNS_PREFIX"] = PREFIX
    env.update(extra or {})
    return env


def launcher_cmd(args):
    return ["ip", "netns", "exec", PREFIX + "-h0", ARGS.ompdsmrun] + args


def start(args, extra_env=None, cwd=None):
    return subprocess.Popen(launcher_cmd(args), env=job_env(extra_env),
                            cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def finish(p, timeout):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate(timeout=10)
        raise TestFailure("the job did not end within %g s" % timeout)
    return p.returncode, out.decode(errors="replace"), \
        err.decode(errors="replace")


def reap(p):
    """Ends job p with its process group if it still runs (a check failed
    before it ended): for the finally of every started job."""
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate(timeout=10)


def kill_and_finish(p, pid, timeout=20):
    """SIGKILL to pid (a node or agent of job p), then p's end: (status,
    stdout, stderr, seconds from the kill to the end)."""
    t0 = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    rc, out, err = finish(p, timeout)
    return rc, out, err, time.monotonic() - t0


def run(args, extra_env=None, timeout=60, cwd=None):
    t0 = time.monotonic()
    p = start(args, extra_env, cwd)
    rc, out, err = finish(p, timeout)
    return rc, out, err, time.monotonic() - t0


def one_line(err, pattern):
    lines = [l for l in err.splitlines() if l.startswith("ompdsmrun:")]
    check(len(lines) == 1, "expected one ompdsmrun line, got %r" % err)
    check(re.search(pattern, lines[0]),
          "message %r does not match %r" % (lines[0], pattern))


def ns_pids(i):
    p = sh("ip", "netns", "pids", "%s-h%d" % (PREFIX, i), check_rc=False)
    return [int(x) for x in p.stdout.split()]


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "(gone)"


def nothing_left(nhosts, grace=3.0):
    """No process in any host namespace (after a short grace for the
    kernel to reap), and no ompdsm file in /dev/shm that was not there."""
    deadline = time.monotonic() + grace
    while True:
        left = {i: ns_pids(i) for i in range(nhosts)}
        left = {i: p for i, p in left.items() if p}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    check(not left, "processes left behind: %s" % {
        i: [(p, cmdline(p)) for p in ps] for i, ps in left.items()})
    shm = [f for f in os.listdir("/dev/shm") if "ompdsm" in f and
           f not in SHM_BEFORE]
    check(not shm, "files left in /dev/shm: %s" % shm)


def wait_ready(p_out_lines, want, timeout=20):
    """Reads 'ready rank=' lines of testnode sleep from the job's stdout
    until want ranks said so."""
    ranks = set()
    deadline = time.monotonic() + timeout
    buf = b""
    fd = p_out_lines.stdout.fileno()
    while len(ranks) < want:
        left = deadline - time.monotonic()
        check(left > 0, "only ranks %s became ready" % sorted(ranks))
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            rc, _, err = finish(p_out_lines, 10)
            raise TestFailure("the job ended (status %d) before its nodes "
                              "were ready: %r" % (rc, err))
        buf += chunk
        for m in re.finditer(rb"ready rank=(\d+) pid=(\d+)", buf):
            ranks.add(int(m.group(1)))
    return ranks


def argv_of(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().decode(errors="replace").split("\0")
    except OSError:
        return []


def agent_pids(host):
    """The agents in host's namespace (not the shells that start them)."""
    return [p for p in ns_pids(host)
            if argv_of(p)[:2] == [ARGS.ompdsmrun, "--agent"]]


def eth0_bytes(i):
    """(rx, tx) byte counters of host i's eth0."""
    out = sh("ip", "-n", "%s-h%d" % (PREFIX, i), "-s", "link", "show",
             "eth0").stdout.decode()
    lines = out.splitlines()
    rx = int(lines[lines.index([l for l in lines if "RX:" in l][0]) + 1]
             .split()[0])
    tx = int(lines[lines.index([l for l in lines if "TX:" in l][0]) + 1]
             .split()[0])
    return rx, tx


def build_dsm_loop(d, variant=None):
    """tests/cluster/dsm_loop.c built by ompcc into d."""
    check(ARGS.ompcc, "--ompcc is needed")
    prog = os.path.join(d, "dsm_loop" + (variant or ""))
    cmd = [ARGS.ompcc, "-O1", os.path.join(HERE, "dsm_loop.c"), "-o", prog]
    if variant:
        cmd.insert(2, "-DDSM_LOOP_VARIANT=\"%s\"" % variant)
    c = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=120)
    check(c.returncode == 0, "ompcc: %s" % c.stdout.decode())
    return prog


def read_until(p, word, timeout):
    """Reads the job's stdout until word; returns what was read."""
    buf = b""
    deadline = time.monotonic() + timeout
    while word.encode() not in buf:
        check(time.monotonic() < deadline, "no %r within %g s: %r" %
              (word, timeout, buf))
        r, _, _ = select.select([p.stdout], [], [], 0.5)
        if r:
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                rc, _, err = finish(p, 10)
                raise TestFailure("the job ended (status %d) before %r: %r %r"
                                  % (rc, word, buf, err))
            buf += chunk
    return buf

