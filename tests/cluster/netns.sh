#!/bin/sh
# tests/cluster/netns.sh - several test "hosts" on this machine, each a
# Linux network namespace with its own address, joined by veth pairs to a
# bridge that lives in a namespace of its own.  Nothing touches the root
# namespace's interfaces or routes, so no traffic can leave the machine.
#
#   netns.sh up PREFIX N      make PREFIX-br and hosts PREFIX-h0..h(N-1);
#                             host i has 10.99.0.(i+1)/24 on its eth0 and
#                             lo up; prints the addresses, one a line
#   netns.sh down PREFIX      delete every namespace named PREFIX-*
#   netns.sh addr PREFIX I    the address of host I
#   netns.sh ns ADDR          the namespace that owns ADDR (among *-h*)
#   netns.sh rsh HOST WORD... run WORD... (joined by spaces, as ssh does)
#                             through sh -c in the namespace owning HOST;
#                             the OMPDSM_RSH of the multi-host tests
#   netns.sh check            exit 77 with a reason when namespaces cannot
#                             be made here (not root, no ip(8))
#
# With OMPDSM_NETNS_HIDE=HOST:DIR, `rsh HOST` runs its command in a mount
# namespace of its own where an empty tmpfs covers DIR: a directory (or a
# program) that exists on the other hosts but not on HOST, as on a real
# cluster whose file systems differ.  With OMPDSM_NETNS_SWAP=HOST:FILE:OTHER
# the file OTHER is bind-mounted over FILE there instead: another binary
# at the same path on one host.
#
# Several sets may exist at once (one per test, each with its own PREFIX):
# their addresses repeat, but every set is a separate network.  `rsh`
# needs OMPDSM_NETNS_PREFIX to say which set HOST belongs to.
set -eu

SUBNET=10.99.0

check() {
    if [ "$(id -u)" != 0 ]; then
        echo "netns.sh: network namespaces need root; skipping" >&2
        exit 77
    fi
    if ! command -v ip >/dev/null 2>&1; then
        echo "netns.sh: ip(8) (iproute2) not found; skipping" >&2
        exit 77
    fi
    if ! ip netns add ompdsm-probe-$$ 2>/dev/null; then
        echo "netns.sh: 'ip netns add' failed here (no namespace support); skipping" >&2
        exit 77
    fi
    ip netns del ompdsm-probe-$$
}

up() {
    p=$1 n=$2
    down "$p"
    ip netns add "$p-br"
    ip -n "$p-br" link set lo up
    ip -n "$p-br" link add br0 type bridge
    ip -n "$p-br" link set br0 up
    i=0
    while [ "$i" -lt "$n" ]; do
        h="$p-h$i"
        ip netns add "$h"
        ip -n "$h" link set lo up
        # The pair is made inside the host namespace and one end is moved to
        # the bridge, so no interface ever appears in the root namespace.
        ip -n "$h" link add eth0 type veth peer name "v$i" netns "$p-br"
        ip -n "$h" addr add "$SUBNET.$((i + 1))/24" dev eth0
        ip -n "$h" link set eth0 up
        ip -n "$p-br" link set "v$i" master br0
        ip -n "$p-br" link set "v$i" up
        echo "$SUBNET.$((i + 1))"
        i=$((i + 1))
    done
}

down() {
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
        case $ns in "$1"-*) ip netns del "$ns" ;; esac
    done
}

addr() { echo "$SUBNET.$(($2 + 1))"; }

ns_of() {
    case $1 in
    "$SUBNET".*) i=$((${1##*.} - 1)) ;;
    *) echo "netns.sh: $1 is not a test host address" >&2; return 1 ;;
    esac
    ns="${OMPDSM_NETNS_PREFIX:?netns.sh: set OMPDSM_NETNS_PREFIX}-h$i"
    # `ip netns list` asks the kernel for each namespace's id; one that
    # another test is deleting at that moment (its file still under
    # /run/netns, its mount gone) makes ip print "Error: Peer netns
    # reference is invalid." on stderr, which here is the job's stderr (a
    # CI run's cluster-output failed so).  The list itself is still right.
    if ! ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$ns"; then
        echo "ssh: connect to host $1 port 22: No route to host" >&2
        return 255
    fi
    echo "$ns"
}

# Namespaces are made and deleted one set at a time across every test of
# the machine: iproute2 resolves a namespace by its bind mount under
# /run/netns, and another `ip netns add` or `del` changing those mounts at
# the same moment made `ip link add ... netns NAME` fail now and then
# ("Peer netns reference is invalid") when cluster tests ran in parallel.
# The probe of `check` adds and deletes one too, so it takes the lock as
# well (a clean-clone CI run beside another suite's tests failed so).
locked() {
    exec 9>/tmp/ompdsm-netns.lock
    flock 9
    "$@"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
check) locked check ;;
up) locked up "$@" ;;
down) locked down "$@" ;;
addr) addr "$@" ;;
ns) ns_of "$@" ;;
rsh)
    host=$1
    shift
    ns=$(ns_of "$host") || exit 255
    # ssh joins its words with spaces and hands them to the remote shell.
    hide=${OMPDSM_NETNS_HIDE:-}
    swap=${OMPDSM_NETNS_SWAP:-}
    if [ -n "$swap" ] && [ "${swap%%:*}" = "$host" ]; then
        files=${swap#*:}
        exec ip netns exec "$ns" unshare -m --propagation private \
            sh -c 'mount --bind "$2" "$1" && shift 2 && exec sh -c "$*"' \
            sh "${files%%:*}" "${files#*:}" "$@"
    fi
    if [ -n "$hide" ] && [ "${hide%%:*}" = "$host" ]; then
        exec ip netns exec "$ns" unshare -m --propagation private \
            sh -c 'mount -t tmpfs ompdsm-hide "$1" && shift && exec sh -c "$*"' \
            sh "${hide#*:}" "$@"
    fi
    exec ip netns exec "$ns" sh -c "$*"
    ;;
*)
    echo "usage: netns.sh check | up PREFIX N | down PREFIX | addr PREFIX I | ns ADDR | rsh HOST WORD..." >&2
    exit 2
    ;;
esac
