"""Report entries carry `remaining_samples` (docs/contract.md): the samples of the epochs not yet
finished less those the current epoch has consumed, when the script declares its epoch count
through remaining_epochs(); omitted when it does not. Real replicas against a real HTTP server."""

import os
import signal
import time

from conftest import WORKERS_DIR, step_record
from contract_server import ContractServer
from goodput.torch.report_client import aggregate_steps

WORKER = os.path.join(WORKERS_DIR, "remaining_worker.py")
SAMPLES = 320  # the worker's data set
EPOCHS = 4


def keep_batch(server, body):
    return {"local_bsz": 32, "accum_steps": 0, "batch_size": 32, "lr_scale": 1.0}


def job_env(server, tmp_path, attempt: int):
    return dict(server.env(), GOODPUT_CHECKPOINT_DIR=str(tmp_path / "ckpt"),
                GOODPUT_ATTEMPT=str(attempt), GOODPUT_REPORT_INTERVAL_S="0.05",
                GOODPUT_NUM_NODES="1")


def assert_counts_down(reports):
    remaining = [r["remaining_samples"] for r in reports]
    assert len(remaining) >= 5, remaining  # several posts: the sequence means something
    assert all(b < a for a, b in zip(remaining, remaining[1:])), remaining
    for r in reports:  # one sample processed = one sample less to do (samples are cumulative)
        assert r["remaining_samples"] == EPOCHS * SAMPLES - r["samples"], r
    assert reports[-1]["remaining_samples"] == 0  # the last step is flushed at exit


def test_remaining_samples_count_down_to_zero(launch, tmp_path):
    with ContractServer(policy=keep_batch) as server:
        codes, outputs = launch(WORKER, ["--epochs", str(EPOCHS)], 1,
                                job_env(server, tmp_path, 0)).wait(120)
        assert codes == [0], outputs[0]
        assert not server.errors, server.errors
        reports = server.reports()
    assert_counts_down(reports)
    assert {r["epoch"] for r in reports} >= {0, EPOCHS - 1}


def test_remaining_samples_continue_after_a_mid_epoch_restart(launch, tmp_path):
    with ContractServer(policy=keep_batch) as server:
        first = launch(WORKER, ["--epochs", str(EPOCHS), "--step-sleep-s", "0.05"], 1,
                       job_env(server, tmp_path, 0))
        deadline = time.monotonic() + 60
        # Stop in the middle of the second epoch, so the resumed loader continues its position.
        while not any(r["samples"] >= SAMPLES + 64 for r in server.reports()):
            assert time.monotonic() < deadline and first.procs[0].poll() is None
            time.sleep(0.02)
        first.procs[0].send_signal(signal.SIGTERM)
        codes, outputs = first.wait(60)
        assert codes == [143], outputs[0]
        stopped_at = len(server.reports())
        codes, outputs = launch(WORKER, ["--epochs", str(EPOCHS)], 1,
                                job_env(server, tmp_path, 1)).wait(120)
        assert codes == [0], outputs[0]
        assert not server.errors, server.errors
        reports = server.reports()
    resumed = reports[stopped_at:]
    assert resumed and resumed[0]["epoch"] == 1, resumed[:1]  # resumed inside the second epoch
    assert SAMPLES < resumed[0]["samples"] < 2 * SAMPLES
    assert_counts_down(reports)


def test_remaining_samples_omitted_without_an_epoch_count(launch, tmp_path):
    with ContractServer(policy=keep_batch) as server:
        codes, outputs = launch(WORKER, ["--passes", "2"], 1,
                                job_env(server, tmp_path, 0)).wait(120)
        assert codes == [0], outputs[0]
        assert not server.errors, server.errors
        reports = server.reports()
    assert len(reports) >= 2
    assert all(r.get("remaining_samples") is None for r in reports), reports
    assert reports[-1]["samples"] == 2 * SAMPLES


def test_aggregation_keeps_the_last_known_remaining_samples():
    base = step_record()
    known = [dict(base, step=1, remaining_samples=96), dict(base, step=2, remaining_samples=64)]
    [entry] = aggregate_steps(known)
    assert entry["remaining_samples"] == 64  # like samples: the entry's last step
    [entry] = aggregate_steps([dict(base, step=1), dict(base, step=2)])
    assert "remaining_samples" not in entry
