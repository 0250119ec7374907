"""Accumulator: metrics summed over the replicas of a job, kept across restarts.

Usage, as in AdaptDL's examples:

    accum = gt.Accumulator()
    for epoch in gt.remaining_epochs(30):
        for x, y in loader:
            ...
            accum["loss_sum"] += loss.item() * len(y)
            accum["count"] += len(y)
        with accum.synchronized():          # every replica, at the same point
            print(epoch, accum["loss_sum"] / accum["count"])
            accum.clear()

Two modes. Outside `synchronized()` the accumulator only collects this replica's updates
(`accum[key] += value`, `-=`, `update()`, `subtract()`); reading it then sees an empty mapping,
because no replica knows the total. `synchronized()` is a collective: it sums every replica's
pending updates into the results, which every replica then sees identically and may read or
change like a dict (changes must be the same on every replica).

Restarts: the accumulator is saved with the job's checkpoints. A checkpoint first sums every
replica's pending updates into the results, so updates made before a stop count once after the
restart, whatever the new number of replicas. After a restart in the middle of an epoch, the code
of that epoch before the training loader's position runs again: a `synchronized()` outside a
training loop iteration that already happened in this epoch before the checkpoint returns the
results it returned then (and drops the updates repeated since), so that evaluation code that
runs again does not count twice. Accumulators must be created in the same order on every replica
and in every attempt; their checkpoint name is their creation rank in the epoch.
"""

import contextlib
import copy
from collections.abc import MutableMapping
from typing import Any, Dict, Iterator, List, Optional

import torch.distributed as dist

from .runtime import Runtime
from .session import current


class Accumulator(MutableMapping):
    def __init__(self, *args: Any, **kwargs: Any):
        self._runtime: Runtime = current()
        self._results: Dict[Any, Any] = dict(*args, **kwargs)
        self._updates: Dict[Any, Any] = {}
        #: epoch -> results of the syncs done outside a training loop iteration, in order
        self._history: Dict[int, List[Dict[Any, Any]]] = {}
        self._sync_counts: Dict[int, int] = {}
        self._view: Optional[Dict[Any, Any]] = None
        # The same name on every rank and in every attempt: the creation rank within the epoch
        # (or outside the epoch loop).
        epoch = self._runtime.active_epoch
        prefix = "goodput-accumulator" if epoch is None else f"goodput-accumulator-e{epoch}"
        self._name = self._runtime.checkpoints.unique_name(prefix)
        self._runtime.register(self._name, self)

    def _epoch(self) -> int:
        epoch = self._runtime.active_epoch
        return -1 if epoch is None else epoch

    # ---- synchronized mode -----------------------------------------------------------------

    @contextlib.contextmanager
    def synchronized(self) -> Iterator["Accumulator"]:
        """Sums every replica's pending updates; inside the block the accumulator is a plain
        dict, identical on every replica. A collective: every replica must enter it at the same
        point of its code."""
        if self._view is not None:
            yield self  # nested: already synchronized
            return
        epoch = self._epoch()
        in_training_loop = self._runtime.micro is not None
        for old in [e for e in self._history if e < epoch]:
            del self._history[old]
        if in_training_loop:
            self._sum_pending()
            view = self._results
        else:
            index = self._sync_counts.get(epoch, 0)
            self._sync_counts[epoch] = index + 1
            done = self._history.setdefault(epoch, [])
            if index < len(done):
                view = done[index]  # ran before the restart: same answer, no double count
                self._updates.clear()
            else:
                self._sum_pending()
                view = self._results
                done.append(copy.deepcopy(self._results))
        self._view = view
        try:
            yield self
        finally:
            self._view = None

    def _sum_pending(self) -> None:
        """Collective: adds every replica's pending updates (in rank order) to the results."""
        if self._runtime.distributed:
            gathered: List[Any] = [None] * self._runtime.world_size
            dist.all_gather_object(gathered, self._updates)
        else:
            gathered = [self._updates]
        for updates in gathered:
            for key, value in updates.items():
                self._results[key] = self._results[key] + value if key in self._results \
                    else value
        self._updates = {}

    # ---- checkpoint ------------------------------------------------------------------------

    def gather_for_checkpoint(self) -> None:
        """Called on every rank before a checkpoint: pending updates join the results."""
        if self._view is None:
            self._sum_pending()

    def state_dict(self) -> dict:
        return {"results": copy.deepcopy(self._results), "history": copy.deepcopy(self._history)}

    def load_state_dict(self, state: dict) -> None:
        self._results = dict(state["results"])
        self._history = {int(k): list(v) for k, v in state["history"].items()}

    # ---- updates ---------------------------------------------------------------------------

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Adds the values to the accumulated ones (unlike dict.update, which replaces)."""
        for key, value in dict(*args, **kwargs).items():
            self[key] += value

    def subtract(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] -= value

    def __iadd__(self, other: Any) -> "Accumulator":
        self.update(other)
        return self

    def __isub__(self, other: Any) -> "Accumulator":
        self.subtract(other)
        return self

    def __getitem__(self, key: Any) -> Any:
        if self._view is not None:
            return self._view[key]
        return _PendingUpdate(self, key)  # `accum[key] += v` reads, adds, then writes back

    def __setitem__(self, key: Any, value: Any) -> None:
        if self._view is not None:
            self._view[key] = value
            return
        if not isinstance(value, _PendingUpdate) or value.owner is not self or value.key != key:
            raise TypeError("goodput: outside accum.synchronized() an Accumulator takes only "
                            "accum[key] += value or -= value; assign inside synchronized()")
        self._updates[key] = self._updates[key] + value.delta if key in self._updates \
            else value.delta

    def __delitem__(self, key: Any) -> None:
        if self._view is None:
            raise KeyError(key)
        del self._view[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._view if self._view is not None else {})

    def __len__(self) -> int:
        return len(self._view) if self._view is not None else 0

    def __contains__(self, key: object) -> bool:
        return self._view is not None and key in self._view

    def __repr__(self) -> str:
        if self._view is not None:
            return f"Accumulator({self._view!r})"
        return f"Accumulator(<{len(self._updates)} pending update(s); read inside synchronized()>)"


class _PendingUpdate:
    """What `accum[key]` returns outside synchronized(): it records `+= v` / `-= v`."""
    __slots__ = ("owner", "key", "delta")

    def __init__(self, owner: Accumulator, key: Any):
        self.owner, self.key, self.delta = owner, key, 0

    def __add__(self, value: Any) -> "_PendingUpdate":
        if isinstance(value, _PendingUpdate):
            raise TypeError("goodput: cannot add two Accumulator entries outside synchronized()")
        self.delta = self.delta + value
        return self

    def __sub__(self, value: Any) -> "_PendingUpdate":
        if isinstance(value, _PendingUpdate):
            raise TypeError("goodput: cannot subtract Accumulator entries outside synchronized()")
        self.delta = self.delta - value
        return self

    def __repr__(self) -> str:
        return f"<pending update of {self.key!r}; read it inside accum.synchronized()>"
