"""One replica of a 2-replica gloo SDK job that ends normally (no checkpoint after its last
collective) while a gloo worker thread still holds that collective, an all-reduce of the
script's own whose tensor Python has already dropped.

That is the state behind the SIGABRT ("terminate called without an active exception") of a
finished job: the SDK's DistributedDataParallel keeps the group's worker threads alive through
finalization, and the thread that frees such a tensor takes the GIL. Here the thread is held
deterministically: a completion callback of the all-reduce (run by the gloo worker thread that
finished it) waits until a barrier has been issued, or until the last exit hook (registered
before gt.init(), so it runs after the SDK's) lets it go. That hook then prints whether the
tensor was freed, and by which thread; the test reads it. If the all-reduce finished before the
callback was registered (the callback then runs at once, in the main thread), prints "raced"
instead and the test launches the job again.
"""

import atexit
import threading
import weakref

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import TensorDataset

import goodput.torch as gt

released = threading.Event()   # the held gloo thread may go on
returned = threading.Event()   # it has returned from the callback
freed_by = []  # thread idents that freed the all-reduce's tensor
raced = []
refs = []  # weak references to the tensor (weakref.finalize would run them at exit)


def last_exit_hook() -> None:
    released.set()
    returned.wait(timeout=60)  # the GIL is released while waiting
    threading.Event().wait(0.5)  # time for the gloo worker threads to drop what they still hold
    rank = gt.rank()
    if raced:
        print(f"rank={rank} raced", flush=True)
    by_gloo = bool(freed_by) and freed_by != [threading.main_thread().ident]
    print(f"rank={rank} freed before the interpreter finalizes: {bool(freed_by)}, "
          f"by a gloo thread: {by_gloo}", flush=True)


atexit.register(last_exit_hook)  # before gt.init(): runs after the SDK's exit hook

original_barrier = dist.barrier


def barrier(*args, **kwargs):
    """The real barrier, plus a release of the held thread once it has been issued (it takes
    its snapshot of the work in flight then)."""
    wanted_async = kwargs.pop("async_op", False)
    work = original_barrier(*args, async_op=True, **kwargs)
    released.set()
    if wanted_async:
        return work
    work.wait()
    return None


dist.barrier = barrier


def hold_worker_thread(future):
    if threading.current_thread() is threading.main_thread():
        raced.append(True)  # finished before registration: no worker thread to hold
    else:
        released.wait(timeout=60)
    returned.set()
    return None


def own_collective() -> None:
    # Big enough that the all-reduce is still running when the callback is registered.
    tensor = torch.ones(1 << 22)
    refs.append(weakref.ref(tensor, lambda _ref: freed_by.append(threading.get_ident())))
    work = dist.all_reduce(tensor, async_op=True)
    work.get_future().then(hold_worker_thread)
    # returns: from here on only the all-reduce (C++) holds the tensor


def main() -> None:
    torch.set_num_threads(1)
    gt.init(checkpoint_every_epoch=False)
    torch.manual_seed(0)
    x, y = torch.randn(64, 4), torch.randint(0, 3, (64,))
    net = torch.nn.Linear(4, 3)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    model = gt.AdaptiveDataParallel(net, optimizer)  # its DDP keeps the process group alive
    loader = gt.AdaptiveDataLoader(TensorDataset(x, y), batch_size=32)
    for _ in gt.remaining_epochs(1):
        for bx, by in loader:
            optimizer.zero_grad()
            model.backward(F.cross_entropy(model(bx), by))
            optimizer.step()
    own_collective()


if __name__ == "__main__":
    main()
