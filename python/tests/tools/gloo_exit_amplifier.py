"""Makes the gloo exit race of a 2-replica job likely, to reproduce it and to measure a fix.

    python3 tests/tools/gloo_exit_amplifier.py --runs 40 --hold-gil-s 0.3 \
        tests/workers/normal_exit_worker.py [--own-collective]

Each run launches the script as 2 replicas (gloo) and counts the runs whose exit codes are not
[0, 0] (or --expect). The amplification: every replica runs on one CPU (--cpu) next to a busy
loop (--busy-nice), and every thread torch.distributed creates (gloo's worker and transport
threads, the store's) runs under SCHED_IDLE, so a gloo worker thread often drops its last
references to a finished collective late, after the main thread has moved on. Freeing a tensor
whose Python object died first takes the GIL, and a thread that gets the GIL only once the
interpreter finalizes is ended inside the destructor ("terminate called without an active
exception", SIGABRT, exit -6; sometimes SIGSEGV). That needs the thread to ask for the GIL just
before finalization, a window of a few milliseconds: --hold-gil-s widens it with a last exit
hook that keeps the GIL in C (any exit hook busy in C does the same). Without it, 0 of 75 runs
of normal_exit_worker.py failed here (2 CPUs, 2026-11-28); with 0.3 s, 33 of 50 did.

Not a test (it depends on timing); a tool. Run by hand with /usr/bin/python3 (torch needed).
"""

import argparse
import atexit
import os
import runpy
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/: conftest's launch helpers


def _demote_new_threads(before):
    for tid in os.listdir("/proc/self/task"):
        if tid not in before:
            try:
                os.sched_setscheduler(int(tid), os.SCHED_IDLE, os.sched_param(0))
            except OSError:
                pass  # the thread ended


def _hold_the_gil(seconds: float) -> None:
    """Keeps the GIL for about `seconds` without a Python-level switch point: the builtin sum()
    loops in C. The last exit hook busy in C, as a heavy one is (the interpreter finalizes right
    after it): a thread that asks for the GIL meanwhile gets it only once finalizing."""
    start = time.perf_counter()
    sum(range(1_000_000))
    per_million = max(time.perf_counter() - start, 1e-6)
    sum(range(int(seconds / per_million * 1_000_000)))


def replica(cpu: int, hold_s: float, script: str, args) -> None:
    """In a replica: one CPU, SCHED_IDLE for the threads the process group starts, and a last
    exit hook that holds the GIL for `hold_s` seconds."""
    os.sched_setaffinity(0, {cpu})  # threads started from here on inherit it
    if hold_s > 0:
        atexit.register(_hold_the_gil, hold_s)  # registered first: runs last
    import torch.distributed as dist

    original = dist.init_process_group

    def init_process_group(*a, **k):
        before = set(os.listdir("/proc/self/task"))
        result = original(*a, **k)
        _demote_new_threads(before)
        return result

    dist.init_process_group = init_process_group
    sys.argv = [script, *args]
    runpy.run_path(script, run_name="__main__")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--replica":
        replica(int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5:])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--cpu", type=int, default=0)
    parser.add_argument("--expect", type=int, default=0, help="every replica's exit code")
    parser.add_argument("--timeout-s", type=float, default=120.0)
    parser.add_argument("--hold-gil-s", type=float, default=0.0,
                        help="seconds the last exit hook keeps the GIL (0: no such hook)")
    parser.add_argument("--busy-nice", type=int, default=0, help="niceness of the busy loop")
    parser.add_argument("script")
    args, rest = parser.parse_known_args()
    import tempfile
    from conftest import Replicas
    busy = subprocess.Popen([sys.executable, "-c",
                             f"import os; os.sched_setaffinity(0, {{{args.cpu}}}); os.nice({args.busy_nice})\n"
                             "while True: pass"])
    failures = []
    try:
        for run in range(args.runs):
            with tempfile.TemporaryDirectory() as ckpt:
                replicas = Replicas(os.path.abspath(__file__),
                                    ["--replica", str(args.cpu), str(args.hold_gil_s),
                                     os.path.abspath(args.script),
                                     *rest], 2, {"GOODPUT_CHECKPOINT_DIR": ckpt})
                codes, outputs = replicas.wait(args.timeout_s)
            ok = codes == [args.expect] * 2
            if not ok:
                failures.append((run, codes))
                tails = [o.strip().splitlines()[-3:] for o in outputs]
                print(f"run {run}: exit codes {codes}; last lines {tails}", flush=True)
    finally:
        busy.kill()
        busy.wait()
    print(f"{len(failures)} of {args.runs} runs failed: {[c for _, c in failures]}", flush=True)


if __name__ == "__main__":
    main()
