"""AdaptiveDataLoader: a DataLoader whose per-replica batch may change between optimizer steps
and which resumes in the middle of an epoch after a restart (see epoch_plan.py)."""

import math
import time
from typing import Any, Iterator, List, Optional, Set, Tuple

import torch
from torch.utils.data import DataLoader, Dataset, Sampler, Subset, TensorDataset

from .batch_config import BatchConfig, BatchLimits, derive_batch_config
from .epoch_plan import EpochPlan
from .runtime import Runtime
from .step_types import MicroStep
from .session import current
from .worker_signals import WorkerInit, stop_signals_blocked
from .worker_start import WorkerStarts, started_iterator

DEFAULT_GPU_WORKERS = 2


def _in_memory(dataset: Dataset) -> bool:
    """Whether the data set is tensors in memory (a TensorDataset, or a Subset of one): reading a
    batch is indexing and collating, no I/O, which the doctor's data-wait advice needs to know."""
    while isinstance(dataset, Subset):
        dataset = dataset.dataset
    return isinstance(dataset, TensorDataset)


class _RankBatchSampler(Sampler):
    """Yields this rank's index lists from `start` on; re-created state per DataLoader iterator."""

    def __init__(self, plan: EpochPlan, start: int, local_bsz: int, world_size: int, rank: int):
        self.plan, self.start, self.local_bsz = plan, start, local_bsz
        self.world_size, self.rank = world_size, rank

    def __iter__(self) -> Iterator[List[int]]:
        position = self.start
        while position < self.plan.dataset_len:
            indices, count = self.plan.micro_batch(position, self.local_bsz, self.world_size,
                                                   self.rank)
            position += count
            yield indices

    def __len__(self) -> int:
        remaining = self.plan.dataset_len - self.start
        return max(0, math.ceil(remaining / (self.local_bsz * self.world_size)))


class _EvalBatchSampler(Sampler):
    """Evaluation: whole batches of `batch_size`, cut from the pass's order as a plain
    DataLoader cuts them, batch i to rank i mod world_size. A batch is never split over the
    replicas, so code that reads a batch as a unit (the 100 items of one user ranked with
    torch.topk, a sequence) sees the batch it asked for; ranks read at most one batch fewer than
    others, and every sample is read once over all ranks."""

    def __init__(self, plan: EpochPlan, batch_size: int, world_size: int, rank: int,
                 drop_last: bool):
        self.plan, self.batch_size = plan, batch_size
        self.world_size, self.rank, self.drop_last = world_size, rank, drop_last

    def batches(self) -> int:
        """Batches of the whole pass over all ranks."""
        n = self.plan.dataset_len
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self) -> Iterator[List[int]]:
        for i in range(self.rank, self.batches(), self.world_size):
            yield self.plan.order[i * self.batch_size:(i + 1) * self.batch_size]

    def __len__(self) -> int:
        return len(range(self.rank, self.batches(), self.world_size))


