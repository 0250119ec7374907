"""The stop signal of a replica's main process: SIGTERM -> a flag polled at step boundaries.

The checkpoint happens at a step boundary, never in the handler, because a signal can arrive in
the middle of an optimizer step or a collective. The handler is installed explicitly (by
`init()`) and can be removed again, restoring whatever handler was there before.

A process forked from the main one (a DataLoader worker, before it sets its own handlers)
inherits this handler; there it does nothing, so a SIGTERM sent to the whole process group
cannot make a worker pose as the replica or kill it during that window (worker_signals.py).
"""

import faulthandler
import os
import signal
import sys
import threading
from typing import Any, Optional

#: seconds after a SIGTERM at which a replica still running prints every thread's stack
DEFAULT_STOP_DUMP_S = 20.0


def stop_dump_after_s() -> float:
    """`GOODPUT_STOP_DUMP_S` (default 20; 0 turns the dump off)."""
    try:
        return max(0.0, float(os.environ.get("GOODPUT_STOP_DUMP_S", DEFAULT_STOP_DUMP_S)))
    except ValueError:
        return DEFAULT_STOP_DUMP_S


class StopSignal:
    def __init__(self) -> None:
        self._event = threading.Event()
        self._owner_pid: Optional[int] = None
        self._previous: Any = None
        self.installed = False

    def install(self) -> bool:
        """Installs the SIGTERM handler; only possible from the main thread (elsewhere SIGTERM
        keeps its previous behaviour and this returns False)."""
        if self.installed:
            return True
        if threading.current_thread() is not threading.main_thread():
            return False
        self._owner_pid = os.getpid()
        self._previous = signal.signal(signal.SIGTERM, self._handle)
        self.installed = True
        return True

    def uninstall(self) -> None:
        """Restores the handler that was installed before `install()`."""
        if not self.installed or threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) == self._handle:
            signal.signal(signal.SIGTERM, self._previous if self._previous is not None
                          else signal.SIG_DFL)
        self.installed = False

    def _handle(self, signum: int, frame: object) -> None:
        if os.getpid() != self._owner_pid:
            return  # a forked child (DataLoader worker): the stop belongs to the main process
        if not self._event.is_set():
            self._arm_dump()
        self._event.set()

    @staticmethod
    def _arm_dump() -> None:
        """A stop takes a second or two; one that has not ended the process after
        GOODPUT_STOP_DUMP_S prints where every thread waits (faulthandler's own thread writes
        it to stderr, the replica's log), before the backend's grace period ends in SIGKILL."""
        after_s = stop_dump_after_s()
        if after_s <= 0:
            return
        try:
            faulthandler.dump_traceback_later(after_s, exit=False, file=sys.__stderr__)
        except (RuntimeError, ValueError, AttributeError, OSError):
            pass  # no usable stderr: nothing to write to

    def ignore_further(self) -> None:
        """Ignores SIGTERM from now on (main thread only): the process is exiting (143 once
        checkpointed, or as the script ended), which a late signal must not turn into death by
        SIGTERM."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            self.installed = False

    def is_set(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        """Requests a checkpoint-and-exit as if SIGTERM had arrived (for tools and tests)."""
        self._event.set()

    def clear(self) -> None:
        self._event.clear()
