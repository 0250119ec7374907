"""Per-step time breakdowns written as JSON for `goodput doctor` (GOODPUT_STEP_LOG).

Format: {"kind": "goodput.step_breakdown", "job": str, "steps": [{"rank", "step", "data_wait_s",
"forward_backward_s", "sync_s", "optimizer_s"}, ...]}. Only the newest MAX_STEPS steps are kept.
A path containing "{rank}" gets one file per rank; otherwise rank 0 alone writes it. Writes are
atomic (temp file + rename), so the doctor never reads half a file.
"""

import json
import os
from collections import deque
from typing import Deque, Dict, Optional

MAX_STEPS = 10_000


class StepLog:
    def __init__(self, path: Optional[str], job: str, rank: int):
        self.job = job
        self.rank = rank
        self.path: Optional[str] = None
        if path and ("{rank}" in path or rank == 0):
            self.path = path.replace("{rank}", str(rank))
        self._steps: Deque[Dict[str, float]] = deque(maxlen=MAX_STEPS)

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def append(self, step: int, data_wait_s: float, forward_backward_s: float, sync_s: float,
               optimizer_s: float) -> None:
        self._steps.append({"rank": self.rank, "step": step, "data_wait_s": data_wait_s,
                            "forward_backward_s": forward_backward_s, "sync_s": sync_s,
                            "optimizer_s": optimizer_s})

    def write(self) -> None:
        if self.path is None:
            return
        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, exist_ok=True)
        temp = f"{self.path}.tmp-{os.getpid()}"
        with open(temp, "w") as f:
            json.dump({"kind": "goodput.step_breakdown", "job": self.job,
                       "steps": list(self._steps)}, f)
        os.replace(temp, self.path)
