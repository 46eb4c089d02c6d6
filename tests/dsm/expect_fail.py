#!/usr/bin/python3
"""Runs a command that must fail: passes if it exits with a non-zero status
within 60 s and its output contains the expected text (argv[1])."""
import subprocess, sys

want = sys.argv[1]
cmd = sys.argv[2:]
try:
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=60, text=True)
except subprocess.TimeoutExpired:
    print("FAIL: %s did not end within 60 s" % cmd)
    sys.exit(1)
sys.stdout.write(p.stdout)
if p.returncode == 0:
    print("FAIL: the command succeeded; it should have failed")
    sys.exit(1)
if want not in p.stdout:
    print("FAIL: the output does not say %r" % want)
    sys.exit(1)
print("ok: failed with status %d, saying %r" % (p.returncode, want))
