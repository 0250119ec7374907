"""A stop that reaches the replica's whole process group (as Slurm's scancel sends it) while
DataLoader workers run: the replica checkpoints and exits 143, and the relaunch resumes at the
step it reached. Real processes, real signals (os.killpg), real DataLoader workers."""

import os
import re
import signal
import subprocess
import time

import pytest

from conftest import PYTHON, WORKERS_DIR, free_port, replica_env
from goodput.torch.env import EXIT_CHECKPOINTED

WORKER = os.path.join(WORKERS_DIR, "loader_workers_worker.py")

CASES = {
    "sdk-loader-2-workers": ["--workers", "2"],
    "sdk-loader-persistent-pinned": ["--workers", "2", "--persistent", "--pin-memory"],
    "plain-torch-loader-persistent": ["--workers", "2", "--plain-loader", "--persistent"],
    "sdk-loader-spawned-workers": ["--workers", "2", "--spawn"],
}


def _start(args, ckpt):
    env = replica_env(0, 1, free_port(), {"GOODPUT_CHECKPOINT_DIR": str(ckpt)})
    # Its own session and process group, like a replica started by a backend.
    return subprocess.Popen([PYTHON, WORKER, *args], env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)


def _finish(proc, timeout_s=60):
    try:
        return proc.communicate(timeout=timeout_s)[0]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _read_until_step(proc, step):
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.strip() == f"step={step}":
            return lines
    raise AssertionError("the replica ended before step %d:\n%s" % (step, "".join(lines)))


def _steps(text):
    return [int(m) for m in re.findall(r"^step=(\d+)$", text, re.M)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_group_sigterm_mid_epoch_checkpoints_exits_143_and_resumes(tmp_path, case):
    args = CASES[case] + ["--epochs", "40"]
    proc = _start(args, tmp_path)
    try:
        before = _read_until_step(proc, 6)  # mid-epoch (16 steps per epoch)
        os.killpg(proc.pid, signal.SIGTERM)  # the main process AND its DataLoader workers
        after = _finish(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    output = "".join(before) + after
    assert proc.returncode == EXIT_CHECKPOINTED, output
    # What torch's C++ teardown prints after the replica has checkpointed and is exiting 143 (a
    # worker aborted by gloo's exit race) loses nothing; a worker killed before that would.
    assert "killed by signal" not in output.split("exiting 143")[0], output
    saved = int(re.search(r"checkpointed step (\d+)", output).group(1))
    assert saved >= max(_steps(output)) >= 6, output  # nothing lost
    if "--plain-loader" in args:
        assert saved == 16, output  # the SDK cannot save a plain loader's position: epoch end
    else:
        assert saved % 16 != 0, output  # the SDK's loader stops mid-epoch

    resumed = _start(CASES[case] + ["--epochs", "1" if saved < 16 else "2"], tmp_path)
    out = _finish(resumed)
    assert resumed.returncode == 0, out
    assert re.search(r"^start step=(\d+)$", out, re.M).group(1) == str(saved), out
    assert _steps(out)[0] == saved + 1 and out.rstrip().endswith("DONE"), out


@pytest.mark.parametrize("case", ["sdk-loader-persistent-pinned", "plain-torch-loader-persistent"])
def test_normal_exit_with_persistent_workers_is_not_held_up(tmp_path, case):
    """The workers' SIGTERM guard must still let Python end its daemon workers at exit."""
    proc = _start(CASES[case] + ["--epochs", "1"], tmp_path)
    out = _finish(proc, timeout_s=60)
    assert proc.returncode == 0 and out.rstrip().endswith("DONE"), out


def _children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


def test_a_worker_killed_by_sigkill_is_still_a_failure(tmp_path):
    proc = _start(CASES["sdk-loader-persistent-pinned"] + ["--epochs", "40"], tmp_path)
    try:
        _read_until_step(proc, 3)
        workers = _children(proc.pid)
        assert len(workers) == 2, workers
        os.kill(workers[0], signal.SIGKILL)
        out = _finish(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode not in (0, EXIT_CHECKPOINTED), out
    assert "checkpointed step" not in out and "is killed by signal: Killed" in out, out


def test_stop_signal_and_worker_guard_are_installed_explicitly_and_restorable():
    from torch.utils.data._utils import signal_handling

    from goodput.torch.stop_signal import StopSignal
    from goodput.torch.worker_signals import TorchWorkerGuard

    def previous(signum, frame):
        pass

    old = signal.signal(signal.SIGTERM, previous)
    original_setup = signal_handling._set_worker_signal_handlers
    try:
        stop, guard = StopSignal(), TorchWorkerGuard()
        assert signal.getsignal(signal.SIGTERM) is previous  # constructing changes nothing
        assert stop.install() and guard.install()
        assert signal_handling._set_worker_signal_handlers is not original_setup
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 5
        while not stop.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stop.is_set()
        stop.uninstall()
        guard.uninstall()
        assert signal.getsignal(signal.SIGTERM) is previous
        assert signal_handling._set_worker_signal_handlers is original_setup
    finally:
        signal.signal(signal.SIGTERM, old)


def test_a_runtime_changes_no_process_state_until_its_hooks_are_installed(tmp_path):
    import torch

    from goodput.torch.env import read_job_env
    from goodput.torch.runtime import Runtime

    before = signal.getsignal(signal.SIGTERM)
    runtime = Runtime(read_job_env({}, checkpoint_dir=str(tmp_path)), torch.device("cpu"),
                      checkpoint_interval_s=600, checkpoint_every_epoch=True)
    assert signal.getsignal(signal.SIGTERM) is before
    runtime.install_process_hooks()
    try:
        assert signal.getsignal(signal.SIGTERM) is not before
    finally:
        runtime.remove_process_hooks()
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.parametrize("persistent", [False, True])
def test_a_forked_worker_that_never_starts_is_replaced(tmp_path, persistent):
    """A worker deadlocked after the fork (worker_start.py) must not stall the replica."""
    marker = tmp_path / "stalled"
    args = ["--workers", "2", "--epochs", "2", "--stall-first-worker", str(marker)]
    env_extra = {"GOODPUT_CHECKPOINT_DIR": str(tmp_path), "GOODPUT_WORKER_START_S": "2"}
    env = replica_env(0, 1, free_port(), env_extra)
    proc = subprocess.Popen([PYTHON, WORKER, *args, *(["--persistent"] if persistent else [])],
                            env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    out = _finish(proc, timeout_s=90)
    assert marker.exists(), out  # the stall happened
    assert proc.returncode == 0 and out.rstrip().endswith("DONE"), out
    assert re.search(r"DataLoader worker\(s\) \d+ did not start within 2 s", out), out
    assert _steps(out) == list(range(1, 33)), out  # both epochs, every step once

