"""The report client against a real HTTP server implementing docs/contract.md: batching, config
pick-up, and a slow, absent or rejecting control plane never blocking the training thread."""

import os
import re
import time

from conftest import REPO_ROOT, free_port
from contract_server import ContractServer
from goodput.torch.report_client import ReportClient, aggregate_steps

DIGITS = os.path.join(REPO_ROOT, "examples", "digits", "train.py")
LIMITS = {"init_batch_size": 64, "max_batch_size": 512, "min_local_bsz": 8, "max_local_bsz": 256,
          "accumulation": True}


def record(step: int, local_bsz: int = 32, step_time_s: float = 0.1):
    return {"time_s": 1000.0 + step, "step": step, "epoch": 0, "num_nodes": 1, "num_replicas": 2,
            "local_bsz": local_bsz, "accum_steps": 0, "step_time_s": step_time_s,
            "sync_time_s": step_time_s / 4, "grad_sqr": None, "grad_var": None,
            "samples": 64 * step, "loss": 1.0 / step,
            "breakdown": {"data_wait_s": 0.01, "forward_backward_s": 0.05,
                          "sync_s": step_time_s / 4, "optimizer_s": 0.01}}


def wait_for(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def test_aggregation_groups_consecutive_configs():
    records = [record(1, 32, 0.1), record(2, 32, 0.3), record(3, 64, 0.5), record(4, 32, 0.2)]
    entries = aggregate_steps(records)
    assert [e["local_bsz"] for e in entries] == [32, 64, 32]
    assert entries[0]["step"] == 2 and entries[0]["step_time_s"] == 0.2
    assert entries[0]["loss"] == (1.0 + 0.5) / 2
    assert entries[0]["breakdown"]["sync_s"] == (0.025 + 0.075) / 2


def test_aggregation_keeps_the_newest_checkpoint_time_when_known():
    records = [record(1), dict(record(2), checkpoint_time_s=1001.5), record(3, 64),
               dict(record(4, 64), checkpoint_time_s=1003.5)]
    entries = aggregate_steps(records)
    assert [e.get("checkpoint_time_s") for e in entries] == [1001.5, 1003.5]
    assert "checkpoint_time_s" not in aggregate_steps([record(1)])[0]


def test_reports_are_batched_and_config_is_picked_up():
    with ContractServer(policy=lambda s, b: {"local_bsz": 48, "accum_steps": 2, "batch_size": 288,
                                             "lr_scale": 2.0}) as server:
        client = ReportClient(server.url, server.job_id, server.token, attempt=3, limits=LIMITS,
                              interval_s=0.1)
        for step in range(1, 51):
            client.submit(record(step))
        assert wait_for(lambda: client.latest_config is not None, 5)
        assert wait_for(lambda: sum(1 for _ in server.reports()) and
                        server.reports()[-1]["step"] == 50, 5)
        client.close()
    config = client.latest_config
    assert (config.local_bsz, config.accum_steps, config.batch_size) == (48, 2, 288)
    assert not hasattr(config, "lr_scale")  # the SDK's own rule sets the LR (RemoteConfig)
    assert server.bodies[0]["attempt"] == 3 and server.bodies[0]["limits"] == LIMITS
    assert all(body["checkpoint_on_stop"] is True for body in server.bodies)
    assert all("limits" not in body for body in server.bodies[1:])
    assert len(server.reports()) < 50  # batched: several steps per entry
    assert not server.errors


def test_slow_server_never_blocks_submit():
    with ContractServer(delay_s=3.0) as server:
        client = ReportClient(server.url, server.job_id, server.token, attempt=0, limits=LIMITS,
                              interval_s=0.05, timeout_s=0.5)
        slowest_s = 0.0
        start_s = time.perf_counter()
        for step in range(1, 2001):
            t0 = time.perf_counter()
            client.submit(record(step))
            slowest_s = max(slowest_s, time.perf_counter() - t0)
            if step % 100 == 0:
                time.sleep(0.05)  # let the reporter thread try (and time out) meanwhile
        elapsed_s = time.perf_counter() - start_s
        # A submit that waited on the server would take the 0.5 s timeout; 0.1 s leaves room for
        # a loaded machine (the suite runs this beside torch and Slurm tests).
        assert slowest_s < 0.1 and elapsed_s < 2.5, (slowest_s, elapsed_s)
        assert wait_for(lambda: client.posts_failed >= 1, 5)
        assert client.latest_config is None  # keeps its last configuration
        server.delay_s = 0.0  # the control plane recovers: pending entries are delivered
        assert wait_for(lambda: server.reports() and server.reports()[-1]["step"] == 2000, 15)
        client.close()


def test_absent_then_present_control_plane():
    port = free_port()
    client = ReportClient(f"http://127.0.0.1:{port}", "job-1", "secret", attempt=0, limits=LIMITS,
                          interval_s=0.05, timeout_s=0.5)
    client.submit(record(1))
    assert wait_for(lambda: client.posts_failed >= 2, 5)
    assert "Connection refused" in (client.last_error or "") or client.last_error
    with ContractServer(port=port) as server:
        client.submit(record(2))
        assert wait_for(lambda: client.posts_ok >= 1, 10), client.last_error
        assert [r["step"] for r in server.reports()][-1] == 2
        assert server.bodies[0]["limits"] == LIMITS  # limits still go with the first success
    client.close()


def test_wrong_token_is_reported_not_raised():
    with ContractServer() as server:
        client = ReportClient(server.url, server.job_id, "not-the-token", attempt=0,
                              limits=LIMITS, interval_s=0.05)
        client.submit(record(1))
        assert wait_for(lambda: client.posts_failed >= 1, 5)
        assert client.last_error.startswith("HTTP 403")
        assert client.latest_config is None
        client.close()


def test_training_with_slow_and_absent_control_plane(launch, tmp_path):
    """The digits example finishes normally while the control plane hangs or is gone."""
    absent = {"GOODPUT_API": f"http://127.0.0.1:{free_port()}", "GOODPUT_JOB_ID": "job-1",
              "GOODPUT_TOKEN": "secret", "GOODPUT_REPORT_INTERVAL_S": "0.1",
              "GOODPUT_CHECKPOINT_DIR": str(tmp_path / "absent")}
    # The hanging server answers nothing until the test is over: both runs must end on their own
    # while it still holds every report (not within so many seconds, which a loaded machine misses).
    with ContractServer(hold=True) as hanging:
        held = dict(hanging.env(), GOODPUT_REPORT_INTERVAL_S="0.1",
                    GOODPUT_CHECKPOINT_DIR=str(tmp_path / "slow"))
        runs = [launch(DIGITS, ["--epochs", "3"], 1, env) for env in (absent, held)]
        # A bound only against a hang (a client that waited on the server would never end): two
        # digits runs took over 100 s at a load average of 30.
        results = [run.wait(300) for run in runs]
        received, answered = hanging.received, len(hanging.bodies)
    for codes, outputs in results:
        assert codes == [0], outputs[0]
        assert re.search(r"^accuracy=0\.\d+$", outputs[0].strip().splitlines()[-1], re.M)
    assert received >= 1 and answered == 0, (received, answered)  # it hung on every report


def test_the_learning_rate_rule_goes_with_every_report_once_known():
    """The control plane states the LR factor by the script's rule (docs/sdk.md): sent by name."""
    import torch
    from goodput.torch.scaling_rules import resolve_rule, rule_name
    params = [torch.nn.Parameter(torch.zeros(1))]
    assert rule_name(resolve_rule(None, torch.optim.Adam(params))) == "adamscale"
    assert rule_name(resolve_rule(None, torch.optim.SGD(params, lr=0.1))) == "adascale"
    assert rule_name(resolve_rule(lambda s, n: 1.0, None)) == "custom"
    with ContractServer() as server:
        client = ReportClient(server.url, server.job_id, server.token, attempt=0, limits=LIMITS,
                              interval_s=0.05)
        client.lr_rule = "adamscale"
        client.submit(record(1))
        assert wait_for(lambda: len(server.bodies) > 0, 5)
        client.close()
    assert all(body["lr_rule"] == "adamscale" for body in server.bodies)
    assert not server.errors
