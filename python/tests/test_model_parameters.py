"""Report entries carry `model_parameters` (docs/contract.md): the elements of the parameters
whose gradients are all-reduced (requires_grad; a shared parameter once), counted when
AdaptiveDataParallel wraps the model. Real replicas against a real HTTP server, which refuses a
value that is not a positive integer as the control plane does."""

import os

from conftest import WORKERS_DIR, step_record
from contract_server import ContractServer, validate_body
from goodput.torch.report_client import aggregate_steps

WORKER = os.path.join(WORKERS_DIR, "parameters_worker.py")
TRAINED_PARAMETERS = 8 * 3 + 3  # the worker's head; its frozen layer and the tied copy excluded


def test_every_report_carries_the_trained_parameter_count(launch, tmp_path):
    with ContractServer() as server:
        env = dict(server.env(), GOODPUT_CHECKPOINT_DIR=str(tmp_path / "ckpt"),
                   GOODPUT_REPORT_INTERVAL_S="0.05", GOODPUT_NUM_NODES="1")
        codes, outputs = launch(WORKER, [], 2, env).wait(120)
        assert codes == [0, 0], outputs
        assert not server.errors, server.errors
        reports = server.reports()
    assert len(reports) >= 1
    assert [r.get("model_parameters") for r in reports] == [TRAINED_PARAMETERS] * len(reports)


def test_aggregation_keeps_the_parameter_count_and_omits_it_when_unknown():
    base = step_record()
    [entry] = aggregate_steps([dict(base, model_parameters=27), dict(base, step=2,
                                                                     model_parameters=27)])
    assert entry["model_parameters"] == 27
    [entry] = aggregate_steps([base])
    assert "model_parameters" not in entry


def test_the_contract_server_refuses_what_the_control_plane_refuses():
    def body(value):
        report = {"time_s": 1.0, "step": 1, "epoch": 0, "num_nodes": 1, "num_replicas": 1,
                  "local_bsz": 32, "accum_steps": 0, "step_time_s": 0.1, "sync_time_s": 0.0,
                  "grad_sqr": None, "grad_var": None, "samples": 32, "model_parameters": value,
                  "breakdown": {"data_wait_s": 0.0, "forward_backward_s": 0.1, "sync_s": 0.0,
                                "optimizer_s": 0.0}}
        return {"attempt": 0, "reports": [report]}
    assert validate_body(body(27)) is None
    assert validate_body(body(None)) is None
    for bad in (0, -5, 1.5, "27", True):
        assert validate_body(body(bad)) is not None, bad
