#!/usr/bin/env python3
"""tests/runtime/wait_test.py - OMP_WAIT_POLICY (docs/env.md): rt_wait makes
node 0 wait about 20 ms in each of 10 barriers while node 1 sleeps; the
statistics count how often node 0's waits slept (comm_sleeps).  passive:
every such wait sleeps; active: none does (it spins up to 100 ms); an
invalid value stops the job naming the variable.  Over shm with 2 nodes
(one CPU each when the machine has two: active spins only then).  It
failed while the variable was ignored.

usage: wait_test.py OMPDSMRUN RT_WAIT"""
import json
import os
import subprocess
import sys
import tempfile


def run(launcher, prog, env):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("OMP_", "OMPDSM_"))}
    e["OMPDSM_TRANSPORT"] = "shm"
    e.update(env)
    with tempfile.TemporaryDirectory() as d:
        js = os.path.join(d, "stats.json")
        e["OMPDSM_STATS"] = js
        p = subprocess.run([launcher, "--timeout", "60", "-np", "2", prog],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, env=e, timeout=90)
        st = None
        if p.returncode == 0 and os.path.exists(js):
            with open(js) as f:
                st = json.load(f)
    return p.returncode, p.stderr.decode(errors="replace"), st


def main():
    launcher, prog = sys.argv[1], sys.argv[2]
    bad = []
    sleeps = {}
    for pol in ("passive", "active", "PASSIVE"):
        rc, err, st = run(launcher, prog, {"OMP_WAIT_POLICY": pol})
        if rc != 0 or not st:
            bad.append("%s: status %d\n%s" % (pol, rc, err))
            continue
        sleeps[pol] = st["per_node"][0]["comm_sleeps"]
        print("OMP_WAIT_POLICY=%s: node 0 slept %d times" % (pol, sleeps[pol]))
    if "passive" in sleeps and sleeps["passive"] < 10:
        bad.append("passive: node 0 slept %d times in 10 waits of 20 ms"
                   % sleeps["passive"])
    if "PASSIVE" in sleeps and sleeps["PASSIVE"] < 10:
        bad.append("PASSIVE (any case): node 0 slept %d times"
                   % sleeps["PASSIVE"])
    # a little slack: a wait spun out under a loaded machine may sleep
    if "active" in sleeps and sleeps["active"] > 3:
        bad.append("active: node 0 slept %d times in 10 waits of 20 ms "
                   "(expected to spin)" % sleeps["active"])
    rc, err, _ = run(launcher, prog, {"OMP_WAIT_POLICY": "busy"})
    if rc == 0 or "OMP_WAIT_POLICY='busy' is not valid" not in err:
        bad.append("OMP_WAIT_POLICY=busy: status %d, expected a message "
                   "naming it\n%s" % (rc, err))
    for b in bad:
        print("FAIL: " + b)
    print("%s wait_test" % ("FAIL" if bad else "PASS"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
