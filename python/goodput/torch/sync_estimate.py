"""Gradient-sync time of the steps whose all-reduce ran inside backward, where nobody times it.

On ordinary steps DDP's C++ reducer overlaps the all-reduce with backward: the host sees one
forward+backward span and cannot tell computing from waiting for the network. Measuring steps
(every few steps, see step_spacing.py) run backward without the all-reduce and then the
all-reduce on its own, so their forward+backward is the compute alone and their sync time is
measured.

At each measuring step, its forward+backward is compared with the recent average of ordinary
steps' forward+backward (all-reduce inside); the difference is how much longer a step takes
because it synchronizes (the exposed part of the all-reduce plus its interference with
backward), which is what the control plane's throughput model calls sync time. Comparing with
the steps just before it, rather than with long averages, keeps a change of machine load from
showing up as sync time. The differences are smoothed over measuring steps, and the result,
clamped to [0, the step's forward+backward], is the sync time reported for ordinary steps.
Until the first difference exists, the last measured (non-overlapped) all-reduce time stands in.
Everything restarts when the batch configuration changes, because the compute time changes with
it, and the first step of each kind after a (re)start is skipped: it carries one-time costs
(allocation, DDP's bucket rebuild).
"""

from typing import Optional

from .step_spacing import smooth

RECENT_WEIGHT = 0.2      # ordinary steps: the average covers the last few steps
DIFFERENCE_WEIGHT = 0.3  # measuring steps are rare: the newest difference weighs more


class SyncTimeEstimate:
    def __init__(self) -> None:
        self._last_measured_s = 0.0
        self.reset()

    def reset(self) -> None:
        self._recent_with_sync_s: Optional[float] = None
        self._difference_s: Optional[float] = None
        self._warm_measured = False
        self._warm_overlapped = False

    def measured(self, forward_backward_s: float, sync_s: float) -> None:
        """A measuring step: backward alone took forward_backward_s, the all-reduce sync_s."""
        self._last_measured_s = sync_s
        if self._warm_measured and self._recent_with_sync_s is not None:
            self._difference_s = smooth(self._difference_s,
                                         self._recent_with_sync_s - forward_backward_s,
                                         DIFFERENCE_WEIGHT)
        self._warm_measured = True

    def overlapped(self, forward_backward_and_sync_s: float) -> float:
        """An ordinary step's forward+backward with the all-reduce inside; returns its sync."""
        if self._warm_overlapped:
            self._recent_with_sync_s = smooth(self._recent_with_sync_s,
                                               forward_backward_and_sync_s, RECENT_WEIGHT)
        self._warm_overlapped = True
        sync_s = self._last_measured_s if self._difference_s is None else self._difference_s
        return max(0.0, min(sync_s, forward_backward_and_sync_s))

