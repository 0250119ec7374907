"""remaining_epochs(): the epoch loop that continues where a restarted job stopped."""

from typing import Iterator

from .session import current


def remaining_epochs(num_epochs: int) -> Iterator[int]:
    """Yields the epoch numbers still to run, from the checkpointed epoch on.

    Between epochs (after the loop body, i.e. after the user's evaluation and per-epoch
    scheduler steps) all replicas agree whether to stop: a pending SIGTERM checkpoints and exits
    with EXIT_CHECKPOINTED; otherwise the job checkpoints (each epoch by default, see init()).
    An interrupted epoch is resumed, not restarted: the training loader continues its position.
    """
    runtime = current()
    runtime.total_epochs = num_epochs  # the job's length, reported as remaining_samples
    start = runtime.epoch if runtime.epoch is not None else 0
    for epoch in range(start, num_epochs):
        runtime.epoch = epoch
        runtime.active_epoch = epoch
        yield epoch
        runtime.active_epoch = None
        runtime.epoch = epoch + 1  # a checkpoint from here on resumes at the next epoch
        runtime.end_epoch()
