#!/bin/sh
# tests/comm/mpi_rsh.sh - mpirun's plm_rsh_agent for the namespace test
# hosts: tests/cluster/netns.sh rsh, giving each host a temporary directory
# of its own, as separate machines have.  Open MPI's daemons that share
# /tmp race to create their session directory ("mkdir ... File exists").
#   mpi_rsh.sh HOST WORD...   (OMPDSM_NETNS_PREFIX names the set of hosts)
set -eu
host=$1
shift
d=${TMPDIR:-/tmp}/ompdsm-mpi-${OMPDSM_NETNS_PREFIX:?set OMPDSM_NETNS_PREFIX}-$host
exec sh "$(dirname "$0")/../cluster/netns.sh" rsh "$host" \
    "mkdir -p $d; TMPDIR=$d; export TMPDIR;" "$@"
