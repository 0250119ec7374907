"""Atomic checkpoint files in one directory.

Write protocol: serialize into a hidden temp file in the same directory, flush + fsync it, rename
it to `ckpt-<seq>.pt` (atomic on POSIX), fsync the directory, and only then delete checkpoints
older than the previous one. Invariant: at every instant (including after kill -9 at any point)
the directory holds at least one complete checkpoint once one was ever written, and a torn temp
file is never mistaken for a checkpoint. Loading picks the newest file that deserializes and
carries the completion marker, falling back to the previous one.
"""

import os
import re
import sys
from typing import Any, Dict, List, Optional, Tuple

import torch

_NAME = re.compile(r"^ckpt-(\d{9})\.pt$")
_TEMP_PREFIX = ".ckpt-tmp-"
_MARKER_KEY = "goodput_checkpoint_format"
_FORMAT_VERSION = 1
KEEP_CHECKPOINTS = 2


class CheckpointStore:
    def __init__(self, directory: str):
        self.directory = directory

    def _sequence_numbers(self) -> List[int]:
        if not os.path.isdir(self.directory):
            return []
        found = (_NAME.match(name) for name in os.listdir(self.directory))
        return sorted(int(m.group(1)) for m in found if m)

    def _path(self, seq: int) -> str:
        return os.path.join(self.directory, f"ckpt-{seq:09d}.pt")

    def save(self, payload: Dict[str, Any]) -> str:
        """Writes `payload` durably and returns the checkpoint's path."""
        os.makedirs(self.directory, exist_ok=True)
        self._remove_stale_temps()
        existing = self._sequence_numbers()
        seq = existing[-1] + 1 if existing else 0
        final_path = self._path(seq)
        temp_path = os.path.join(self.directory, f"{_TEMP_PREFIX}{seq:09d}-{os.getpid()}")
        record = dict(payload)
        record[_MARKER_KEY] = _FORMAT_VERSION
        try:
            with open(temp_path, "wb") as f:
                torch.save(record, f)
                f.flush()
                os.fsync(f.fileno())
            os.rename(temp_path, final_path)
        except BaseException:
            # Why: a failed write must not leave a temp file that later fills the disk; the
            # previous checkpoints are untouched either way.
            if os.path.exists(temp_path):
                os.unlink(temp_path)
            raise
        self._fsync_directory()
        for old in existing[:-(KEEP_CHECKPOINTS - 1)] if KEEP_CHECKPOINTS > 1 else existing:
            try:
                os.unlink(self._path(old))
            except FileNotFoundError:
                pass
        return final_path

    def load_latest(self) -> Optional[Tuple[Dict[str, Any], str]]:
        """The newest complete checkpoint and its path, or None if there is none."""
        for seq in reversed(self._sequence_numbers()):
            path = self._path(seq)
            try:
                record = _load_trusted(path)
            except Exception as error:  # a torn or foreign file: fall back to the previous one
                print(f"goodput: skipping unreadable checkpoint {path}: {error}", file=sys.stderr)
                continue
            if isinstance(record, dict) and record.get(_MARKER_KEY) == _FORMAT_VERSION:
                return record, path
            print(f"goodput: skipping {path}: not a goodput checkpoint", file=sys.stderr)
        return None

    def _fsync_directory(self) -> None:
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _remove_stale_temps(self) -> None:
        # Only one writer (rank 0) exists per job, so any temp file is a leftover of a killed one.
        for name in os.listdir(self.directory):
            if name.startswith(_TEMP_PREFIX):
                try:
                    os.unlink(os.path.join(self.directory, name))
                except FileNotFoundError:
                    pass


def _load_trusted(path: str) -> Any:
    """Loads a checkpoint this job wrote itself, with every object it holds.

    torch >= 2.6 loads with weights_only=True by default, which refuses the numpy RNG states and
    optimizer objects a checkpoint holds: every checkpoint would read as unreadable and the job
    would silently restart from step 0. These files come from the job's own checkpoint
    directory, so unpickling them is as trusted as the training script itself.
    """
    return torch.load(path, map_location="cpu", weights_only=False)
