#!/bin/sh
# bench/harness/slowwrap.sh CGROUP_DIR PROGRAM [ARGS...]
# The program that ompdsmrun starts on every node in the harness's "node 1
# slowed" runs: node 1 (OMPDSM_RANK=1) puts itself into the cgroup v1 cpu
# group CGROUP_DIR (whose cpu.cfs_quota_us throttles it) before it becomes
# the kernel; every other node just becomes the kernel.  exec keeps the pid,
# the environment and the personality (no address randomisation) that
# ompdsmrun gave the node.
g=$1
shift
if [ "${OMPDSM_RANK:-}" = 1 ]; then
    echo $$ > "$g/cgroup.procs" || { echo "slowwrap: cannot join $g" >&2; exit 97; }
fi
exec "$@"
