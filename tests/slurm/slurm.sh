#!/bin/sh
# tests/slurm/slurm.sh - a one-machine Slurm for the tests, run as root with
# nothing of the machine's own set-up touched: munged, slurmctld and slurmd
# all live in DIR (config, keys, sockets, state, logs) and listen on
# loopback ports chosen here.
#
#   slurm.sh up DIR     start them; prints SLURM_CONF=DIR/slurm.conf, which
#                       srun and sinfo need in their environment; waits
#                       until the node is idle (at most 30 s)
#   slurm.sh down DIR   stop them (by the pids in DIR) and remove DIR
#   slurm.sh check      exit 0 if Slurm with its mpi/pmix plugin and munge
#                       are installed and we are root; else the reason on
#                       stderr and exit 77
#
# The node is this host under its short name with 8 CPUs whatever the
# machine has (SlurmdParameters=config_overrides): srun -n 4 on 2 cores
# must not wait for CPUs.
set -u

die() { echo "slurm.sh: $*" >&2; exit 1; }

check() {
    [ "$(id -u)" = 0 ] || { echo "slurm.sh: not root: cannot start slurmd" >&2; exit 77; }
    for p in srun slurmctld slurmd munged sinfo; do
        command -v "$p" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin"
        command -v "$p" >/dev/null 2>&1 || {
            echo "slurm.sh: $p not found (Debian: apt-get install slurmd slurmctld slurm-client munge)" >&2
            exit 77; }
    done
    srun --mpi=list 2>/dev/null | grep -q pmix || \
        ls /usr/lib/*/slurm-wlm/mpi_pmix.so >/dev/null 2>&1 || {
        echo "slurm.sh: Slurm has no mpi/pmix plugin (slurm-wlm-basic-plugins built without PMIx)" >&2
        exit 77; }
    exit 0
}

freeport() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

up() {
    d=$1
    mkdir -p "$d" || die "cannot create $d"
    d=$(cd "$d" && pwd)
    PATH="$PATH:/usr/sbin"
    mkdir -p "$d/ctld" "$d/spool" "$d/munge"
    chmod 700 "$d/munge"
    # A key of our own: the machine's /etc/munge/munge.key may not exist.
    head -c 1024 /dev/urandom > "$d/munge/key"
    chmod 400 "$d/munge/key"
    munged --force --socket="$d/munge/sock" --key-file="$d/munge/key" \
        --pid-file="$d/munge/pid" --log-file="$d/munge/log" \
        --seed-file="$d/munge/seed" || die "munged did not start: $(tail -3 "$d/munge/log" 2>/dev/null)"
    host=$(hostname -s)
    cport=$(freeport)
    dport=$(freeport)
    cat > "$d/slurm.conf" <<EOF
ClusterName=ompdsmtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$cport
SlurmdPort=$dport
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/sock
StateSaveLocation=$d/ctld
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
PlugStackConfig=$d/plugstack.conf
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    : > "$d/plugstack.conf"
    export SLURM_CONF="$d/slurm.conf"
    slurmctld -f "$SLURM_CONF" || die "slurmctld did not start: $(tail -3 "$d/slurmctld.log" 2>/dev/null)"
    slurmd -f "$SLURM_CONF" || die "slurmd did not start: $(tail -3 "$d/slurmd.log" 2>/dev/null)"
    i=0
    while [ $i -lt 300 ]; do
        st=$(sinfo -h -o %t 2>/dev/null)
        case "$st" in idle*) echo "SLURM_CONF=$SLURM_CONF"; return 0;; esac
        sleep 0.1
        i=$((i + 1))
    done
    echo "slurm.sh: the node is not idle after 30 s (state '$st'); logs:" >&2
    tail -5 "$d/slurmctld.log" "$d/slurmd.log" >&2
    down "$d"
    exit 1
}

stop_pid() {
    [ -f "$1" ] || return 0
    pid=$(cat "$1")
    [ -n "$pid" ] || return 0
    kill "$pid" 2>/dev/null || return 0
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$pid" 2>/dev/null
    return 0
}

down() {
    d=$1
    [ -d "$d" ] || return 0
    stop_pid "$d/slurmd.pid"
    stop_pid "$d/slurmctld.pid"
    stop_pid "$d/munge/pid"
    rm -rf "$d"
}

case "${1:-}" in
up) [ $# -eq 2 ] || die "usage: slurm.sh up DIR"; up "$2" ;;
down) [ $# -eq 2 ] || die "usage: slurm.sh down DIR"; down "$2" ;;
check) check ;;
*) die "usage: slurm.sh up DIR | down DIR | check" ;;
esac
