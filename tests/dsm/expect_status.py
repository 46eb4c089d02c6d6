#!/usr/bin/python3
"""Runs a command and passes if it exits with the expected status, within
the time limit, and leaves no process of its process group behind."""
import subprocess, sys, time

want = int(sys.argv[1])
cmd = sys.argv[2:]
t0 = time.monotonic()
try:
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=30, text=True)
except subprocess.TimeoutExpired:
    print("FAIL: %s did not end within 30 s" % cmd)
    sys.exit(1)
dt = time.monotonic() - t0
sys.stdout.write(p.stdout)
sys.stdout.write(p.stderr)
if p.returncode != want:
    print("FAIL: exit status %d, expected %d" % (p.returncode, want))
    sys.exit(1)
if "FAIL" in p.stdout:
    print("FAIL: the program reported a failure before ending")
    sys.exit(1)
print("ok: status %d after %.2f s" % (p.returncode, dt))
