"""DataLoader worker processes ignore the stop signals (SIGTERM, SIGINT).

Why: the stop of a replica may reach every process of its group at once (Slurm's scancel
signals every process of the step; a terminal's Ctrl-C the foreground group). PyTorch's workers
install a C handler that dies on SIGTERM, and the main process then fails with "DataLoader
worker ... is killed by signal: Terminated" before it can checkpoint. A worker that ignores the
stop keeps serving batches until the main process checkpoints at its next step boundary and
exits 143. A SIGTERM from the worker's own parent still ends it at once (that is how Python ends
its daemon children at exit, and what PyTorch's handler does), as does its parent's death;
otherwise the backend kills what is left of the group once the replica has exited. A worker killed by SIGKILL, or failing with an error, still fails the
replica as before.

Three layers, because a signal can arrive at any moment of a worker's life:
  * `ignore_in_worker()` runs first in every worker of an SDK loader (`WorkerInit` wraps the
    user's worker_init_fn), after PyTorch's own handlers;
  * while an SDK loader starts its workers the main thread blocks the stop signals
    (`stop_signals_blocked`), so a worker starts with them blocked and a signal that arrives
    before `ignore_in_worker()` waits for it (this covers spawn-started workers);
  * `TorchWorkerGuard` makes PyTorch's worker set-up ignore them too, which covers the plain
    `torch.utils.data.DataLoader`s of a script (fork-started workers; until the set-up runs, a
    forked worker has the main process's handler, a no-op outside the main process).
"""

import contextlib
import os
import signal
import threading
from typing import Any, Callable, Iterator, Optional

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

_serving_sigterm = False


def ignore_in_worker() -> None:
    """In a worker process: ignore SIGINT; keep SIGTERM blocked and served by a thread that
    exits the worker only when its parent sent it (the parent ending its workers at exit, as
    PyTorch's own handler does) or the parent is gone. Idempotent."""
    global _serving_sigterm
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if not _serving_sigterm:
        _serving_sigterm = True
        # Started after the block: the thread inherits it, so the signal stays pending for it.
        threading.Thread(target=_serve_sigterm, args=(os.getppid(),), daemon=True,
                         name="goodput-worker-sigterm").start()


def _serve_sigterm(parent_pid: int) -> None:
    while True:
        info = signal.sigwaitinfo({signal.SIGTERM})
        if info.si_pid == parent_pid or os.getppid() != parent_pid:
            os._exit(0)


class WorkerInit:
    """worker_init_fn of the SDK's loaders: records that the worker started (`starts`,
    worker_start.py), ignores the stop signals, then calls the user's worker_init_fn (if any).
    A class, not a closure, so that spawn-started workers can unpickle it."""

    def __init__(self, user_fn: Optional[Callable[[int], Any]] = None, starts: Any = None):
        self.user_fn = user_fn
        self.starts = starts

    def __call__(self, worker_id: int) -> None:
        if self.starts is not None:
            self.starts.record(worker_id)
        ignore_in_worker()
        if self.user_fn is not None:
            self.user_fn(worker_id)


@contextlib.contextmanager
def stop_signals_blocked() -> Iterator[None]:
    """Blocks the stop signals in the calling thread while workers are started; a signal that
    arrives meanwhile is delivered when the block ends (to the main process's handler)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class TorchWorkerGuard:
    """Wraps PyTorch's worker signal set-up (`torch.utils.data._utils.signal_handling.
    _set_worker_signal_handlers`, called first in every worker) so that workers of any
    DataLoader ignore the stop signals. Private PyTorch API: where it is missing, only the SDK's
    own loaders are covered. `uninstall()` restores the original."""

    def __init__(self) -> None:
        self._module: Any = None
        self._original: Optional[Callable[..., Any]] = None

    def install(self) -> bool:
        if self._original is not None:
            return True
        try:
            from torch.utils.data._utils import signal_handling
        except ImportError:
            return False
        original = getattr(signal_handling, "_set_worker_signal_handlers", None)
        if original is None or getattr(original, "_goodput_guard", False):
            return False

        def set_worker_signal_handlers(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            ignore_in_worker()
            return result

        set_worker_signal_handlers._goodput_guard = True  # type: ignore[attr-defined]
        signal_handling._set_worker_signal_handlers = set_worker_signal_handlers
        self._module, self._original = signal_handling, original
        return True

    def uninstall(self) -> None:
        if self._original is not None:
            self._module._set_worker_signal_handlers = self._original
            self._module, self._original = None, None
