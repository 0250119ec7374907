"""Every rank's light summary of its steps, for the control plane's live verdicts across ranks
(which rank is slow, which is hung; docs/doctor.md, "Live verdicts across ranks").

Invariants:
  * the training thread only adds numbers under a lock (`step_done`, `phase`); it never waits on
    the network;
  * one small POST per `interval_s` (default 2 s) per rank, whatever the step rate: sums of the
    phases since the previous post, the step counter, and where the rank is now (inside a step or
    between steps, and since when). The load on the control plane grows with ranks, not steps;
  * the thread posts even when no step finished (a heartbeat): a rank blocked in a collective
    keeps reporting, a stopped or frozen process does not, which is how the hung rank is told
    from the peers that wait for it;
  * a failed post keeps its sums for the next one.

`install_stack_dump` registers faulthandler on SIGUSR1: the control plane sends it to ask where
every thread of the rank is (the dump goes to a file per rank and attempt in the checkpoint
directory, which the control plane reads).
"""

import faulthandler
import json
import os
import signal
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Dict, IO, Optional

DEFAULT_INTERVAL_S = 2.0
STACK_SIGNAL = signal.SIGUSR1
_FIELDS = ("steps", "data_wait_s", "compute_s", "sync_s", "between_s")


def stack_dump_path(checkpoint_dir: str, attempt: int, rank: int) -> str:
    """Where a rank writes its stacks when sent STACK_SIGNAL (read by the control plane)."""
    return os.path.join(checkpoint_dir, f"stacks-attempt-{attempt}-rank-{rank}.txt")


_dump_file: Optional[IO[str]] = None


def install_stack_dump(checkpoint_dir: str, attempt: int, rank: int) -> Optional[str]:
    """Registers the stack dump on STACK_SIGNAL (all threads, appended); None where it cannot
    (no such signal here, the directory is not writable, or the script already handles it)."""
    global _dump_file
    if signal.getsignal(STACK_SIGNAL) not in (signal.SIG_DFL, None):
        return None  # the script's own handler wins
    path = stack_dump_path(checkpoint_dir, attempt, rank)
    try:
        os.makedirs(checkpoint_dir, exist_ok=True)
        _dump_file = open(path, "w")  # kept open: faulthandler writes to its descriptor
        faulthandler.register(STACK_SIGNAL, file=_dump_file, all_threads=True, chain=False)
    except (OSError, ValueError, AttributeError, RuntimeError):
        return None
    return path


class RankSummaries:
    def __init__(self, api_url: str, job_id: str, token: Optional[str], attempt: int, rank: int,
                 interval_s: float = DEFAULT_INTERVAL_S, timeout_s: float = 3.0):
        self.url = f"{api_url.rstrip('/')}/v1/jobs/{job_id}/ranks"
        self._token = token
        self._attempt = attempt
        self._rank = rank
        self._interval_s = max(0.2, interval_s)
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        self._sums: Dict[str, float] = {k: 0.0 for k in _FIELDS}
        self._step = -1
        self._phase = "idle"
        self._phase_since = time.monotonic()
        self._stopping = threading.Event()
        self.posts_ok = 0
        self.posts_failed = 0
        self.last_error: Optional[str] = None
        self._thread = threading.Thread(target=self._run, name="goodput-rank-summary", daemon=True)
        self._thread.start()

    def phase(self, name: str) -> None:
        """'step' (from the loader's begin_step) or 'between' (after the SDK's end-of-step work)."""
        with self._lock:
            self._phase = name
            self._phase_since = time.monotonic()

    def step_done(self, step: int, data_wait_s: float, compute_s: float, sync_s: float,
                  between_s: float) -> None:
        with self._lock:
            s = self._sums
            s["steps"] += 1
            s["data_wait_s"] += data_wait_s
            s["compute_s"] += compute_s
            s["sync_s"] += sync_s
            s["between_s"] += between_s
            self._step = step

    def close(self, timeout_s: float = 1.0) -> None:
        self._stopping.set()
        self._thread.join(timeout_s)

    def _run(self) -> None:
        while not self._stopping.wait(self._interval_s):
            try:
                self._post_once()
            except Exception as error:  # never let the thread die: training keeps going
                self.last_error = f"{type(error).__name__}: {error}"

    def _post_once(self) -> None:
        with self._lock:
            sums, self._sums = self._sums, {k: 0.0 for k in _FIELDS}
            window: Dict[str, Any] = dict(sums, steps=int(sums["steps"]), step=self._step,
                                          phase=self._phase,
                                          phase_s=max(0.0, time.monotonic() - self._phase_since))
        if self._post({"attempt": self._attempt, "rank": self._rank, "window": window}):
            self.posts_ok += 1
            return
        self.posts_failed += 1
        with self._lock:  # kept for the next post
            for k in _FIELDS:
                self._sums[k] += sums[k]

    def _post(self, body: Dict[str, Any]) -> bool:
        headers = {"Content-Type": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode("utf-8"),
                                         headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_s) as response:
                response.read()
                return True
        except urllib.error.HTTPError as error:
            self.last_error = f"HTTP {error.code}"
            if error.code in (400, 404, 409):
                return True  # refused for good (an old server, an ended attempt): do not pile up
        except (urllib.error.URLError, OSError, ValueError) as error:
            self.last_error = f"{type(error).__name__}: {error}"
        return False
