#!/usr/bin/env python3
"""tests/runtime/abi_symbols.py - libompdsm exports exactly the functions
that omp.h and ompdsm_abi.h declare, each with a symbol version from
runtime/libompdsm.map (OMP_1.0 for the OpenMP API, OMPDSM_1.x for the ompcc
ABI), so that binaries built today keep finding them in later libraries.

usage: abi_symbols.py LIBOMPDSM_SO OMP_H OMPDSM_ABI_H
Fails (exit 1) naming each function that is declared but not exported, not
versioned, or exported but declared in neither header."""
import re
import subprocess
import sys


def declared(path):
    """Functions a header declares (not the static inline ones)."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    names = set()
    # A declaration ends with ');' before any '{'; static inline bodies
    # open a brace instead.
    for m in re.finditer(r"\b((?:omp|OMPDSM)_\w+)\s*\(([^;{}]*)\)\s*;", text):
        start = text.rfind("\n", 0, m.start())
        line = text[start + 1:m.start()]
        if "static" in line or "typedef" in line or "(*" in line:
            continue
        names.add(m.group(1))
    return names


def exported(lib):
    """{name: version} of the library's defined dynamic function symbols."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or f[3] != "FUNC" or f[6] == "UND":
            continue
        name, _, ver = f[7].partition("@")
        syms[name] = ver.lstrip("@")
    return syms


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    lib, omp_h, abi_h = sys.argv[1:]
    want_omp, want_abi = declared(omp_h), declared(abi_h)
    have = exported(lib)
    bad = []
    for names, prefix, header in ((want_omp, "OMP_", omp_h),
                                  (want_abi, "OMPDSM_", abi_h)):
        if not names:
            bad.append("found no declarations in %s" % header)
        for n in sorted(names):
            if n not in have:
                bad.append("%s (declared in %s) is not exported by %s: list it "
                           "in runtime/libompdsm.map" % (n, header, lib))
            elif not have[n].startswith(prefix):
                bad.append("%s is exported with version '%s', not a %s* "
                           "version: list it by name in a version node of "
                           "runtime/libompdsm.map" % (n, have[n], prefix))
    for n in sorted(set(have) - want_omp - want_abi):
        bad.append("%s is exported but declared in neither omp.h nor "
                   "ompdsm_abi.h (internals stay hidden)" % n)
    for b in bad:
        print("FAIL: " + b)
    if bad:
        return 1
    print("ok: %d omp_* and %d OMPDSM_* functions exported with versions" %
          (len(want_omp), len(want_abi)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
