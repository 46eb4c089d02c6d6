"""bench/harness/matrix/machine.py - the machine the matrix runs on: its
description for the report, its load, and waiting for it to be idle."""
import os
import platform
import subprocess
import time

from matrix.config import SRC


def sh(cmd, **kw):
    """Output of a command, or '' if it fails (machine description only)."""
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=20, **kw).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ''


def loadavg():
    with open('/proc/loadavg') as f:
        return [float(x) for x in f.read().split()[:3]]


def _cpu_times():
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v), idle


def busy_fraction(interval=0.3):
    """Share of all CPUs used over `interval` s.  Called between runs, when
    none of ours runs: this is other people's load, right now (the load
    average lags by a minute)."""
    t0, i0 = _cpu_times()
    time.sleep(interval)
    t1, i1 = _cpu_times()
    return 1.0 - (i1 - i0) / float(max(1, t1 - t0))


def wait_quiet(limit, threshold=0.10):
    """Wait up to `limit` s for the machine to be idle; returns (busy
    fraction at the start of the run, seconds waited)."""
    b = busy_fraction()
    t0 = time.time()
    while b > threshold and time.time() - t0 < limit:
        time.sleep(1.0)
        b = busy_fraction()
    return b, time.time() - t0


def machine_info():
    cpu = ''
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                cpu = line.split(':', 1)[1].strip()
                break
    fam = sh(['sh', '-c', "lscpu | sed -n 's/^CPU family: *//p'"])
    mem_kb = 0
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemTotal:'):
                mem_kb = int(line.split()[1])
    os_name = ''
    try:
        with open('/etc/os-release') as f:
            for line in f:
                if line.startswith('PRETTY_NAME='):
                    os_name = line.split('=', 1)[1].strip().strip('"')
    except OSError:
        pass
    hyp = sh(['sh', '-c', "lscpu | sed -n 's/^Hypervisor vendor: *//p'"])
    cont = sh(['systemd-detect-virt', '--container'])
    virt = ('%s guest' % hyp if hyp else 'no hypervisor seen') + (
        ', in a %s container' % cont if cont and cont != 'none' else '')
    gcc = sh(['cc', '--version']).splitlines()
    return {
        'nproc': int(sh(['nproc']) or os.cpu_count()),
        'cpu_model': cpu + (' (family %s)' % fam if fam else ''),
        'kernel': platform.release(),
        'os': os_name,
        'memory_gib': round(mem_kb / 1048576.0, 1),
        'virtualization': virt,
        'cc': gcc[0] if gcc else '',
        'hostname': platform.node(),
    }


def git_describe():
    head = sh(['git', '-C', SRC, 'rev-parse', '--short', 'HEAD'])
    dirty = sh(['git', '-C', SRC, 'status', '--porcelain', '--untracked-files=no'])
    return head + (' (with uncommitted changes)' if dirty else '')
