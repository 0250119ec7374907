"""Records one real PyTorch training run with an injected bottleneck, for bench/doctor-faults.ts.

    /usr/bin/python3 bench/doctor_faults.py --case CASE --out DIR [--steps N]

Writes DIR/trace.json (torch.profiler, exported with the SDK's goodput.torch.trace_handler: torch's
export_chrome_trace, on Debian's torch 1.13 CPU build the legacy chrome-trace event array, plus the
host's CPU threads as the top-level member `goodput_host`) and DIR/steps.json (the Goodput SDK's
step breakdown, GOODPUT_STEP_LOG). Each case injects one cause that dominates the step by design:

  slow-getitem      Dataset.__getitem__ blocks 1.5 ms per sample (a slow disk or remote read)
  heavy-transform   per-sample NumPy augmentation (FFT blur of a 3x128x128 image), num_workers=0
  batch-size-1      batch size 1: fixed per-step costs (optimizer, Python, dispatch) dominate
  item-sync         the healthy run plus loss.item() every step (a blocking host sync on CUDA; free on a CPU)
  wait-between-steps  after optimizer.step() the loop waits for the previous step's metrics upload
                    (a background thread, 20 ms round trip, longer than a step): a host sync point
  oversubscribed    torch.set_num_threads(8 x the usable cores, at least 16)
  healthy           large batch, large matrices, fast in-memory data: compute-bound

On a CUDA machine (--device cuda) the same cases run on the GPU with CUDA activities profiled.
"""

import argparse
import concurrent.futures
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

CASES = ("slow-getitem", "heavy-transform", "batch-size-1", "item-sync", "wait-between-steps", "oversubscribed",
         "healthy")


def push_metrics(loss: float, round_trip_s: float) -> None:
    """Sends one step's metrics to a tracking server; the network round trip is emulated."""
    time.sleep(round_trip_s)


class Vectors(Dataset):
    """In-memory features; `delay_s` blocks each read, `transform_iters` burns CPU per sample."""

    def __init__(self, n: int, dim: int, classes: int, delay_s: float = 0.0, transform_iters: int = 0):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, dim, generator=g)
        self.y = torch.randint(0, classes, (n,), generator=g)
        self.delay_s, self.transform_iters = delay_s, transform_iters

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int):
        if self.delay_s:
            time.sleep(self.delay_s)
        x = self.x[i]
        if self.transform_iters:
            # A per-sample augmentation chain in NumPy, as image pipelines run it: decode-sized
            # image, blur in the frequency domain, jitter, pool down to the model's features.
            rng = np.random.default_rng(i)
            image = np.resize(x.numpy(), (3, 128, 128)) + rng.normal(0, 0.1, (3, 128, 128))
            for _ in range(self.transform_iters):
                spectrum = np.fft.rfft2(image)
                image = np.fft.irfft2(spectrum * np.exp(-0.001 * np.arange(spectrum.shape[-1])), s=image.shape[-2:])
            x = torch.from_numpy(image.reshape(3, 16, 8, 16, 8).mean(axis=(2, 4)).reshape(-1)[: len(x)].astype(np.float32))
        return x, self.y[i]


def mlp(dim: int, hidden: int, classes: int) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden),
                               torch.nn.ReLU(), torch.nn.Linear(hidden, classes))


def settings(case: str, cuda: bool) -> dict:
    s = {"dim": 256, "hidden": 512, "classes": 10, "batch": 64, "workers": 0, "delay_s": 0.0, "transform_iters": 0,
         "threads": 1, "sync_work": 0, "upload_s": 0.0}
    if case == "slow-getitem":
        s.update(delay_s=0.0015, workers=1)
    elif case == "heavy-transform":
        s.update(transform_iters=4)
    elif case == "batch-size-1":
        s.update(batch=1, dim=32, hidden=64)
    elif case == "item-sync":
        # The healthy run plus the sync: on a CPU the injected line must not change the verdict.
        s.update(dim=1024, hidden=2048, batch=256, sync_work=1)
    elif case == "wait-between-steps":
        s.update(upload_s=0.02)
    elif case == "oversubscribed":
        # Oversubscribed on any machine: 8 intra-op threads per core this process may use.
        s.update(threads=max(16, 8 * len(os.sched_getaffinity(0))), hidden=1024, batch=128)
    elif case == "healthy":
        s.update(dim=1024, hidden=2048 if not cuda else 8192, batch=256 if not cuda else 4096)
    return s


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--case", choices=CASES, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=24)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    os.environ["GOODPUT_STEP_LOG"] = os.path.join(a.out, "steps.json")
    os.environ.setdefault("GOODPUT_JOB_ID", f"fault-{a.case}")
    import goodput.torch as gt  # after GOODPUT_STEP_LOG is set: the SDK reads it at init()

    cuda = a.device == "cuda"
    s = settings(a.case, cuda)
    torch.set_num_threads(s["threads"])
    gt.init()
    torch.manual_seed(0)
    dev = torch.device(a.device)
    net = mlp(s["dim"], s["hidden"], s["classes"]).to(dev)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    model = gt.AdaptiveDataParallel(net, optimizer)
    data = Vectors(s["batch"] * (a.steps + 8), s["dim"], s["classes"], s["delay_s"], s["transform_iters"])
    loader = gt.AdaptiveDataLoader(data, batch_size=s["batch"], shuffle=False, num_workers=s["workers"])
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
    trace = os.path.join(a.out, "trace.json")
    schedule = torch.profiler.schedule(wait=2, warmup=2, active=a.steps - 4)
    uploads = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    pending = None
    with torch.profiler.profile(activities=activities, schedule=schedule,
                                on_trace_ready=gt.trace_handler(trace)) as prof:
        for step, (x, y) in enumerate(loader):
            if step >= a.steps:
                break
            x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            model.backward(loss)
            optimizer.step()
            if s["sync_work"]:
                # A host sync every step: on CUDA .item() blocks until every queued kernel has
                # finished, so the GPU runs dry before the next step is launched. A CPU run has no
                # asynchronous device: the same line costs nothing there (see docs/doctor.md).
                float(loss.item())
            if s["upload_s"]:
                # Metrics go out on a background thread, but the loop waits for the previous
                # upload before starting the next: the step stalls for the rest of the round trip.
                if pending is not None:
                    pending.result()
                pending = uploads.submit(push_metrics, float(loss), s["upload_s"])
            prof.step()
    uploads.shutdown()
    print(f"recorded {a.case} to {a.out}", flush=True)


if __name__ == "__main__":
    main()
