"""SIGTERM -> a flag polled at step boundaries (the checkpoint happens there, not in the handler,
because a signal can arrive in the middle of an optimizer step or a collective)."""

import signal
import threading


class SigtermFlag:
    def __init__(self) -> None:
        self._event = threading.Event()
        self.installed = False

    def install(self) -> None:
        """Installs the handler; only possible from the main thread (else the flag stays unset
        and SIGTERM keeps its previous behaviour)."""
        if threading.current_thread() is not threading.main_thread():
            return
        signal.signal(signal.SIGTERM, self._handle)
        self.installed = True

    def _handle(self, signum: int, frame: object) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        """Requests a checkpoint-and-exit as if SIGTERM had arrived (for tools and tests)."""
        self._event.set()
