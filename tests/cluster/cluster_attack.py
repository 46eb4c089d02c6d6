"""tests/cluster/cluster_attack.py - the cluster test case `attack`:
strangers' connections (tests/cluster/attack.py) to every socket a running
job listens on, each accepted one refused with one line naming it.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

import cluster_hosts as hosts
from cluster_hosts import (HERE, NETNS, check, addr, sh, Hosts, start, finish,
                           reap, nothing_left, build_dsm_loop, read_until)


ATTACK = os.path.join(HERE, "attack.py")
# A refusal line: the launcher's, an agent's (host H) or a node's (node K).
REFUSED = re.compile(r"^(?:ompdsmrun: (?:host (\S+): )?bootstrap|"
                     r"ompdsm: node (\d+): warning: tcp): refused a "
                     r"connection from (\d+\.\d+\.\d+\.\d+:\d+): ", re.M)


def listening(i):
    """ip:port:dialect of every TCP socket listening in host i: boot for
    the launcher's and agents' (ompdsmrun), tcp for the nodes'."""
    out = sh("ip", "netns", "exec", "%s-h%d" % (hosts.PREFIX, i), "ss",
             "-Htlnp", check_rc=False).stdout.decode()
    found = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 4:
            continue
        # Without its process (ss read the socket before the process's
        # descriptors), a socket cannot be told apart: it is taken at the
        # next poll.  Once an agent's bootstrap socket listed that way
        # was taken for a node's, and the refusal its garbage got was
        # logged as the agent's ("logged 0 times, expected 1").
        if "users:" not in line:
            continue
        dialect = "boot" if '"ompdsmrun"' in line else "tcp"
        found.add("%s:%s" % (f[3], dialect))
    return found


def attacker(ns, args, nobody=False):
    """attack.py in host ns's namespace, as user nobody when asked."""
    cmd = ["ip", "netns", "exec", "%s-h%d" % (hosts.PREFIX, ns)]
    if nobody:
        cmd += ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return subprocess.Popen(cmd + [sys.executable, ATTACK] + args,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def results(procs, timeout=60):
    recs = []
    for a in procs:
        out, err = a.communicate(timeout=timeout)
        check(a.returncode == 0, "attack.py failed: %s" % err.decode())
        recs += [json.loads(l) for l in out.decode().splitlines() if l]
    return recs


def test_attack():
    """Connections from a stranger to every socket a job listens on (the
    launcher's and the agents' bootstrap sockets, and the nodes' tcp
    listeners while the nodes connect: one host's agent starts 4 s late to
    hold them open), from another namespace and from user nobody in the
    socket's own: random bytes, a forged HELLO, one node too many, a forged
    ABORT, a silent connection, and a handshake captured on the wire and
    replayed.  The job must finish and verify, and each connection that
    was accepted must be refused with exactly one line naming its
    address."""
    with tempfile.TemporaryDirectory() as d, Hosts(4):
        os.chmod(d, 0o755)
        prog = build_dsm_loop(d)
        slow = os.path.join(d, "slow-rsh")
        with open(slow, "w") as f:
            f.write('#!/bin/sh\n[ "$1" = %s ] && sleep 4\nexec %s rsh "$@"\n'
                    % (addr(2), NETNS))
        os.chmod(slow, 0o755)
        sniffers = [attacker(i, ["sniff", "lo", "20"]) for i in (0, 1)]
        time.sleep(0.5)
        hl = "%s:2,%s:2,%s" % (addr(0), addr(1), addr(2))
        p = start(["-H", hl, prog, "400"], {"OMPDSM_RSH": slow}, cwd=d)
        procs, seen = [], set()
        try:
            # While the nodes of hosts 0 and 1 wait for host 2's, every
            # socket they listen on is attacked as soon as it appears.
            t0 = time.monotonic()
            while time.monotonic() - t0 < 3.0:
                for i in (0, 1):
                    new = listening(i) - seen
                    if new:
                        seen |= new
                        procs.append(attacker(3, ["hit"] + sorted(new)))
                        procs.append(attacker(i, ["hit", "--kinds",
                                                  "garbage,hello,abort"] +
                                              sorted(new), nobody=True))
                time.sleep(0.1)
            tcp_ports = [t for t in seen if t.endswith(":tcp")]
            check(len(tcp_ports) >= 2 and any(t.endswith(":boot")
                                              for t in seen),
                  "the nodes' and the launcher's sockets were not all seen "
                  "listening: %s" % sorted(seen))
            read_until(p, "running", 60)
            # The job runs: its bootstrap sockets again, and the answers
            # captured on hosts 0 and 1 replayed on new connections.
            caught = results(sniffers)
            check(caught, "no handshake was captured")
            boot = set()
            for i in (0, 1, 2):
                boot |= {t for t in listening(i) if t.endswith(":boot")}
            procs.append(attacker(3, ["hit"] + sorted(boot)))
            for c in caught:
                ns = int(c["acceptor"].split(".")[3].split(":")[0]) - 1
                target = c["acceptor"] + ":boot"
                for nobody, where in ((False, 3), (True, ns)):
                    procs.append(attacker(where, ["hit", "--kinds", "replay",
                                                  "--replay", c["answer"],
                                                  target], nobody=nobody))
            recs = results(procs)
            rc, out, err = finish(p, 120)
        finally:
            reap(p)
        sys.stdout.write(err)
        check(rc == 0, "the attacked job ended with status %d" % rc)
        check("sum 79800" in out, "the attacked job's result: %r" % out)
        # Which socket refused (its host's address and dialect) and whom:
        # two of our connections to different hosts, or to an agent's and a
        # node's socket of one host, may share a local port.
        logged = {}
        for m in REFUSED.finditer(err):
            if m.group(2):       # node K: 2 nodes a host, in rank order
                host, kind = addr(int(m.group(2)) // 2), "tcp"
            else:                # an agent's host, or the launcher's
                host, kind = m.group(1) or addr(0), "boot"
            key = (host, kind, m.group(3))
            logged[key] = logged.get(key, 0) + 1
        accepted = [r for r in recs if r["challenge"]]
        kinds = {}
        for r in recs:
            kinds.setdefault(r["kind"], [0, 0])[0 if r["challenge"] else 1] += 1
        print("attacks (accepted, refused by the kernel): %s; %d captured "
              "handshakes replayed" % (kinds, len(caught)))
        for r in recs:
            want = 1 if r["challenge"] else 0
            host, _, kind = r["target"].split(":")
            got = logged.pop((host, kind, r.get("local")), 0)
            check(got == want, "%s %s from %s: logged %d times, expected %d"
                  % (r["kind"], r["target"], r.get("local"), got, want))
            check(not r["challenge"] or r["closed"],
                  "%s %s was not closed" % (r["kind"], r["target"]))
        check(not logged, "refusals of connections nobody made: %s" % logged)
        check(len(accepted) >= 20 and "replay" in kinds and
              kinds["replay"][0] >= 2,
              "too few attacks reached the sockets: %s" % kinds)
        nothing_left(4)
