"""How a Runtime ends: the checkpointed exit on a stop, and the exit hook (shutdown) that flushes
the last measurements and tears the process group down without aborting the interpreter.

A mixin of Runtime (runtime.py), apart because the exit path has its own hazards (late SIGTERMs,
gloo threads at finalization, a script's own destroy_process_group) and its own reasons, spelled
out below; it reads the Runtime's state and never outlives it.
"""

import sys
import time
from typing import TYPE_CHECKING, Optional

import torch.distributed as dist

from .env import EXIT_CHECKPOINTED

if TYPE_CHECKING:
    from .control_channel import ControlRounds
    from .step_reporting import StepReporting
    from .stop_signal import StopSignal
    from .trackers import ScalarPublisher

# Seconds the exit hook releases the GIL after destroying the process group (see shutdown()).
EXIT_GIL_RELEASE_S = 0.1


class RuntimeExit:
    """The exit half of Runtime; the attributes below are the Runtime's (set in its __init__)."""

    rank: int
    steps_done: int
    stop_signal: "StopSignal"
    reporting: "StepReporting"
    scalars: "ScalarPublisher"
    _rounds: "Optional[ControlRounds]"
    _shut_down: bool
    _exiting_checkpointed: bool

    def checkpoint(self) -> Optional[str]:  # pragma: no cover - Runtime defines it
        raise NotImplementedError

    def exit_checkpointed(self) -> None:
        if self._rounds is not None:
            self._rounds.drain()
        path = self.checkpoint()
        # The stop is done: a SIGTERM that arrives while the process exits (a late one for this
        # rank, whose peers agreed on the stop first) must not turn exit 143 into death by the
        # signal once Python restores the default handlers at finalization.
        self.stop_signal.ignore_further()
        self._exiting_checkpointed = True
        if self.rank == 0:
            print(f"goodput: stop requested (SIGTERM); checkpointed step {self.steps_done} to "
                  f"{path}; exiting {EXIT_CHECKPOINTED}", file=sys.stderr, flush=True)
        # The process group is left to the exit hook (shutdown()): SystemExit runs the script's
        # own `finally: dist.destroy_process_group()` first (torchrun scripts tear down that way),
        # which fails on a group already gone and turns exit 143 into exit 1.
        self._finish_reporting()
        sys.stdout.flush()
        sys.exit(EXIT_CHECKPOINTED)

    def shutdown(self) -> None:
        """Best-effort, idempotent: last report flush (at most 2 s), step log, in-flight control
        rounds, then the process group unless the script already destroyed it; then SIGTERM is
        ignored (the exit hook runs once the script has ended)."""
        self._finish_reporting()
        # Not once destroyed, by an earlier call or by the script.
        if self._rounds is not None and dist.is_initialized():
            try:
                dist.destroy_process_group()
            except Exception as error:  # a peer that already died: nothing left to agree on
                print(f"goodput: process group shutdown: {error}", file=sys.stderr)
            # A gloo worker thread may still hold the last collective's tensor; freeing it takes
            # the GIL, and a thread that gets the GIL only at finalization aborts the process
            # (SIGABRT after a finished job). Releasing the GIL here lets it finish first: under
            # tests/tools/gloo_exit_amplifier.py --hold-gil-s 0.3, 12 of 20 runs aborted without
            # this, 0 of 20 with it. Bounded, unlike a barrier: ranks that disagree on when to
            # stop are not held.
            time.sleep(EXIT_GIL_RELEASE_S)
        # The script has ended; what is left is the interpreter's finalization, which restores
        # the default SIGTERM action first and may then take a while (a loader's persistent
        # workers shut down). A stop arriving then killed the replica (exit 143 without a
        # checkpoint, so the control plane relaunched a finished job); ignored, it exits as the
        # script ended. Python keeps an ignored signal ignored through finalization.
        if self.stop_signal.installed:
            self.stop_signal.ignore_further()

    def _finish_reporting(self) -> None:
        """Idempotent: last report flush, step log, in-flight control rounds drained."""
        if self._shut_down:
            return
        self._shut_down = True
        if self.stop_signal.is_set() and not self._exiting_checkpointed and self.rank == 0 \
                and getattr(sys, "last_value", None) is None:  # set by an uncaught exception
            # The stop came after the last step that polls it (after remaining_epochs()): the
            # script ran to its end, so there is nothing to checkpoint and nothing is lost.
            print(f"goodput: stop requested (SIGTERM) after the last training step (step "
                  f"{self.steps_done}); the script ran to its end, nothing to checkpoint",
                  file=sys.stderr, flush=True)
        self.reporting.close()
        self.scalars.close()
        if self._rounds is not None and dist.is_initialized():
            try:
                self._rounds.drain()
            except Exception as error:  # a peer that already died: nothing left to agree on
                print(f"goodput: draining the control rounds at exit: {error}", file=sys.stderr)

