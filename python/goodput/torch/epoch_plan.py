"""Which samples each rank reads, as a pure function of (seed, epoch, position, batch, world).

An epoch is one permutation of the data set that depends only on (seed, epoch), never on the
number of replicas. `position` counts the samples of the epoch already consumed by all ranks
together; a micro-step takes the next `world_size * local_bsz` of them (fewer at the end) and
splits them into contiguous, near-equal slices, one per rank. Hence a job restarted with any
number of replicas at the same position continues the same permutation: within an epoch no
sample is skipped or read twice. Only when fewer samples than ranks remain do ranks without one
re-read the epoch's first samples (at most world_size - 1 duplicates per epoch), because an empty
micro-batch cannot run through a model.
"""

from typing import List, Tuple

import torch


class EpochPlan:
    def __init__(self, dataset_len: int, epoch: int, seed: int, shuffle: bool):
        self.dataset_len = dataset_len
        if shuffle:
            generator = torch.Generator()
            generator.manual_seed(seed * 1_000_003 + epoch)
            self.order = torch.randperm(dataset_len, generator=generator).tolist()
        else:
            self.order = list(range(dataset_len))

    def micro_batch(self, position: int, local_bsz: int, world_size: int,
                    rank: int) -> Tuple[List[int], int]:
        """This rank's indices for the micro-step starting at `position`, and the number of
        samples the micro-step consumes over all ranks."""
        global_count = min(world_size * local_bsz, self.dataset_len - position)
        if global_count <= 0:
            return [], 0
        base, extra = divmod(global_count, world_size)
        start = position + rank * base + min(rank, extra)
        size = base + (1 if rank < extra else 0)
        if size == 0:
            return [self.order[rank % self.dataset_len]], global_count
        return self.order[start:start + size], global_count
