"""One replica of a 2-replica gloo job that checkpoints while a gloo worker thread still holds a
finished all-reduce whose tensor Python has already dropped.

That is the state behind the SIGABRT ("terminate called without an active exception") of a
stopped replica: the worker thread that frees such a tensor takes the GIL, and when it does so
as the interpreter finalizes it is ended inside a destructor. Here the thread is held
deterministically: a completion callback of the all-reduce (run by the gloo worker thread that
finished it) waits until the checkpoint's barrier has been issued. Prints when the tensor was
freed and by which thread; the test reads it. If the all-reduce finished before the callback
was registered (the callback then runs at once, in the main thread), prints "raced" instead and
the test launches the job again.
"""

import threading
import weakref

import torch
import torch.distributed as dist

import goodput.torch as gt

runtime = gt.init()
barrier_issued = threading.Event()
freed_by = []  # thread idents that freed the all-reduce's tensor
raced = []

original_barrier = dist.barrier


def barrier(*args, **kwargs):
    """The real barrier, plus a signal once it has been issued (it takes its snapshot of the
    work in flight then)."""
    wanted_async = kwargs.pop("async_op", False)
    work = original_barrier(*args, async_op=True, **kwargs)
    barrier_issued.set()
    if wanted_async:
        return work
    work.wait()
    return None


dist.barrier = barrier


def hold_worker_thread(future):
    if threading.current_thread() is threading.main_thread():
        raced.append(True)  # finished before registration: no worker thread to hold
    else:
        barrier_issued.wait(timeout=60)  # the GIL is released while waiting
    return None


# Big enough that the all-reduce is still running when the callback is registered.
tensor = torch.ones(1 << 22)
tensor_ref = weakref.ref(tensor, lambda _ref: freed_by.append(threading.get_ident()))
work = dist.all_reduce(tensor, async_op=True)
work.get_future().then(hold_worker_thread)
del tensor, work  # from here on only the all-reduce (C++) holds the tensor

runtime.checkpoint()
threading.Event().wait(0.5)  # time for the gloo worker threads to drop what they still hold
if raced:
    print(f"rank={gt.rank()} raced", flush=True)
print(f"rank={gt.rank()} freed after the checkpoint: {bool(freed_by)}", flush=True)
runtime.checkpoint()
main = threading.main_thread().ident
print(f"rank={gt.rank()} freed after the next checkpoint, by the main thread: "
      f"{freed_by == [main]}", flush=True)
