"""Runs the corpus's AdaptDL-style script (2 DataLoader workers per loader, Accumulator
statistics) with a real SIGTERM delivered to this replica at a chosen point of its code:

    --point P     sync:N        inside the N-th Accumulator.synchronized() (before its collective)
                  step:N        before the N-th optimizer step's first micro-batch is fetched
                  fetch:N       right after the N-th training micro-batch came from the workers
                  epoch-end:N   as the N-th epoch ends (before the agreement between epochs)
                  checkpoint:N  inside the N-th checkpoint (before its collectives)
                  after-loop    after remaining_epochs() has ended (the job is finishing)
    --signal-rank R  the rank that signals itself (-1: every rank, each at its own point)

Everything after `--` goes to the script. The SDK prints every thread's stack to stderr if the
process is still alive 20 s after the signal (GOODPUT_STOP_DUMP_S), so a hang shows where it is.
"""

import argparse
import builtins
import os
import runpy
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "test-support", "corpus", "adaptdl_style_cifar.py")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--point", required=True)
    parser.add_argument("--signal-rank", type=int, default=-1)
    args, rest = parser.parse_known_args()
    rest = [a for a in rest if a != "--"]
    name, _, count = args.point.partition(":")
    nth = int(count or 1)
    rank = int(os.environ.get("RANK", "0"))
    armed = args.signal_rank in (-1, rank)

    hits = {"n": 0}

    def hit() -> None:
        hits["n"] += 1
        if armed and hits["n"] == nth:
            print(f"rank={rank} SIGTERM at {args.point}", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGTERM)

    from goodput.torch import accumulator, checkpointing, runtime

    def before(cls, method):
        """Delivers the signal at the start of cls.method (before any collective in it)."""
        original = getattr(cls, method)

        def patched(*a, **k):
            hit()
            return original(*a, **k)
        setattr(cls, method, patched)

    if name == "sync":
        before(accumulator.Accumulator, "synchronized")
    elif name == "step":
        before(runtime.Runtime, "begin_step")
    elif name == "fetch":
        before(runtime.Runtime, "add_data_wait")
    elif name == "epoch-end":
        before(runtime.Runtime, "end_epoch")
    elif name == "checkpoint":
        before(checkpointing.Checkpointing, "save")
    elif name != "after-loop":
        raise SystemExit(f"unknown point {args.point}")

    if name == "after-loop":
        original_print = builtins.print

        def print_then_signal(*a, **k):
            original_print(*a, **k)
            if a and isinstance(a[0], str) and a[0].startswith("done step="):
                hit()
                time.sleep(0.5)  # the handler runs; the script then ends normally
        builtins.print = print_then_signal

    sys.argv = [SCRIPT, *rest]
    runpy.run_path(SCRIPT, run_name="__main__")


if __name__ == "__main__":
    main()
