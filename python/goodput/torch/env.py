"""The launch environment of one replica (docs/contract.md), read once at init().

Invariant: every field has a value that is valid for a standalone run (`python train.py`), so the
rest of the SDK never branches on "is the variable set" except through `has_control_plane`.
"""

import os
from dataclasses import dataclass
from typing import Mapping, Optional

#: Exit code meaning "checkpointed after SIGTERM, relaunch me" (docs/contract.md).
EXIT_CHECKPOINTED = 143

DEFAULT_CHECKPOINT_DIR = os.path.join(".goodput", "checkpoint")
DEFAULT_REPORT_INTERVAL_S = 5.0


@dataclass(frozen=True)
class JobEnv:
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    master_addr: Optional[str]
    master_port: Optional[int]
    api_url: Optional[str]
    job_id: Optional[str]
    token: Optional[str]
    checkpoint_dir: str
    attempt: int
    num_nodes: int
    report_interval_s: float
    step_log_path: Optional[str]

    @property
    def has_control_plane(self) -> bool:
        return bool(self.api_url and self.job_id)

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1


def _int(environ: Mapping[str, str], name: str, default: int) -> int:
    raw = environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"goodput: environment variable {name}={raw!r} is not an integer") from None


def _float(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"goodput: environment variable {name}={raw!r} is not a number") from None


def read_job_env(environ: Optional[Mapping[str, str]] = None,
                 checkpoint_dir: Optional[str] = None) -> JobEnv:
    """Parses the contract's variables; `checkpoint_dir` overrides GOODPUT_CHECKPOINT_DIR."""
    env = os.environ if environ is None else environ
    world_size = _int(env, "WORLD_SIZE", 1)
    rank = _int(env, "RANK", 0)
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"goodput: RANK={rank} is not in [0, WORLD_SIZE={world_size})")
    master_port = env.get("MASTER_PORT")
    return JobEnv(
        rank=rank,
        world_size=world_size,
        local_rank=_int(env, "LOCAL_RANK", 0),
        local_world_size=_int(env, "LOCAL_WORLD_SIZE", 1),
        master_addr=env.get("MASTER_ADDR"),
        master_port=int(master_port) if master_port else None,
        api_url=(env.get("GOODPUT_API") or "").rstrip("/") or None,
        job_id=env.get("GOODPUT_JOB_ID") or None,
        token=env.get("GOODPUT_TOKEN") or None,
        checkpoint_dir=checkpoint_dir or env.get("GOODPUT_CHECKPOINT_DIR") or DEFAULT_CHECKPOINT_DIR,
        attempt=_int(env, "GOODPUT_ATTEMPT", 0),
        num_nodes=_int(env, "GOODPUT_NUM_NODES", 1),
        report_interval_s=_float(env, "GOODPUT_REPORT_INTERVAL_S", DEFAULT_REPORT_INTERVAL_S),
        step_log_path=env.get("GOODPUT_STEP_LOG") or None,
    )


def share_dir(environ: Optional[Mapping[str, str]] = None,
              checkpoint_dir: Optional[str] = None) -> str:
    """A directory for the job's own files shared by its replicas and kept across restarts
    (data sets it downloads, artefacts): GOODPUT_SHARE_DIR when set, else `share` next to the
    checkpoint directory (under the control plane `<job dir>/share`, on the file system the
    checkpoints already live on; alone `.goodput/share`)."""
    env = os.environ if environ is None else environ
    explicit = env.get("GOODPUT_SHARE_DIR")
    if explicit:
        return explicit
    checkpoints = checkpoint_dir or env.get("GOODPUT_CHECKPOINT_DIR") or DEFAULT_CHECKPOINT_DIR
    return os.path.join(os.path.dirname(os.path.abspath(checkpoints)), "share")
