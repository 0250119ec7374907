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
"""

import atexit
import os
import sys
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

import torch
import torch.distributed as dist

from .batch_config import BatchConfig, BatchLimits
from .checkpoint_store import CheckpointStore
from .control_channel import ControlChannel, PendingReduce
from .env import EXIT_CHECKPOINTED, JobEnv
from .report_client import ReportClient
from .rng_state import capture_rng, reseed_for_new_rank, restore_rng
from .stop_signal import StopSignal
from .step_log import StepLog
from .step_spacing import StepSpacing
from .sync_estimate import SyncTimeEstimate
from .trackers import ScalarPublisher
from .worker_signals import TorchWorkerGuard

# Layout of the control vector (see control_channel.py).
_STOP, _CHECKPOINT, _VERSION, _LOCAL_BSZ, _ACCUM, _NOISE_VALID, _ROUND_EVERY, \
    _MEASURE_EVERY = range(8)
_HEAD_LEN = 8
# Spacing of control rounds and gradient-noise measurements: step_spacing.py.


@dataclass
class MicroStep:
    """Where the current micro-batch sits in its optimizer step."""
    index: int
    sync: bool          # last micro-batch of the optimizer step: all-reduce and step now
    local_bsz: int      # this rank's micro-batch size
    global_count: int   # samples in this micro-step over all ranks


@dataclass
class NoiseSample:
    """One step's gradient-noise measurement of the model (see grad_noise.py)."""
    small_sqr: Any      # float or 0-d tensor: this rank's |g_local|^2 (mean over its samples)
    total_sqr: Any      # float or 0-d tensor: |g_bar|^2 after all-reduce
    small_batch: int
    total_batch: int
    biased: bool = False


@dataclass
class StepTiming:
    optimizer_start_s: float
    optimizer_end_s: float
    sync_s: Optional[float]  # None: the all-reduce ran inside backward, untimed (estimated)


