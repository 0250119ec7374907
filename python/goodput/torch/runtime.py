"""The per-process SDK state shared by init(), the loader, the model wrapper and the epochs.

Step protocol (all ranks execute it in the same order, which is what keeps them in agreement):
  * the training loader calls `begin_step()` before the first micro-batch of every optimizer step:
    it reads the control all-reduce launched two rounds earlier and acts on it (stop =
    checkpoint + exit 143, periodic checkpoint, new batch configuration, noise update);
  * the model wrapper calls `end_step()` after every real optimizer step: it records the timing,
    hands it to the report thread, and on round steps launches the control all-reduce;
  * `remaining_epochs()` calls `end_epoch()` between epochs: a blocking agreement round.
Checkpoints are taken only at these boundaries, so the saved loader position, optimizer state and
LR scheduler agree with each other.

The concerns live in their own modules: checkpoints (checkpointing.py), the control rounds
(control_channel.py), step timing and reports (step_reporting.py), the stop signal
(stop_signal.py, worker_signals.py), the checkpointed exit and the exit hook (runtime_exit.py).
Constructing a Runtime touches no process-wide state; `install_process_hooks()` (called by init())
does, and `remove_process_hooks()` undoes it.
"""

import atexit
import os
import time
from typing import Any, Callable, Dict, Optional, Tuple

import torch

from .batch_config import BatchConfig, BatchLimits
from .checkpointing import Checkpointing
from .control_channel import ControlRounds, RoundDecision, RoundProposal
from .env import JobEnv
from .rank_summary import DEFAULT_INTERVAL_S as DEFAULT_RANK_INTERVAL_S, RankSummaries, install_stack_dump
from .report_client import ReportClient
from .runtime_exit import EXIT_GIL_RELEASE_S, RuntimeExit
from .step_log import StepLog
from .step_reporting import StepReporting
from .step_spacing import StepSpacing
from .step_types import MicroStep, NoiseSample, StepTiming
from .stop_signal import StopSignal
from .trackers import ScalarPublisher
from .worker_signals import TorchWorkerGuard

__all__ = ["EXIT_GIL_RELEASE_S", "MicroStep", "NoiseSample", "Runtime", "StepTiming"]

NoiseSink = Callable[[float, float, int, int, bool, int], None]


