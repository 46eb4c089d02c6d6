#!/usr/bin/env python3
"""Runs one libFuzzer target for a bounded time over its seed corpus.

usage: run_fuzz.py TARGET CORPUS_DIR SECONDS [LIBFUZZER_OPTION...]

The seed corpus (the committed inputs, regression inputs among them) is
run first, then new inputs for SECONDS (FUZZ_SECONDS in the environment
overrides).  New inputs go to a temporary directory, never into the source
tree.  Fails (exit 1) on any crash, leak, sanitizer report or timeout,
printing the reproducing input's path; libFuzzer's own exit status says
so, and its log is checked as well so that a report never passes."""
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    target, corpus = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    seconds, extra = sys.argv[3], sys.argv[4:]
    seconds = os.environ.get('FUZZ_SECONDS', seconds)
    if not os.path.isdir(corpus) or not os.listdir(corpus):
        print(f'run_fuzz: no seed corpus in {corpus}', file=sys.stderr)
        return 1
    work = tempfile.mkdtemp(prefix='ompdsm-fuzz-')
    try:
        new = os.path.join(work, 'new')
        os.mkdir(new)
        env = dict(os.environ)
        env.setdefault('ASAN_OPTIONS', 'detect_leaks=1:abort_on_error=0')
        env.setdefault('UBSAN_OPTIONS', 'halt_on_error=1:print_stacktrace=1')
        cmd = [target, new, corpus, f'-max_total_time={seconds}',
               '-timeout=10', '-rss_limit_mb=1024', '-max_len=8192',
               '-print_final_stats=1', f'-artifact_prefix={work}/'] + extra
        print(' '.join(cmd), flush=True)
        r = subprocess.run(cmd, env=env, cwd=work, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           errors='replace')
        log = r.stdout
        tail = '\n'.join(log.splitlines()[-40:])
        print(tail)
        bad = [w for w in ('ERROR: AddressSanitizer', 'ERROR: LeakSanitizer',
                           'runtime error:', 'ERROR: libFuzzer',
                           'SUMMARY: UndefinedBehaviorSanitizer')
               if w in log]
        if r.returncode != 0 or bad:
            arts = [f for f in os.listdir(work) if f != 'new']
            for a in arts:
                keep = os.path.join(tempfile.gettempdir(), 'ompdsm-fuzz-' + a)
                shutil.copy(os.path.join(work, a), keep)
                # Replayed with stderr open: the report a mask hid.
                rr = subprocess.run([target, keep], env=env,
                                    stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True,
                                    errors='replace')
                print('\n'.join(rr.stdout.splitlines()[-40:]))
                print(f'run_fuzz: reproducer kept in {keep} (add it to '
                      f'{corpus} once fixed)')
            print(f'run_fuzz: FAILED (exit {r.returncode}; '
                  f'{", ".join(bad) or "no report"})')
            return 1
        runs = [ln for ln in log.splitlines() if 'stat::number_of_executed_units' in ln]
        if not runs:
            print('run_fuzz: no final statistics: the target did not run')
            return 1
        print(f'run_fuzz: ok, {runs[-1].split(":")[-1].strip()} inputs in '
              f'{seconds} s, {len(os.listdir(new))} new corpus entries')
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
