#!/bin/sh
# bench/launch/localrsh.sh - an OMPDSM_RSH that ignores HOST and runs the
# command here, as ssh would run it there: agents started through it cost
# what an agent costs its parent, without the hop to another host.
shift
exec sh -c "$*"