class Runtime(RuntimeExit):
    def __init__(self, env: JobEnv, device: torch.device, checkpoint_interval_s: float,
                 checkpoint_every_epoch: bool):
        self.env = env
        self.device = device
        self.rank = env.rank
        self.world_size = env.world_size
        self.distributed = env.world_size > 1
        self.checkpoint_every_epoch = checkpoint_every_epoch
        self.checkpoints = Checkpointing(env.checkpoint_dir, env.rank, env.world_size,
                                         checkpoint_interval_s)
        sdk = self.checkpoints.restored_sdk_state
        self.steps_done: int = sdk.get("steps_done", 0)
        self.samples_done: int = sdk.get("samples_done", 0)
        self.epoch: Optional[int] = sdk.get("epoch")
        self.progress: float = sdk.get("progress", 0.0)
        #: the epoch whose body remaining_epochs() is running; None outside its loop body
        self.active_epoch: Optional[int] = None
        #: epoch count of the job, set by remaining_epochs(); None: unknown length
        self.total_epochs: Optional[int] = None
        #: samples in one epoch (the training loader's data set); None without a training loader
        self.epoch_size: Optional[int] = None
        #: elements of the parameters whose gradients are all-reduced, set by the model wrapper;
        #: None without one (then omitted from the reports)
        self.model_parameters: Optional[int] = None
        # (epoch, samples of it consumed over all ranks) after the last training micro-batch
        self._epoch_position: Tuple[int, int] = (-1, 0)
        self.limits: Optional[BatchLimits] = None
        self.batch: Optional[BatchConfig] = None
        self.micro: Optional[MicroStep] = None
        self.reporting = StepReporting(StepLog(env.step_log_path, env.job_id or "local", env.rank,
                                               env.local_world_size),
                                       self.distributed)
        #: trackers of the SDK's scalars (trackers.py); TensorBoard added when importable
        self.scalars = ScalarPublisher.for_job(os.environ, env.rank, env.checkpoint_dir,
                                               env.has_control_plane)
        self.last_loss: Optional[float] = None
        #: SIGTERM -> stop flag; installed by install_process_hooks(), not here
        self.stop_signal = StopSignal()
        self._worker_guard = TorchWorkerGuard()
        self._noise_sink: Optional[NoiseSink] = None
        # The model wrapper's learning-rate rule by name (scaling_rules.rule_name), for reports.
        self.lr_rule: Optional[str] = None
        self._rounds = ControlRounds(device, env.world_size) if self.distributed else None
        self._applied_version = 0
        self.round_every = 1
        self.measure_every = 1
        self._spacing = StepSpacing()
        self._shut_down = False
        self._exiting_checkpointed = False
        #: set by the model wrapper: () -> (grad_sqr, grad_var) for reports, None until known
        self.noise_values_provider: Optional[
            Callable[[], Tuple[Optional[float], Optional[float]]]] = None
        self.checkpoints.announce_resume(self.steps_done, self.epoch, env.attempt)

    def install_process_hooks(self) -> None:
        """Process-wide hooks, installed by init() (never by the constructor, so that a test can
        build a Runtime and undo everything): the SIGTERM handler, the DataLoader workers' stop
        signal guard (worker_signals.py) and the exit hook that sends the last measurements."""
        self.stop_signal.install()
        self._worker_guard.install()
        atexit.register(self.shutdown)

    def remove_process_hooks(self) -> None:
        """Undoes install_process_hooks() (previous handlers restored)."""
        self.stop_signal.uninstall()
        self._worker_guard.uninstall()
        atexit.unregister(self.shutdown)

    # ---- views kept for the modules and tests that read them ------------------------------

    @property
    def reporter(self) -> Optional[ReportClient]:
        return self.reporting.reporter

    @property
    def step_log(self) -> StepLog:
        return self.reporting.step_log

    @property
    def restored(self) -> Optional[Dict[str, Any]]:
        return self.checkpoints.restored

    @property
    def restored_path(self) -> Optional[str]:
        return self.checkpoints.restored_path

    @property
    def checkpoint_time_s(self) -> Optional[float]:
        return self.checkpoints.checkpoint_time_s

    # ---- registration and restore -------------------------------------------------------

    def register(self, name: str, obj: Any) -> bool:
        """Adds a checkpointed object; restores it from the loaded checkpoint if it is there."""
        return self.checkpoints.register(name, obj)

    def restore_rng_once(self) -> None:
        self.checkpoints.restore_rng_once()

    def set_noise_sink(self, sink: NoiseSink) -> None:
        if self._noise_sink is not None:
            raise ValueError("goodput: only one AdaptiveDataParallel per job is supported")
        self._noise_sink = sink

    def set_training_loader(self, limits: BatchLimits, batch: BatchConfig,
                            epoch_size: Optional[int] = None) -> None:
        if self.limits is not None:
            raise ValueError("goodput: only one training AdaptiveDataLoader per job is supported; "
                             "pass train=False for evaluation loaders")
        self.limits = limits
        self.batch = batch
        self.epoch_size = epoch_size
        if self.env.has_control_plane:
            self.reporting.ranks = RankSummaries(
                self.env.api_url, self.env.job_id, self.env.token, self.env.attempt, self.rank,
                interval_s=float(os.environ.get("GOODPUT_RANK_INTERVAL_S") or DEFAULT_RANK_INTERVAL_S))
            install_stack_dump(os.environ.get("GOODPUT_CHECKPOINT_DIR") or self.env.checkpoint_dir,
                               self.env.attempt, self.rank)
        if self.env.has_control_plane and self.rank == 0:
            self.reporting.reporter = ReportClient(
                self.env.api_url, self.env.job_id, self.env.token, self.env.attempt,
                limits.to_report(), interval_s=self.env.report_interval_s)
            self.reporting.reporter.lr_rule = self.lr_rule

    @property
    def init_batch_size(self) -> Optional[int]:
        return self.limits.init_batch_size if self.limits else None

    def total_batch_size(self) -> Optional[int]:
        return self.batch.total_batch_size(self.world_size) if self.batch else None

    # ---- step boundaries ----------------------------------------------------------------

    def begin_step(self) -> None:
        """Called by the training loader before an optimizer step's first micro-batch."""
        boundary_s = time.perf_counter()
        stop = False
        if self._rounds is not None:
            for decision in self._rounds.due(keep=2):
                stop |= self._apply(decision)
        else:
            stop = self.stop_signal.is_set()
            self._apply_remote_config_locally()
            if self.checkpoints.due():
                self.checkpoint()
        if stop:
            self.exit_checkpointed()
        self.reporting.begin_step(boundary_s)

    def add_data_wait(self, seconds: float) -> None:
        self.reporting.add_data_wait(seconds)

    def note_micro_batch(self, micro: MicroStep, epoch: int = -1, position: int = 0) -> None:
        """Records a training micro-batch; `position` counts the samples of `epoch` consumed once
        it is done (over all ranks)."""
        self.micro = micro
        self.samples_done += micro.global_count
        self._epoch_position = (epoch, position)

    def remaining_samples(self) -> Optional[int]:
        """Training samples the job still has to process: a full epoch for every epoch not yet
        finished, less what the current one has consumed. None while the epoch count
        (remaining_epochs) or the epoch size (training AdaptiveDataLoader) is unknown."""
        if self.total_epochs is None or self.epoch_size is None or self.epoch is None:
            return None
        epoch, position = self._epoch_position
        done_in_epoch = position if epoch == self.epoch else 0  # not started: nothing done yet
        return max(0, (self.total_epochs - self.epoch) * self.epoch_size - done_in_epoch)

    def is_round_step(self) -> bool:
        """True during a step (before end_step) whose end launches a control round. Identical on
        every rank."""
        return self.steps_done % self.round_every == 0

    def is_measure_step(self) -> bool:
        """True during a step whose gradients are measured (always a round step). Identical on
        every rank."""
        return self.steps_done % self.measure_every == 0

    def end_step(self, timing: StepTiming, noise: Optional[NoiseSample], gain: float = 1.0,
                 lr_scale: float = 1.0) -> None:
        """Called by the model wrapper after each real optimizer step (with its AdaScale gain
        and learning-rate scale)."""
        round_step = self.is_round_step()
        self.steps_done += 1
        self.scalars.after_step(self, gain, lr_scale)
        step_time_s = self.reporting.end_step(self, timing)
        self._spacing.observe_step(step_time_s)
        if self._rounds is not None:
            if round_step:
                launch_start_s = time.perf_counter()
                measured = None
                if noise is not None and self._noise_sink is not None:
                    measured = (noise.small_sqr, noise.total_sqr, noise.small_batch,
                                noise.total_batch, self.measure_every)
                self._rounds.launch(self._proposal(), measured)
                self._spacing.observe_round_cost(time.perf_counter() - launch_start_s)
        else:
            if noise is not None and self._noise_sink is not None:
                self._noise_sink(float(noise.small_sqr), float(noise.total_sqr),
                                 noise.small_batch, noise.total_batch, noise.biased,
                                 self.measure_every)
            # alone: no agreement needed, and no rounds
            self.measure_every = self._proposed_spacing()[1]
        self.reporting.step_returned()  # the script's own time between steps starts here

    def begin_pass(self) -> None:
        """Called by the training loader when a pass over it starts (see step_reporting.py)."""
        self.reporting.new_pass()

    def end_epoch(self) -> None:
        """Blocking agreement between epochs: stop or checkpoint if any rank asks for it."""
        self.reporting.new_pass()
        if self._rounds is not None:
            stop = False
            for decision in self._rounds.due(keep=0):
                stop |= self._apply(decision)
            decision = self._rounds.blocking(self._proposal())
            stop |= decision.stop
            self._apply_spacing_and_config(decision)
            checkpoint = decision.checkpoint
        else:
            stop = self.stop_signal.is_set()
            self._apply_remote_config_locally()
            checkpoint = self.checkpoints.due()
        if stop:
            self.exit_checkpointed()
        if checkpoint or self.checkpoint_every_epoch:
            self.checkpoint()

    def add_measure_cost(self, seconds: float) -> None:
        """Host time one measuring step spent measuring: its whole stand-alone all-reduce (an
        upper bound on what measuring adds, since an ordinary step hides part of the all-reduce
        behind backward), the norms, and the copies in and out of the flat buffers."""
        self._spacing.observe_measure_cost(seconds)

    def _proposed_spacing(self) -> Tuple[int, int]:
        """(round_every, measure_every) that keep rounds and measurements within budget."""
        return self._spacing.propose()

    def _proposal(self) -> RoundProposal:
        if self.rank != 0:
            return RoundProposal(stop=self.stop_signal.is_set())
        remote = self.reporter.latest_config if self.reporter else None
        config = (remote.version, remote.local_bsz, remote.accum_steps) if remote else None
        return RoundProposal(self.stop_signal.is_set(), self.checkpoints.due(),
                             self._proposed_spacing(), config)

    def _apply(self, decision: RoundDecision) -> bool:
        """Acts on a round read back at a step boundary; True if the job must stop."""
        self._apply_spacing_and_config(decision)
        if decision.checkpoint and not decision.stop:
            self.checkpoint()
        if decision.noise is not None and self._noise_sink is not None:
            small_sqr, total_sqr, small_batch, total_batch, steps = decision.noise
            self._noise_sink(small_sqr, total_sqr, small_batch, total_batch, False, steps)
        return decision.stop

    def _apply_spacing_and_config(self, decision: RoundDecision) -> None:
        if decision.spacing is not None:
            self.round_every, self.measure_every = decision.spacing
        if decision.config is not None:
            version, local_bsz, accum_steps = decision.config
            if version > self._applied_version:
                self._applied_version = version
                self._set_batch(BatchConfig(local_bsz, accum_steps))

    def _apply_remote_config_locally(self) -> None:
        config = self.reporter.latest_config if self.reporter else None
        if config is not None and config.version > self._applied_version:
            self._applied_version = config.version
            self._set_batch(BatchConfig(config.local_bsz, config.accum_steps))

    def _set_batch(self, batch: BatchConfig) -> None:
        if batch != self.batch:
            self.batch = batch
            self.reporting.configuration_changed()

    # ---- checkpoint and exit ------------------------------------------------------------

    def request_checkpoint(self) -> None:
        """Asks for a checkpoint at the next step boundary (every rank agrees on which)."""
        self.checkpoints.request()

    def state_dict(self) -> Dict[str, Any]:
        return {"steps_done": self.steps_done, "samples_done": self.samples_done,
                "epoch": self.epoch, "progress": self.progress,
                "batch": (self.batch.local_bsz, self.batch.accum_steps) if self.batch else None,
                "world_size": self.world_size, "attempt": self.env.attempt}

    def checkpoint(self) -> Optional[str]:
        """Collective: every rank must call it at the same boundary. Rank 0 writes the file;
        returns its path on rank 0."""
        path = self.checkpoints.save(self.state_dict())
        self.step_log.write()
        return path
