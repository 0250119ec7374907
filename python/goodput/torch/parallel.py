"""AdaptiveDataParallel: DistributedDataParallel plus accumulation, gradient-noise measurement,
per-step learning-rate scaling, optional mixed precision, and checkpointing.

Cost model (why it is cheap): ordinary steps are plain DDP, no Python on the gradient path and
no communication hook: DDP's C++ reducer overlaps the all-reduce with backward and averages over
replicas while copying into its buckets. Accumulation micro-steps run under DDP's no_sync
(require_backward_grad_sync=False); after the last one, the replica-averaged sum is divided by
the number of micro-steps once (one multi-tensor division).
The gradient-noise statistics need |g_local|^2 before the all-reduce and |g_bar|^2 after it, so
on measuring steps (every `measure_every` steps, the same steps on every rank, spaced so that
measuring costs at most 1% of the training time) the last micro-step also runs under no_sync
and `measured_sync.GradientSync` all-reduces the gradients itself in a few flat chunks, with one
dot product per chunk before and after.
Both the division and GradientSync run when backward ends: a tensor hook on the model output
queues an autograd-engine callback (the division one more callback later, after DDP's own
end-of-backward copy-back). Gradients are therefore the global mean when `loss.backward()`
returns, as with DDP alone (gradient clipping between backward and step sees it); a model output
without tensors falls back to doing both in `optimizer.step()`.
The replicas' agreement (noise statistics, stop, config) rides on one tiny asynchronous
all-reduce per control round, read two rounds later (control_channel.py).
"""

import time
from typing import Any, Iterator, List, Optional, Tuple, Union

import torch
from torch.nn.parallel import DistributedDataParallel

from . import compat
from .grad_noise import GradientNoiseEstimator
from .measured_sync import DEFAULT_CHUNK_BYTES, GradientSync
from .noise_measurement import NoiseMeasurement
from .runtime import Runtime
from .scaling_rules import ScalingRule, resolve_rule, rule_name
from .step_types import NoiseSample, StepTiming
from .session import current


