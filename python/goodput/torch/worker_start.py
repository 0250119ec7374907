"""Forked DataLoader workers that never start are replaced instead of stalling the replica.

Why: a worker forked from a replica that runs other threads can deadlock inside CPython's
after-fork code (PyOS_AfterFork_Child waiting for a runtime lock another thread held at the
fork) before it runs any Python. It stays alive and serves nothing, so the replica waits for
its batch forever, and a stop then ends in the grace SIGKILL instead of a checkpoint. Found with
gdb on a stuck worker of a 2-replica job whose validation loader forked its workers while the
training loader's were shutting down.

How: every worker of an SDK loader records its pid in a shared array as the first thing its
`WorkerInit` does. After an iterator forks its workers, the main process waits for all of them
to record (milliseconds normally); one that has not done so within `GOODPUT_WORKER_START_S`
seconds (default 10) is taken for deadlocked: the iterator's workers are killed and a new
iterator is made at the same position. No sample is lost: a position is committed only when
its micro-batch is yielded (data.py). Only fork-started workers are watched: a spawned worker
imports torch first and may take longer, and cannot inherit the deadlock.
"""

import multiprocessing
import os
import signal
import sys
import time
from typing import Any, Callable, Iterator, List, Set

DEFAULT_START_S = 10.0
ATTEMPTS = 3


def start_timeout_s() -> float:
    value = os.environ.get("GOODPUT_WORKER_START_S", "")
    try:
        return float(value) if value else DEFAULT_START_S
    except ValueError:
        return DEFAULT_START_S


class WorkerStarts:
    """Pids that the workers of one loader record when they start (one slot per worker id).
    Shared memory, so that forked and spawned workers write to the same slots."""

    def __init__(self, num_workers: int):
        self.pids = multiprocessing.Array("q", num_workers, lock=False)

    def record(self, worker_id: int) -> None:
        """In a worker: it has started (called first by WorkerInit)."""
        if 0 <= worker_id < len(self.pids):
            self.pids[worker_id] = os.getpid()

    def missing(self, worker_pids: List[int]) -> List[int]:
        recorded = set(self.pids[:])
        return [pid for pid in worker_pids if pid not in recorded]


def _forks(dataloader: Any) -> bool:
    context = dataloader.multiprocessing_context
    method = context.get_start_method() if context is not None \
        else multiprocessing.get_start_method(allow_none=True) or "fork"
    return method == "fork"


def _discard(dataloader: Any, iterator: Any) -> None:
    """Kills the iterator's workers without the DataLoader taking their death for a failure."""
    from torch.utils.data._utils import signal_handling
    if getattr(iterator, "_worker_pids_set", False):
        signal_handling._remove_worker_pids(id(iterator))
        iterator._worker_pids_set = False
    for worker in iterator._workers:
        if worker.is_alive():
            os.kill(worker.pid, signal.SIGKILL)
    iterator._shutdown_workers()
    if getattr(dataloader, "_iterator", None) is iterator:
        dataloader._iterator = None  # persistent workers: the next iter() starts new ones


def started_iterator(dataloader: Any, starts: WorkerStarts, make: Callable[[], Iterator[Any]],
                     checked: Set[int], log: Callable[[str], None] = print) -> Iterator[Any]:
    """`make()` (iter(dataloader)), with its forked workers checked to have started; `checked`
    holds the pids already seen started (a persistent iterator's are checked once)."""
    for attempt in range(1, ATTEMPTS + 1):
        iterator = make()
        workers = getattr(iterator, "_workers", None)
        if not workers or not _forks(dataloader):
            return iterator
        pids = [w.pid for w in workers if w.pid not in checked]
        deadline = time.monotonic() + start_timeout_s()
        stuck = starts.missing(pids)
        while stuck and time.monotonic() < deadline:
            time.sleep(0.005)
            stuck = [pid for pid in starts.missing(stuck)
                     if any(w.pid == pid and w.is_alive() for w in workers)]
        if not stuck:
            checked.update(pids)
            return iterator
        _discard(dataloader, iterator)
        if attempt < ATTEMPTS:
            log(f"goodput: DataLoader worker(s) {', '.join(map(str, stuck))} did not start "
                f"within {start_timeout_s():g} s of the fork (a deadlock in the forked child); "
                f"starting the loader's workers again (attempt {attempt + 1} of {ATTEMPTS})")
            sys.stdout.flush()
    raise RuntimeError(f"goodput: DataLoader workers did not start {ATTEMPTS} times in a row; "
                       f"set GOODPUT_WORKER_START_S higher if the machine is very loaded, or "
                       f"multiprocessing_context='spawn' on the loader")
