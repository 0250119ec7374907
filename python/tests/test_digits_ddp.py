"""2-process DDP training on scikit-learn's digits whose batch size the (stand-in) control plane
changes mid-run reaches >= 0.95 test accuracy; reports follow the contract."""

import os
import re

from conftest import REPO_ROOT
from contract_server import ContractServer

DIGITS = os.path.join(REPO_ROOT, "examples", "digits", "train.py")


def grow_batch_after_two_reports(server, body):
    if len(server.bodies) <= 2:
        return {"local_bsz": 32, "accum_steps": 0, "batch_size": 64, "lr_scale": 1.0}
    return {"local_bsz": 64, "accum_steps": 1, "batch_size": 256, "lr_scale": 1.6}


def test_two_replicas_with_batch_change_reach_95_percent(launch, tmp_path):
    with ContractServer(policy=grow_batch_after_two_reports) as server:
        env = dict(server.env(), GOODPUT_CHECKPOINT_DIR=str(tmp_path), GOODPUT_ATTEMPT="0",
                   GOODPUT_REPORT_INTERVAL_S="0.2", GOODPUT_NUM_NODES="1")
        codes, outputs = launch(DIGITS, ["--epochs", "30"], 2, env).wait(240)
        assert codes == [0, 0], "\n".join(outputs)
        reports = server.reports()
        assert not server.errors, server.errors
    last_line = outputs[0].strip().splitlines()[-1]
    accuracy = float(re.fullmatch(r"accuracy=([0-9.]+)", last_line).group(1))
    assert accuracy >= 0.95, outputs[0]
    assert "limits" in server.bodies[0] and server.bodies[0]["limits"]["init_batch_size"] == 64
    assert all(body["attempt"] == 0 for body in server.bodies)
    configs = {(r["local_bsz"], r["accum_steps"]) for r in reports}
    assert {(32, 0), (64, 1)} <= configs, configs
    assert all(r["num_replicas"] == 2 for r in reports)
    late = reports[-1]
    assert late["grad_sqr"] is not None and late["grad_var"] is not None
    assert late["samples"] > 20 * 1437  # cumulative samples over ~30 epochs of 1437
    assert "local_bsz=64" in outputs[0]