class AdaptiveDataParallel(torch.nn.Module):
    """Wraps `module` (moved to the job's device) and patches `optimizer.step`/`zero_grad`.

    The training loop stays the plain PyTorch one; `optimizer.step()` is a no-op on accumulation
    micro-steps and `zero_grad()` is a no-op while gradients are being accumulated. With
    amp=True on CUDA, call `model.backward(loss)` (it applies the GradScaler); on CPU, amp means
    bf16 autocast and plain `loss.backward()` works too.

    lr_scaling: None (AdaScale for SGD-like, its square root for Adam/AdamW), "adascale",
    "adamscale", "linear", "sqrt", "none" or a callable (scale, noise_estimator) -> factor.
    Model, optimizer, LR scheduler, loss scaler and noise statistics are restored from the
    latest checkpoint at construction.
    """

    def __init__(self, module: torch.nn.Module, optimizer: torch.optim.Optimizer,
                 lr_scheduler: Optional[Any] = None, *positional: Any,
                 lr_scaling: Union[str, ScalingRule, None] = None, amp: bool = False,
                 name: str = "model", **ddp_kwargs: Any):
        _refuse_adaptdl_arguments(positional, ddp_kwargs)
        super().__init__()
        runtime: Runtime = current()
        self._runtime = runtime
        self.module = module.to(runtime.device)
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.amp = amp
        self._device_type = runtime.device.type
        self.scaler = compat.grad_scaler(amp and self._device_type == "cuda")
        self._rule = resolve_rule(lr_scaling, optimizer)
        # The control plane states (and predicts) the learning-rate factor by the script's rule.
        runtime.lr_rule = rule_name(self._rule)
        if runtime.reporter is not None:
            runtime.reporter.lr_rule = runtime.lr_rule
        self._noise = NoiseMeasurement(runtime, self.module, self.scaler, self._rule)
        self._micro_count = 0
        self._in_step = False
        self._measure_cost_s = 0.0
        self._grads_pending = False
        self._scaled_backward = False
        self._sync_due = False  # DDP skipped this step's all-reduce: GradientSync owes it
        self._divide_due = False  # DDP averaged a sum over micro-steps: divide it once
        self._measured_sqr: Optional[Tuple[torch.Tensor, torch.Tensor]] = None
        self._measured_sync_s: Optional[float] = None
        self.last_lr_factor = 1.0
        self._last_loss: Optional[torch.Tensor] = None
        self.last_noise_sample: Optional[NoiseSample] = None
        runtime.register(name, _TrainingState(self))  # restores module/optimizer/scheduler before DDP broadcasts
        trained = sum(p.numel() for p in _parameters_ddp_syncs(self.module) if p.requires_grad)
        runtime.model_parameters = trained or None  # reported: the size of each gradient all-reduce
        runtime.restore_rng_once()
        if runtime.distributed:
            device_ids = [runtime.device.index] if self._device_type == "cuda" else None
            ddp = DistributedDataParallel(self.module, device_ids=device_ids, **ddp_kwargs)
            object.__setattr__(self, "_ddp", ddp)  # not a submodule: keeps state_dict keys
            self._grad_sync: Optional[GradientSync] = GradientSync(
                _parameters_ddp_syncs(self.module), runtime.world_size,
                getattr(ddp, "bucket_bytes_cap", DEFAULT_CHUNK_BYTES),
                track_unused=bool(getattr(ddp, "find_unused_parameters", False)))
        else:
            object.__setattr__(self, "_ddp", self.module)
            self._grad_sync = None
        runtime.set_noise_sink(self._noise.update)
        runtime.noise_values_provider = self._noise.report_values
        self._original_step = optimizer.step
        self._original_zero_grad = optimizer.zero_grad
        optimizer.step = _marked_as_scheduler_aware(self._step)  # type: ignore[assignment]
        optimizer.zero_grad = self._zero_grad  # type: ignore[assignment]

    @property
    def noise(self) -> Optional[GradientNoiseEstimator]:
        """The gradient-noise estimator (None until the first measurement)."""
        return self._noise.noise

    # ---- checkpoint state (registered with the runtime through _TrainingState) ----------

    def training_state(self) -> dict:
        state = {"module": self.module.state_dict(), "optimizer": self.optimizer.state_dict(),
                 "noise": self._noise.state_dict()}
        if self.lr_scheduler is not None:
            state["lr_scheduler"] = self.lr_scheduler.state_dict()
        if self.scaler is not None:
            state["scaler"] = self.scaler.state_dict()
        return state

    def load_training_state(self, state: dict) -> None:
        self.module.load_state_dict(state["module"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.lr_scheduler is not None and "lr_scheduler" in state:
            self.lr_scheduler.load_state_dict(state["lr_scheduler"])
        if self.scaler is not None and "scaler" in state:
            self.scaler.load_state_dict(state["scaler"])
        self._noise.saved_state = state.get("noise")

    # ---- forward / backward ----------------------------------------------------------------

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        finish_in_backward = False
        if self.training and torch.is_grad_enabled():
            finish_in_backward = self._before_training_forward()
        if not self.amp:
            output = self._ddp(*args, **kwargs)
        else:
            with compat.autocast(self._device_type, True):
                output = self._ddp(*args, **kwargs)
        if finish_in_backward:
            self._call_when_backward_ends(output, self._finish_gradients)
        return output

    def backward(self, loss: torch.Tensor) -> None:
        """loss.backward() through the GradScaler when amp is on CUDA; records the loss."""
        self._last_loss = loss.detach()
        if self.scaler is not None:
            self._scaled_backward = True
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

    def _before_training_forward(self) -> bool:
        """Bookkeeping of one training micro-step; True if its backward must end with our own
        measured all-reduce or with the division of an accumulated sum."""
        runtime = self._runtime
        micro = runtime.micro
        last = micro.sync if micro is not None else True
        self._micro_count += 1
        self._grads_pending = True
        # Decided identically on every rank: the loader's micro-steps and the measure steps are.
        measure = last and self._noise.wanted() and runtime.is_measure_step()
        if runtime.distributed:
            self._ddp.require_backward_grad_sync = last and not measure  # what no_sync() toggles
            self._sync_due = measure
            self._divide_due = last and not measure and self._micro_count > 1
            return self._sync_due or self._divide_due
        if self._micro_count == 2 and self._noise.wanted() and runtime.is_measure_step():
            self._noise.note_first_micro_batch()
        return False

    @staticmethod
    def _call_when_backward_ends(output: Any, callback: Any) -> None:
        """Runs `callback` once at the end of the backward pass through `output`."""
        queued = False

        def on_output_grad(grad: torch.Tensor) -> None:
            nonlocal queued
            if not queued:  # several outputs, one backward: one callback
                queued = True
                compat.queue_backward_callback(callback)

        for tensor in _tensors_in(output):
            if tensor.requires_grad:
                tensor.register_hook(on_output_grad)

    def _finish_gradients(self) -> None:
        """End of the last micro-step's backward (an autograd-engine callback)."""
        if self._sync_due:
            self._sync_measured()
        elif self._divide_due:
            # DDP copies its averaged buckets back into .grad in its own end-of-backward
            # callback, queued after this one; a callback queued now runs after it.
            compat.queue_backward_callback(self._divide_accumulated)

    def _divide_accumulated(self) -> None:
        """Replica mean of the sum over micro-steps -> mean over all samples."""
        if not self._divide_due:
            return
        self._divide_due = False
        compat.divide_(compat.grads_of(self.module.parameters()), self._micro_count)

    def _sync_measured(self) -> None:
        """The all-reduce DDP skipped on a measuring step, with the two square norms."""
        if not self._sync_due:
            return
        self._sync_due = False
        start_s = time.perf_counter()
        self._measured_sqr = self._grad_sync.run(self._micro_count)
        self._measured_sync_s = time.perf_counter() - start_s

    # ---- optimizer step ------------------------------------------------------------------

    def _zero_grad(self, *args: Any, **kwargs: Any) -> None:
        if self._grads_pending:
            return  # accumulating micro-steps of the current optimizer step
        self._original_zero_grad(*args, **kwargs)

    def _step(self, *args: Any, **kwargs: Any) -> Any:
        if self._in_step:
            # GradScaler.step(optimizer) calls optimizer.step() itself: that is the real step.
            return self._original_step(*args, **kwargs)
        micro = self._runtime.micro
        if micro is not None and not micro.sync and self._micro_count > 0:
            return None  # accumulation micro-step: the real step comes with the last one
        if self.scaler is not None and not self._scaled_backward and self._micro_count > 0:
            raise RuntimeError("goodput: amp=True on CUDA needs model.backward(loss) instead of "
                               "loss.backward() so the GradScaler can scale the loss")
        self._sync_measured()  # in case backward did not (no output tensor needed a grad)
        start_s = time.perf_counter()
        self._divide_accumulated()  # ditto
        if not self._runtime.distributed and self._micro_count > 1:
            # sum of micro-batch means -> mean (no DDP, no backward callback)
            compat.divide_(compat.grads_of(self.module.parameters()), self._micro_count)
        measure_start_s = time.perf_counter()
        noise = self._noise.sample(micro, self._micro_count, self._measured_sqr)
        self._measure_cost_s += time.perf_counter() - measure_start_s
        gain = self._noise.gain()
        factor = self._noise.lr_factor()
        self.last_lr_factor = factor
        saved_lrs = [group["lr"] for group in self.optimizer.param_groups]
        for group in self.optimizer.param_groups:
            group["lr"] = group["lr"] * factor
        self._in_step = True
        try:
            if self.scaler is not None:
                result = self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                result = self._original_step(*args, **kwargs)
        finally:
            self._in_step = False
            for group, lr in zip(self.optimizer.param_groups, saved_lrs):
                group["lr"] = lr
        self._runtime.progress += gain
        self.last_noise_sample = noise
        sync_s = self._measured_sync_s if self._runtime.distributed else 0.0
        if noise is not None or self._measured_sync_s is not None:
            # Host-side cost of measuring; on CUDA kernels are async, so the host times are
            # only indicative there.
            self._runtime.add_measure_cost(self._measure_cost_s + (self._measured_sync_s or 0.0))
        self._reset_step_state()
        self._record_loss()
        self._runtime.end_step(StepTiming(start_s, time.perf_counter(), sync_s), noise, gain,
                               factor)
        return result

    def _reset_step_state(self) -> None:
        self._micro_count = 0
        self._grads_pending = False
        self._scaled_backward = False
        self._noise.first_micro_sqr = None
        self._sync_due = False
        self._divide_due = False
        self._measured_sqr = None
        self._measured_sync_s = None
        self._measure_cost_s = 0.0

    def _record_loss(self) -> None:
        loss, self._last_loss = self._last_loss, None
        if loss is None:
            return
        # Why only sometimes on GPU: .item() waits for the GPU; on CPU it is free.
        if loss.device.type == "cpu" or self._runtime.steps_done % 100 == 0:
            self._runtime.last_loss = float(loss.float().mean())

def _refuse_adaptdl_arguments(positional: Tuple[Any, ...], ddp_kwargs: dict) -> None:
    """AdaptDL's signature differs after (model, optimizer, lr_scheduler): its 4th positional
    argument is the GradScaler and `scaling_rule=` takes its own classes. Passed here they would
    silently mean something else, so they are refused with what to write instead."""
    if positional:
        raise TypeError(
            f"goodput: AdaptiveDataParallel takes 3 positional arguments (module, optimizer, "
            f"lr_scheduler); {len(positional)} more given. The rest are keyword-only: amp=, "
            f"lr_scaling=, name=, DDP options. Porting from AdaptDL? Its 4th positional "
            f"argument is the GradScaler (mp_scaler): drop it and pass amp=True (the SDK "
            f"creates, applies and checkpoints the GradScaler; call model.backward(loss)).")
    if "mp_scaler" in ddp_kwargs:
        raise TypeError("goodput: AdaptiveDataParallel has no mp_scaler= (AdaptDL's GradScaler "
                        "argument); pass amp=True and the SDK manages the GradScaler")
    if "scaling_rule" in ddp_kwargs:
        raise TypeError("goodput: AdaptiveDataParallel takes lr_scaling= (\"adascale\", "
                        "\"adamscale\", \"linear\", \"sqrt\", \"none\" or a callable), not "
                        "AdaptDL's scaling_rule= objects")


def _parameters_ddp_syncs(module: torch.nn.Module) -> List[torch.nn.Parameter]:
    """The parameters DDP all-reduces: all but those excluded with DDP's (private) ignore list;
    GradientSync skips the ones without requires_grad, as DDP does."""
    ignored = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
    return [param for name, param in module.named_parameters() if name not in ignored]


def _tensors_in(output: Any) -> Iterator[torch.Tensor]:
    """The tensors in a forward output made of tensors, lists, tuples and dicts."""
    if isinstance(output, torch.Tensor):
        yield output
    elif isinstance(output, (list, tuple)):
        for item in output:
            yield from _tensors_in(item)
    elif isinstance(output, dict):
        for item in output.values():
            yield from _tensors_in(item)


class _TrainingState:
    """Adapter that checkpoints the wrapper's training state (the module's own state_dict()
    stays the standard nn.Module one)."""

    def __init__(self, model: AdaptiveDataParallel):
        self._model = model

    def state_dict(self) -> dict:
        return self._model.training_state()

    def load_state_dict(self, state: dict) -> None:
        self._model.load_training_state(state)


def _marked_as_scheduler_aware(step: Any) -> Any:
    """LR schedulers wrap optimizer.step to count calls and warn when someone replaces it. The
    original (counting) step is still called inside ours, so mark the replacement as wrapped:
    `_with_counter` is torch 1.x's marker, `_wrapped_by_lr_sched` torch 2.x's."""

    def step_with_markers(*args: Any, **kwargs: Any) -> Any:
        return step(*args, **kwargs)

    step_with_markers._with_counter = True  # type: ignore[attr-defined]
    step_with_markers._wrapped_by_lr_sched = True  # type: ignore[attr-defined]
    return step_with_markers