class Runtime:
    def __init__(self, env: JobEnv, device: torch.device, checkpoint_interval_s: float,
                 checkpoint_every_epoch: bool):
        self.env = env
        self.device = device
        self.rank = env.rank
        self.world_size = env.world_size
        self.distributed = env.world_size > 1
        self.checkpoint_interval_s = checkpoint_interval_s
        self.checkpoint_every_epoch = checkpoint_every_epoch
        self.store = CheckpointStore(env.checkpoint_dir)
        #: SIGTERM -> stop flag; installed by install_process_hooks(), not here
        self.stop_signal = StopSignal()
        self._worker_guard = TorchWorkerGuard()
        loaded = self.store.load_latest()
        self.restored: Optional[Dict[str, Any]] = loaded[0] if loaded else None
        self.restored_path: Optional[str] = loaded[1] if loaded else None
        sdk = self.restored["sdk"] if self.restored else {}
        self.steps_done: int = sdk.get("steps_done", 0)
        self.samples_done: int = sdk.get("samples_done", 0)
        self.epoch: Optional[int] = sdk.get("epoch")
        self.progress: float = sdk.get("progress", 0.0)
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
        self.reporter: Optional[ReportClient] = None
        self.step_log = StepLog(env.step_log_path, env.job_id or "local", env.rank)
        #: trackers of the SDK's scalars (trackers.py); TensorBoard added when importable
        self.scalars = ScalarPublisher.for_job(os.environ, env.rank, env.checkpoint_dir,
                                               env.has_control_plane)
        self.last_loss: Optional[float] = None
        self._objects: Dict[str, Any] = {}
        self._noise_sink: Optional[Callable[[float, float, int, int, bool, int], None]] = None
        self._control = ControlChannel(device) if self.distributed else None
        self._pending: Deque[Tuple[PendingReduce, Optional[Tuple[int, int, int]]]] = deque()
        self._applied_version = 0
        self.round_every = 1
        self.measure_every = 1
        self._spacing = StepSpacing()
        self._sync_estimate = SyncTimeEstimate()
        self._report_skip_steps = 1
        self._step_start_s: Optional[float] = None
        self._step_data_wait_s = 0.0
        self._last_checkpoint_s = time.monotonic()
        #: wall time when the newest checkpoint this attempt would resume from became durable
        #: (the one restored at start counts from then); None until there is one
        self.checkpoint_time_s: Optional[float] = time.time() if self.restored_path else None
        self._checkpoint_requested = False
        self._rng_restored = False
        self._shut_down = False
        #: set by the model wrapper: () -> (grad_sqr, grad_var) for reports, None until known
        self.noise_values_provider: Optional[
            Callable[[], Tuple[Optional[float], Optional[float]]]] = None
        if self.restored_path and self.rank == 0:
            print(f"goodput: resuming from {self.restored_path} (step {self.steps_done}, "
                  f"epoch {self.epoch}, attempt {env.attempt}, {env.world_size} replica(s))",
                  file=sys.stderr, flush=True)

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

    # ---- registration and restore -------------------------------------------------------

    def register(self, name: str, obj: Any) -> bool:
        """Adds a checkpointed object (state_dict/load_state_dict); restores it if the loaded
        checkpoint has it. Returns True if it was restored."""
        if name in self._objects:
            raise ValueError(f"goodput: two checkpointed objects are named {name!r}; pass name=")
        self._objects[name] = obj
        saved = (self.restored or {}).get("objects", {}).get(name)
        if saved is not None:
            obj.load_state_dict(saved)
            return True
        return False

    def restore_rng_once(self) -> None:
        """Restores this rank's RNG streams from the checkpoint (once, after model creation)."""
        if self._rng_restored or not self.restored:
            return
        self._rng_restored = True
        states = self.restored.get("rng") or []
        if self.rank < len(states):
            restore_rng(states[self.rank])
        elif states:
            reseed_for_new_rank(states[0], self.rank)

    def set_noise_sink(self, sink: Callable[[float, float, int, int, bool, int], None]) -> None:
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
        if self.env.has_control_plane and self.rank == 0:
            self.reporter = ReportClient(self.env.api_url, self.env.job_id, self.env.token,
                                         self.env.attempt, limits.to_report(),
                                         interval_s=self.env.report_interval_s)

    @property
    def init_batch_size(self) -> Optional[int]:
        return self.limits.init_batch_size if self.limits else None

    def total_batch_size(self) -> Optional[int]:
        return self.batch.total_batch_size(self.world_size) if self.batch else None

    # ---- step boundaries ----------------------------------------------------------------

    def begin_step(self) -> None:
        """Called by the training loader before an optimizer step's first micro-batch."""
        stop = False
        if self.distributed:
            while len(self._pending) >= 2:
                stop |= self._apply_control(*self._pending.popleft())
        else:
            stop = self.stop_signal.is_set()
            self._apply_remote_config_locally()
            if self._checkpoint_due():
                self.checkpoint()
        if stop:
            self.exit_checkpointed()
        self._step_start_s = time.perf_counter()
        self._step_data_wait_s = 0.0

    def add_data_wait(self, seconds: float) -> None:
        self._step_data_wait_s += seconds

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
        start_s = self._step_start_s if self._step_start_s is not None else timing.optimizer_start_s
        step_time_s = timing.optimizer_end_s - start_s
        optimizer_s = timing.optimizer_end_s - timing.optimizer_start_s
        data_wait_s = self._step_data_wait_s
        forward_backward_and_sync_s = max(0.0, step_time_s - data_wait_s - optimizer_s)
        sync_s = self._sync_time(timing.sync_s, forward_backward_and_sync_s)
        forward_backward_s = max(0.0, forward_backward_and_sync_s - sync_s)
        self._step_start_s = timing.optimizer_end_s  # used when no loader drives the steps
        self._step_data_wait_s = 0.0
        if self.step_log.enabled:
            self.step_log.append(self.steps_done, data_wait_s, forward_backward_s, sync_s,
                                 optimizer_s)
        if self.reporter is not None:
            if self._report_skip_steps > 0:
                self._report_skip_steps -= 1  # warm-up step after a (re)configuration
            else:
                self.reporter.submit(self._report_record(step_time_s, sync_s, data_wait_s,
                                                         forward_backward_s, optimizer_s))
        self._spacing.observe_step(step_time_s)
        if self.distributed:
            if round_step:
                launch_start_s = time.perf_counter()
                self._launch_control(noise)
                self._spacing.observe_round_cost(time.perf_counter() - launch_start_s)
        else:
            if noise is not None and self._noise_sink is not None:
                self._noise_sink(float(noise.small_sqr), float(noise.total_sqr),
                                 noise.small_batch, noise.total_batch, noise.biased,
                                 self.measure_every)
            # alone: no agreement needed, and no rounds
            self.measure_every = self._proposed_spacing()[1]

    def _sync_time(self, measured_s: Optional[float], forward_backward_and_sync_s: float) -> float:
        """This step's gradient-sync time: measured on measuring steps, estimated on the others
        (see sync_estimate.py); 0 with one replica."""
        if not self.distributed:
            return measured_s or 0.0
        if measured_s is not None:
            self._sync_estimate.measured(max(0.0, forward_backward_and_sync_s - measured_s),
                                         measured_s)
            return measured_s
        return self._sync_estimate.overlapped(forward_backward_and_sync_s)

    def end_epoch(self) -> None:
        """Blocking agreement between epochs: stop or checkpoint if any rank asks for it."""
        stop = False
        if self.distributed:
            while self._pending:
                stop |= self._apply_control(*self._pending.popleft())
            flags = self._control_flags()
            placeholders = [torch.zeros((), device=self.device) for _ in range(2)]
            values = self._control.launch(flags, placeholders).result()
            stop |= values[_STOP] > 0
            self._apply_version(values)
            checkpoint = values[_CHECKPOINT] > 0
        else:
            stop = self.stop_signal.is_set()
            self._apply_remote_config_locally()
            checkpoint = self._checkpoint_due()
        if stop:
            self.exit_checkpointed()
        if checkpoint or self.checkpoint_every_epoch:
            self.checkpoint()

    def _checkpoint_due(self) -> bool:
        due = self._checkpoint_requested or \
            time.monotonic() - self._last_checkpoint_s >= self.checkpoint_interval_s
        return due

    def _control_flags(self) -> List[float]:
        flags = [0.0] * _HEAD_LEN
        flags[_STOP] = 1.0 if self.stop_signal.is_set() else 0.0
        if self.rank == 0:
            flags[_CHECKPOINT] = 1.0 if self._checkpoint_due() else 0.0
            flags[_ROUND_EVERY], flags[_MEASURE_EVERY] = map(float, self._proposed_spacing())
            config = self.reporter.latest_config if self.reporter else None
            if config is not None:
                flags[_VERSION] = float(config.version)
                flags[_LOCAL_BSZ] = float(config.local_bsz)
                flags[_ACCUM] = float(config.accum_steps)
        return flags

    def add_measure_cost(self, seconds: float) -> None:
        """Host time one measuring step spent measuring: its whole stand-alone all-reduce (an
        upper bound on what measuring adds, since an ordinary step hides part of the all-reduce
        behind backward), the norms, and the copies in and out of the flat buffers."""
        self._spacing.observe_measure_cost(seconds)

    def _proposed_spacing(self) -> Tuple[int, int]:
        """(round_every, measure_every) that keep rounds and measurements within budget."""
        return self._spacing.propose()

    def _launch_control(self, noise: Optional[NoiseSample]) -> None:
        flags = self._control_flags()
        # Fixed length on every rank and step, whatever the measurement: a collective whose
        # size differed between ranks would hang.
        tensors: List[torch.Tensor] = [torch.zeros((), device=self.device),
                                       torch.zeros((), device=self.device)]
        meta = None
        if noise is not None and self._noise_sink is not None:
            flags[_NOISE_VALID] = 1.0
            tensors = [torch.as_tensor(noise.small_sqr), torch.as_tensor(noise.total_sqr)
                       / self.world_size]
            meta = (noise.small_batch, noise.total_batch, self.measure_every)
        self._pending.append((self._control.launch(flags, tensors), meta))

    def _apply_control(self, pending: PendingReduce,
                       meta: Optional[Tuple[int, int, int]]) -> bool:
        values = pending.result()
        self._apply_version(values)
        stop = values[_STOP] > 0
        if values[_CHECKPOINT] > 0 and not stop:
            self.checkpoint()
        if meta is not None and values[_NOISE_VALID] == self.world_size and self._noise_sink:
            small_sqr = values[_HEAD_LEN] / self.world_size
            total_sqr = values[_HEAD_LEN + 1]
            self._noise_sink(small_sqr, total_sqr, meta[0], meta[1], False, meta[2])
        return stop

    def _apply_version(self, values: List[float]) -> None:
        if values[_ROUND_EVERY] >= 1 and values[_MEASURE_EVERY] >= 1:
            self.round_every = int(values[_ROUND_EVERY])
            self.measure_every = int(values[_MEASURE_EVERY])
        version = int(values[_VERSION])
        if version > self._applied_version and values[_LOCAL_BSZ] >= 1:
            self._applied_version = version
            self._set_batch(BatchConfig(int(values[_LOCAL_BSZ]), int(values[_ACCUM])))

    def _apply_remote_config_locally(self) -> None:
        config = self.reporter.latest_config if self.reporter else None
        if config is not None and config.version > self._applied_version:
            self._applied_version = config.version
            self._set_batch(BatchConfig(config.local_bsz, config.accum_steps))

    def _set_batch(self, batch: BatchConfig) -> None:
        if batch != self.batch:
            self.batch = batch
            self._report_skip_steps = 1
            self._sync_estimate.reset()  # compute time changes with the batch

    def _report_record(self, step_time_s: float, sync_s: float, data_wait_s: float,
                       forward_backward_s: float, optimizer_s: float) -> Dict[str, Any]:
        grad_sqr, grad_var = self._noise_values()
        record: Dict[str, Any] = {
            "time_s": time.time(), "step": self.steps_done, "epoch": self.epoch or 0,
            "num_nodes": self.env.num_nodes, "num_replicas": self.world_size,
            "local_bsz": self.batch.local_bsz if self.batch else None,
            "accum_steps": self.batch.accum_steps if self.batch else 0,
            "step_time_s": step_time_s, "sync_time_s": sync_s,
            "grad_sqr": grad_sqr, "grad_var": grad_var,
            "samples": self.samples_done, "loss": self.last_loss,
            "breakdown": {"data_wait_s": data_wait_s, "forward_backward_s": forward_backward_s,
                          "sync_s": sync_s, "optimizer_s": optimizer_s},
        }
        remaining = self.remaining_samples()
        if remaining is not None:  # unknown: omitted (the contract's field is optional)
            record["remaining_samples"] = remaining
        if self.checkpoint_time_s is not None:
            record["checkpoint_time_s"] = self.checkpoint_time_s
        if self.model_parameters is not None:
            record["model_parameters"] = self.model_parameters
        return record

    def _noise_values(self) -> Tuple[Optional[float], Optional[float]]:
        return self.noise_values_provider() if self.noise_values_provider else (None, None)

    # ---- checkpoint and exit ------------------------------------------------------------

    def request_checkpoint(self) -> None:
        """Asks for a checkpoint at the next step boundary (every rank agrees on which)."""
        self._checkpoint_requested = True

    def state_dict(self) -> Dict[str, Any]:
        return {"steps_done": self.steps_done, "samples_done": self.samples_done,
                "epoch": self.epoch, "progress": self.progress,
                "batch": (self.batch.local_bsz, self.batch.accum_steps) if self.batch else None,
                "world_size": self.world_size, "attempt": self.env.attempt}

    def checkpoint(self) -> Optional[str]:
        """Collective: every rank must call it at the same boundary. Rank 0 writes the file;
        returns its path on rank 0."""
        rng = capture_rng()
        if self.distributed:
            all_rng: List[Any] = [None] * self.world_size
            dist.all_gather_object(all_rng, rng)
        else:
            all_rng = [rng]
        path = None
        if self.rank == 0:
            payload = {"sdk": self.state_dict(),
                       "objects": {name: obj.state_dict() for name, obj in self._objects.items()},
                       "rng": all_rng}
            path = self.store.save(payload)
        if self.distributed:
            dist.barrier()  # nobody may exit before the checkpoint is durable
        self._last_checkpoint_s = time.monotonic()
        self.checkpoint_time_s = time.time()
        self._checkpoint_requested = False
        self.step_log.write()
        return path

    def exit_checkpointed(self) -> None:
        if self.distributed:
            self._drain_pending()
        path = self.checkpoint()
        if self.rank == 0:
            print(f"goodput: stop requested (SIGTERM); checkpointed step {self.steps_done} to "
                  f"{path}; exiting {EXIT_CHECKPOINTED}", file=sys.stderr, flush=True)
        self.shutdown()
        sys.stdout.flush()
        sys.exit(EXIT_CHECKPOINTED)

    def _drain_pending(self) -> None:
        """Waits for the control rounds still in flight. Every rank launched the same rounds, so
        they complete; a process that exits with gloo work in flight aborts in C++ instead."""
        while self._pending:
            pending, _ = self._pending.popleft()
            pending.result()

    def shutdown(self) -> None:
        """Best-effort, idempotent: last report flush (at most 2 s), step log, in-flight control
        rounds, process group."""
        if self._shut_down:
            return
        self._shut_down = True
        if self.reporter is not None:
            self.reporter.close(timeout_s=2.0)
        self.scalars.close()
        self.step_log.write()
        if self.distributed and dist.is_initialized():
            try:
                self._drain_pending()
                dist.destroy_process_group()
            except Exception as error:  # a peer that already died: nothing left to agree on
                print(f"goodput: process group shutdown: {error}", file=sys.stderr)

