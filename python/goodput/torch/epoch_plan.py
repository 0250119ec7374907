"""Which samples each rank reads, as a pure function of (seed, epoch, position, batch, world).

An epoch is one permutation of the data set that depends only on (seed, epoch), never on the
number of replicas. `position` counts the samples of the epoch already consumed by all ranks
together; a micro-step takes the next `world_size * local_bsz` of them (fewer at the end) and
splits them into contiguous, near-equal slices, one per rank. Hence a job restarted with any
number of replicas at the same position continues the same permutation: within an epoch no
sample is skipped or read twice.

The end of an epoch: a tail smaller than the number of ranks cannot be split without an empty
micro-batch (which cannot run through a model), so the micro-step before it takes the tail too
(some ranks then read `local_bsz + 1` samples). Only a job resumed with more ranks than samples
left in its epoch, or a data set smaller than the number of ranks, has ranks without a sample of
their own: those re-read the epoch's first samples (at most world_size - 1 duplicates). With
`merge_tail=False` (drop_last) no tail is merged: the loader drops the short micro-step.
"""

from typing import List, Tuple

import torch


class EpochPlan:
    def __init__(self, dataset_len: int, epoch: int, seed: int, shuffle: bool,
                 merge_tail: bool = True):
        self.dataset_len = dataset_len
        self.merge_tail = merge_tail
        if shuffle:
            generator = torch.Generator()
            generator.manual_seed(seed * 1_000_003 + epoch)
            self.order = torch.randperm(dataset_len, generator=generator).tolist()
        else:
            self.order = list(range(dataset_len))

    def step_count(self, position: int, local_bsz: int, world_size: int) -> int:
        """Samples (over all ranks) that the micro-step starting at `position` consumes."""
        remaining = self.dataset_len - position
        count = min(world_size * local_bsz, remaining)
        if self.merge_tail and 0 < remaining - count < world_size:
            count = remaining  # the tail could not give every rank a sample: take it now
        return max(0, count)

    def micro_batch(self, position: int, local_bsz: int, world_size: int,
                    rank: int) -> Tuple[List[int], int]:
        """This rank's indices for the micro-step starting at `position`, and the number of
        samples the micro-step consumes over all ranks."""
        global_count = self.step_count(position, local_bsz, world_size)
        if global_count <= 0:
            return [], 0
        base, extra = divmod(global_count, world_size)
        start = position + rank * base + min(rank, extra)
        size = base + (1 if rank < extra else 0)
        if size == 0:
            return [self.order[rank % self.dataset_len]], global_count
        return self.order[start:start + size], global_count
