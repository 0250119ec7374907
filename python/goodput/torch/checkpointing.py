"""The job's checkpoints as the runtime sees them: what was restored at start, the objects that
are saved (model, optimizer, loader, ...), every rank's RNG streams, and when the next periodic
checkpoint is due. Files and their durability: checkpoint_store.py."""

import sys
import time
from collections import Counter
from typing import Any, Dict, List, Optional

import torch.distributed as dist

from .checkpoint_store import CheckpointStore
from .rng_state import capture_rng, reseed_for_new_rank, restore_rng


class Checkpointing:
    def __init__(self, checkpoint_dir: str, rank: int, world_size: int, interval_s: float):
        self.rank = rank
        self.world_size = world_size
        self.interval_s = interval_s
        self.store = CheckpointStore(checkpoint_dir)
        loaded = self.store.load_latest()
        self.restored: Optional[Dict[str, Any]] = loaded[0] if loaded else None
        self.restored_path: Optional[str] = loaded[1] if loaded else None
        self._objects: Dict[str, Any] = {}
        self._name_counts: Counter = Counter()
        self._rng_restored = False
        self._requested = False
        self._last_s = time.monotonic()
        #: The last checkpoint's barrier Work, kept until the next checkpoint replaces it (or the
        #: interpreter tears it down). Why: gloo's barrier keeps weak references to the
        #: collectives still queued or held by a worker thread when it is issued, and a
        #: collective's tensors are destroyed only with its last reference, weak ones included.
        #: A tensor whose Python object died first is owned by the C++ tensor, and the thread
        #: that destroys it takes the GIL. Done by a gloo worker thread that ran late after a stop
        #: (a loaded host), that happened while the interpreter finalized: the thread was ended
        #: inside a destructor, "terminate called without an active exception", SIGABRT (or
        #: SIGSEGV) instead of exit 143. Held here, they are destroyed by the main thread, at the
        #: next checkpoint or at exit (once finalizing, torch leaves such objects alone).
        self._barrier: Any = None
        #: wall time when the newest checkpoint this attempt would resume from became durable
        #: (the one restored at start counts from then); None until there is one
        self.checkpoint_time_s: Optional[float] = time.time() if self.restored_path else None

    @property
    def restored_sdk_state(self) -> Dict[str, Any]:
        return self.restored["sdk"] if self.restored else {}

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

    def unique_name(self, prefix: str) -> str:
        """`prefix-N`, N counting the calls with this prefix in this process. Objects created in
        the same order on every rank and in every attempt get the same names."""
        count = self._name_counts[prefix]
        self._name_counts[prefix] += 1
        return f"{prefix}-{count}"

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

    def request(self) -> None:
        """Asks for a checkpoint at the next step boundary (every rank agrees on which)."""
        self._requested = True

    def due(self) -> bool:
        return self._requested or time.monotonic() - self._last_s >= self.interval_s

    def save(self, sdk_state: Dict[str, Any]) -> Optional[str]:
        """Collective: every rank calls it at the same boundary. Rank 0 writes the file; returns
        its path on rank 0."""
        for obj in list(self._objects.values()):
            # Objects whose state is spread over the replicas (Accumulator) gather it first;
            # every rank registered the same objects in the same order, so these collectives
            # match.
            gather = getattr(obj, "gather_for_checkpoint", None)
            if gather is not None:
                gather()
        rng = capture_rng()
        if self.world_size > 1:
            all_rng: List[Any] = [None] * self.world_size
            dist.all_gather_object(all_rng, rng)
        else:
            all_rng = [rng]
        path = None
        if self.rank == 0:
            payload = {"sdk": sdk_state,
                       "objects": {name: obj.state_dict() for name, obj in self._objects.items()},
                       "rng": all_rng}
            path = self.store.save(payload)
        if self.world_size > 1:
            # Nobody may exit before the checkpoint is durable. The barrier's Work is kept until
            # the next checkpoint: see `_barrier`.
            self._barrier = dist.barrier(async_op=True)
            self._barrier.wait()
        self._last_s = time.monotonic()
        self.checkpoint_time_s = time.time()
        self._requested = False
        return path

    def announce_resume(self, steps_done: int, epoch: Optional[int], attempt: int) -> None:
        if self.restored_path and self.rank == 0:
            print(f"goodput: resuming from {self.restored_path} (step {steps_done}, "
                  f"epoch {epoch}, attempt {attempt}, {self.world_size} replica(s))",
                  file=sys.stderr, flush=True)
