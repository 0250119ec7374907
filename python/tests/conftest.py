"""Shared helpers: the source tree on sys.path, free ports, and launching real replicas."""

import os
import socket
import subprocess
import sys
import time
from typing import Dict, List, Optional, Sequence

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(PYTHON_DIR)
WORKERS_DIR = os.path.join(PYTHON_DIR, "tests", "workers")
sys.path.insert(0, PYTHON_DIR)
sys.path.insert(0, os.path.join(PYTHON_DIR, "tests"))

# The interpreter that runs the replicas: the one running these tests (it has torch, or no test
# here could import it), unless GOODPUT_TEST_PYTHON names another. A fixed /usr/bin/python3 is
# wrong wherever torch lives elsewhere (a venv, conda, a CUDA image's /opt/... python).
PYTHON = os.environ.get("GOODPUT_TEST_PYTHON") or sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def replica_env(rank: int, world_size: int, port: int,
                extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GOODPUT_") and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update({"RANK": str(rank), "WORLD_SIZE": str(world_size), "LOCAL_RANK": str(rank),
                "LOCAL_WORLD_SIZE": str(world_size), "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": str(port), "OMP_NUM_THREADS": "1",
                "PYTHONPATH": PYTHON_DIR + os.pathsep + env.get("PYTHONPATH", "")})
    env.update(extra or {})
    return env


class Replicas:
    """A real launch of `world_size` processes of one script, like a Goodput backend does."""

    def __init__(self, script: str, args: Sequence[str], world_size: int,
                 extra_env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None):
        port = free_port()
        self.procs: List[subprocess.Popen] = [
            subprocess.Popen([PYTHON, script, *args], env=replica_env(r, world_size, port, extra_env),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             cwd=cwd or REPO_ROOT)
            for r in range(world_size)]

    def wait(self, timeout_s: float = 120.0):
        deadline = time.monotonic() + timeout_s
        outputs, codes = [], []
        try:
            for proc in self.procs:
                out, _ = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
                outputs.append(out)
                codes.append(proc.returncode)
        finally:
            for proc in self.procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        return codes, outputs


@pytest.fixture
def launch():
    started: List[Replicas] = []

    def _launch(script: str, args: Sequence[str] = (), world_size: int = 1,
                extra_env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None) -> Replicas:
        replicas = Replicas(script, args, world_size, extra_env, cwd)
        started.append(replicas)
        return replicas

    yield _launch
    for replicas in started:  # never leave processes behind, even when a test fails
        for proc in replicas.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def step_record(**fields):
    """One step's report record as the Runtime builds it (1 replica, batch 32), with `fields` set."""
    record = {"time_s": 1.0, "step": 1, "epoch": 0, "num_nodes": 1, "num_replicas": 1,
              "local_bsz": 32, "accum_steps": 0, "step_time_s": 0.1, "sync_time_s": 0.0,
              "grad_sqr": None, "grad_var": None, "samples": 32,
              "breakdown": {"data_wait_s": 0.0, "forward_backward_s": 0.1, "sync_s": 0.0,
                            "optimizer_s": 0.0}}
    record.update(fields)
    return record