class AdaptiveDataLoader:
    """Drop-in for DataLoader(dataset, batch_size=..., shuffle=...) in data-parallel jobs.

    batch_size is the global batch B0 of one optimizer step at the start (split over replicas);
    the LR the user configured is the LR for B0. max_batch_size > batch_size lets the control
    plane grow the batch (adaptive); local_bsz_bounds=(min, max) bounds the per-replica batch;
    gradient_accumulation allows micro-steps. The first loader with train=True drives the
    optimizer steps (accumulation, SIGTERM checkpoints, reporting); evaluation loaders pass
    train=False and read whole batches of batch_size, as a plain DataLoader cuts them, spread
    over the replicas (batch i on replica i mod replicas; _EvalBatchSampler): a batch is never
    split, so per-batch code (torch.topk over one user's items) works at any replica count.

    Iterating yields micro-batches; a micro-batch's position is committed when it is yielded.
    On GPU, pin_memory, persistent workers and prefetching are on by default.
    """

    def __init__(self, dataset: Dataset, batch_size: int = 1, shuffle: bool = False, *,
                 max_batch_size: Optional[int] = None,
                 local_bsz_bounds: Tuple[Optional[int], Optional[int]] = (None, None),
                 gradient_accumulation: bool = False, train: bool = True, seed: int = 0,
                 name: Optional[str] = None, num_workers: Optional[int] = None,
                 pin_memory: Optional[bool] = None, persistent_workers: Optional[bool] = None,
                 prefetch_factor: Optional[int] = None, drop_last: bool = False,
                 **dataloader_kwargs: Any):
        for option in ("batch_sampler", "sampler"):
            if dataloader_kwargs.get(option) is not None:
                raise ValueError(f"goodput: AdaptiveDataLoader chooses the samples itself "
                                 f"(deterministic, resumable, split over the replicas); "
                                 f"{option}= is not supported (use shuffle= and seed=)")
        self.runtime: Runtime = current()
        #: the last micro-step of an epoch is dropped when it is smaller than the others
        self.drop_last = drop_last
        self.dataset = dataset
        self.dataset_len = len(dataset)  # type: ignore[arg-type]
        self.shuffle = shuffle
        self.seed = seed
        self.train = train
        on_gpu = self.runtime.device.type == "cuda"
        workers = num_workers if num_workers is not None else (DEFAULT_GPU_WORKERS if on_gpu else 0)
        kwargs = dict(dataloader_kwargs)
        kwargs["num_workers"] = workers
        kwargs["pin_memory"] = on_gpu if pin_memory is None else pin_memory
        self._worker_starts: Optional[WorkerStarts] = None
        if workers > 0:
            kwargs["persistent_workers"] = on_gpu if persistent_workers is None \
                else persistent_workers
            kwargs["prefetch_factor"] = prefetch_factor or 2
            # Workers ignore the stop signals: the main process checkpoints and exits 143
            # (worker_signals.py).
            self._worker_starts = WorkerStarts(workers)
            kwargs["worker_init_fn"] = WorkerInit(kwargs.get("worker_init_fn"),
                                                  self._worker_starts)
        self._dataloader_kwargs = kwargs
        self._started_pids: Set[int] = set()
        min_local, max_local = local_bsz_bounds
        self.limits = BatchLimits(batch_size, max_batch_size or batch_size, min_local or 1,
                                  max_local, gradient_accumulation)
        self.epoch_position: Tuple[int, int] = (-1, 0)  # (epoch, samples consumed in it)
        self.passes = 0
        self._saved_global_batch: Optional[int] = None
        self._dataloader: Optional[DataLoader] = None
        self._sampler: Optional[_RankBatchSampler] = None
        self._eval_sampler: Optional[_EvalBatchSampler] = None
        world = self.runtime.world_size
        restored = self.runtime.register(name or ("train_loader" if train else f"loader_{id(self)}"),
                                         self) if train else False
        global_batch = self._saved_global_batch if restored and self._saved_global_batch \
            else batch_size
        initial = derive_batch_config(global_batch, world, self.limits)
        if train:
            self.runtime.step_log.dataloader_workers = workers
            self.runtime.step_log.in_memory_dataset = _in_memory(dataset)
            self.runtime.set_training_loader(self.limits, initial, self.dataset_len)
        self._fixed_batch = initial

    # ---- state ---------------------------------------------------------------------------

    def state_dict(self) -> dict:
        batch = self.runtime.batch or self._fixed_batch
        return {"epoch_position": self.epoch_position, "passes": self.passes, "seed": self.seed,
                "global_batch": batch.total_batch_size(self.runtime.world_size),
                "dataset_len": self.dataset_len}

    def load_state_dict(self, state: dict) -> None:
        if state["dataset_len"] != self.dataset_len:
            raise ValueError(f"goodput: the checkpoint's data set has {state['dataset_len']} "
                             f"samples, this one {self.dataset_len}; refusing to resume")
        self.epoch_position = tuple(state["epoch_position"])
        self.passes = state["passes"]
        self.seed = state["seed"]
        self._saved_global_batch = state["global_batch"]

    @property
    def current_batch(self) -> BatchConfig:
        return (self.runtime.batch if self.train else None) or self._fixed_batch

    @property
    def current_local_bsz(self) -> int:
        return self.current_batch.local_bsz

    def __len__(self) -> int:
        """Micro-batches in one full epoch at the current configuration (an estimate if the
        configuration changes during the epoch); for evaluation, this rank's whole batches."""
        if not self.train:
            return len(self._evaluation_sampler(EpochPlan(self.dataset_len, self.passes,
                                                          self.seed, self.shuffle)))
        per_micro = self.current_local_bsz * self.runtime.world_size
        if self.drop_last:
            return self.dataset_len // per_micro
        steps = math.ceil(self.dataset_len / per_micro)
        tail = self.dataset_len - (steps - 1) * per_micro
        # A tail smaller than the replicas joins the micro-step before it (epoch_plan.py).
        return steps - 1 if steps > 1 and tail < self.runtime.world_size else steps

    # ---- iteration -----------------------------------------------------------------------

    def _epoch_number(self) -> int:
        return self.runtime.epoch if (self.train and self.runtime.epoch is not None) \
            else self.passes

    def _inner_iterator(self, plan: EpochPlan, position: int, local_bsz: int) -> Iterator[Any]:
        # One DataLoader for the loader's lifetime (persistent workers survive); its batch
        # sampler is re-pointed before each iter(), which re-reads it.
        if self._dataloader is None:
            self._sampler = _RankBatchSampler(plan, position, local_bsz,
                                              self.runtime.world_size, self.runtime.rank)
            self._dataloader = DataLoader(self.dataset, batch_sampler=self._sampler,
                                          **self._dataloader_kwargs)
        else:
            self._sampler.plan, self._sampler.start = plan, position
            self._sampler.local_bsz = local_bsz
        return self._iterate()

    def _iterate(self) -> Iterator[Any]:
        """iter() of the one DataLoader; workers start with the stop signals blocked."""
        assert self._dataloader is not None
        if self._dataloader_kwargs["num_workers"] == 0:
            return iter(self._dataloader)

        def make() -> Iterator[Any]:
            with stop_signals_blocked():  # workers start with the stop signals blocked
                return iter(self._dataloader)
        # A forked worker that never starts is replaced, not waited for (worker_start.py).
        assert self._worker_starts is not None
        return started_iterator(self._dataloader, self._worker_starts, make, self._started_pids)

    def _has_micro_batch(self, position: int, local_bsz: int) -> bool:
        """True if the epoch has a next micro-batch from `position` on: any sample left, or with
        drop_last a full micro-batch over all replicas."""
        if self.drop_last:
            return self.dataset_len - position >= local_bsz * self.runtime.world_size
        return position < self.dataset_len

    def _evaluation_sampler(self, plan: EpochPlan) -> _EvalBatchSampler:
        return _EvalBatchSampler(plan, self.limits.init_batch_size, self.runtime.world_size,
                                 self.runtime.rank, self.drop_last)

    def _evaluation_pass(self) -> Iterator[Any]:
        """One pass of an evaluation loader: this rank's whole batches (_EvalBatchSampler)."""
        plan = EpochPlan(self.dataset_len, self.passes, self.seed, self.shuffle)
        if self._dataloader is None:
            self._eval_sampler = self._evaluation_sampler(plan)
            self._dataloader = DataLoader(self.dataset, batch_sampler=self._eval_sampler,
                                          **self._dataloader_kwargs)
        else:
            assert self._eval_sampler is not None
            self._eval_sampler.plan = plan
        yield from self._iterate()
        self.passes += 1

    def __iter__(self) -> Iterator[Any]:
        if not self.train:
            yield from self._evaluation_pass()
            return
        runtime = self.runtime
        epoch = self._epoch_number()
        saved_epoch, position = self.epoch_position
        if saved_epoch != epoch or not self.train:
            position = 0
        self.epoch_position = (epoch, position)
        plan = EpochPlan(self.dataset_len, epoch, self.seed, self.shuffle,
                         merge_tail=not self.drop_last)
        inner: Optional[Iterator[Any]] = None
        inner_bsz = -1
        micro_index = 0
        if self.train:
            runtime.begin_pass()
        while self._has_micro_batch(position, self.current_batch.local_bsz):
            if self.train and micro_index == 0:
                runtime.begin_step()  # may checkpoint and exit, or change the batch config
            batch = self.current_batch
            if not self._has_micro_batch(position, batch.local_bsz):
                break  # drop_last, and the new configuration's micro-batch no longer fits
            if inner is None or batch.local_bsz != inner_bsz:
                # Why a new iterator: batches prefetched with the old size are discarded; the
                # position is committed only when a micro-batch is yielded, so nothing is lost.
                inner = self._inner_iterator(plan, position, batch.local_bsz)
                inner_bsz = batch.local_bsz
            wait_start_s = time.perf_counter()
            data = next(inner)
            if self.train:
                runtime.add_data_wait(time.perf_counter() - wait_start_s)
            global_count = plan.step_count(position, batch.local_bsz, runtime.world_size)
            position += global_count
            self.epoch_position = (epoch, position)
            last_of_step = micro_index >= batch.accum_steps or \
                not self._has_micro_batch(position, batch.local_bsz)
            if self.train:
                runtime.note_micro_batch(MicroStep(micro_index, last_of_step, batch.local_bsz,
                                                   global_count), epoch, position)
            micro_index = 0 if last_of_step else micro_index + 1
            yield data
        if self.train:
            runtime.micro = None
        self.passes += 1
