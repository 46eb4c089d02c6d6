#!/bin/sh
# tests/slurm/srun_np.sh - `srun --mpi=pmix -n N PROG...` spelled as the
# test drivers spell a launcher, `LAUNCHER -np N PROG...`
# (tests/omp/conformance.py, tests/comm/comm_fail.py).  --kill-on-bad-exit:
# a node that dies ends the step at once, as under ompdsmrun and mpirun.
[ "$1" = -np ] || { echo "srun_np.sh: usage: srun_np.sh -np N PROG [ARG...]" >&2; exit 2; }
n=$2
shift 2
exec srun --mpi=pmix --kill-on-bad-exit=1 -n "$n" "$@"
