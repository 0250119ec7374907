"""A small SDK training job (torch, gloo on CPU) with one rank made slow on purpose, for the
live verdicts across ranks (bench/doctor-live.ts, src/control/e2e-ranks.test.ts).

    python rank_faults.py --steps 4000 --slow-rank 1 --slow-ms 150 --slow-phase compute

--slow-phase: compute (sleep inside the forward pass), between (after optimizer.step()), data
(the rank's dataset sleeps in __getitem__), hog (a busy thread beside the training thread on the
same rank), hog-process (every rank computes for real, --cpu-ms of matrix products per step, and
the slow rank is pinned to one core beside --hogs busy processes pinned there too: a neighbour).

--hang-rank R --hang-kind stop|collective --hang-after-s S: on the first attempt, once rank R ran
S seconds of steps, it records the time in $GOODPUT_CHECKPOINT_DIR/fault-at (the bench's clock
for the time to the verdict) and then stops itself (SIGSTOP), or enters a collective the other
ranks skip (an all_reduce on a process group of all ranks that no other rank calls) and waits
there for good. A hang may also be injected from outside (SIGSTOP of the process).
"""

import argparse
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta

import torch
from torch.utils.data import Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import goodput.torch as gt  # noqa: E402


class Points(Dataset):
    def __init__(self, count: int, delay_s: float):
        self.count = count
        self.delay_s = delay_s
        self.weights = torch.linspace(-1, 1, 16)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int):
        if self.delay_s:
            time.sleep(self.delay_s)
        g = torch.Generator().manual_seed(index)
        x = torch.rand(16, generator=g) * 2 - 1
        return x, (x @ self.weights).unsqueeze(0)


def hog() -> None:
    while True:  # pure Python: holds the GIL in turns with the training thread
        sum(i * i for i in range(10_000))


def hog_processes(count: int) -> int:
    """Pins this process to its last usable core and starts `count` busy processes pinned there
    (ended with this process: PR_SET_PDEATHSIG); answers the core."""
    core = sorted(os.sched_getaffinity(0))[-1]
    os.sched_setaffinity(0, {core})

    def pinned() -> None:
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the rank
        os.sched_setaffinity(0, {core})

    for _ in range(count):
        subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=pinned)
    return core


def hang(kind: str, side_group) -> None:
    """Records when the hang begins, then hangs the way `kind` says (never returns)."""
    path = os.path.join(os.environ.get("GOODPUT_CHECKPOINT_DIR", "."), "fault-at")
    with open(path + ".tmp", "w") as f:
        f.write(f"{time.time():.3f} {gt.rank()} {kind}\n")
    os.replace(path + ".tmp", path)
    print(f"hang: {kind} at step", flush=True)
    if kind == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
    # A collective no other rank enters: it waits for them for good (gloo timeout 1 h).
    torch.distributed.all_reduce(torch.zeros(1), group=side_group)
    time.sleep(1e9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--step-ms", type=float, default=40.0, help="compute time of each step")
    parser.add_argument("--slow-rank", type=int, default=-1)
    parser.add_argument("--slow-ms", type=float, default=150.0)
    parser.add_argument("--slow-phase", default="compute",
                        choices=["compute", "between", "data", "hog", "hog-process"])
    parser.add_argument("--cpu-ms", type=float, default=20.0, help="hog-process: CPU time of a step's work (ms)")
    parser.add_argument("--hogs", type=int, default=3, help="hog-process: busy processes beside the slow rank")
    parser.add_argument("--hang-rank", type=int, default=-1)
    parser.add_argument("--hang-kind", default="stop", choices=["stop", "collective"])
    parser.add_argument("--hang-after-s", type=float, default=15.0)
    parser.add_argument("--checkpoint-s", type=float, default=10.0,
                        help="checkpoint interval: a restart after a hang resumes from at most this far back")
    args = parser.parse_args()
    torch.set_num_threads(1)
    runtime = gt.init(checkpoint_interval_s=args.checkpoint_s)
    me = gt.rank()
    slow = me == args.slow_rank
    print(f"{time.strftime('%H:%M:%S')} start step={runtime.steps_done} attempt={runtime.env.attempt} rank={me} "
          f"replicas={gt.world_size()} slow={slow and args.slow_phase}", flush=True)
    if slow and args.slow_phase == "hog":
        threading.Thread(target=hog, daemon=True).start()
    # hog-process: a fixed amount of real CPU work per step (a sleep would not feel the neighbour),
    # timed before any hog starts and taken from rank 0, so every rank does the same work. Timed in
    # this thread's CPU time (the work runs on one thread): wall time at start-up, while the other
    # ranks import torch on the same cores, made the work per step vary 4x between jobs.
    cpu_iters = 0
    if args.slow_phase == "hog-process":
        a = torch.rand(128, 128)
        t = time.thread_time()
        for _ in range(200):
            a @ a
        iters = torch.tensor([max(1.0, args.cpu_ms / 1000 / ((time.thread_time() - t) / 200))])
        torch.distributed.broadcast(iters, 0)
        cpu_iters = int(iters.item())
        if slow:
            print(f"pinned to core {hog_processes(args.hogs)} beside {args.hogs} busy processes", flush=True)
    will_hang = me == args.hang_rank and runtime.env.attempt == 0
    # Every rank creates the side group (new_group is collective); only the hanging rank uses it.
    side_group = torch.distributed.new_group(timeout=timedelta(hours=1)) if args.hang_rank >= 0 else None
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-2)
    model = gt.AdaptiveDataParallel(net, optimizer)
    per_sample_s = args.slow_ms / 1000 / 16 if slow and args.slow_phase == "data" else 0.0
    loader = gt.AdaptiveDataLoader(Points(1 << 20, per_sample_s), batch_size=16 * gt.world_size(),
                                   shuffle=True)
    started = None
    first = True
    for _epoch in gt.remaining_epochs(1000):
        for x, y in loader:
            started = started or time.monotonic()
            if first:
                print(f"{time.strftime('%H:%M:%S')} first step {runtime.steps_done}", flush=True)
                first = False
            optimizer.zero_grad()
            if cpu_iters:
                a = torch.rand(128, 128)
                for _ in range(cpu_iters):
                    a @ a
            else:
                time.sleep(args.step_ms / 1000)  # the model's compute, stood in for by a sleep
            if slow and args.slow_phase == "compute":
                time.sleep(args.slow_ms / 1000)
            loss = torch.nn.functional.mse_loss(model(x), y)
            model.backward(loss)
            optimizer.step()
            if slow and args.slow_phase == "between":
                time.sleep(args.slow_ms / 1000)
            # After optimizer.step(): the hung rank is between steps, the others enter the next one.
            if will_hang and time.monotonic() - started >= args.hang_after_s:
                hang(args.hang_kind, side_group)
            if runtime.steps_done >= args.steps:
                print(f"done step={runtime.steps_done}", flush=True)
                return


if __name__ == "__main__":
    main()
