"""The SDK names the torch.distributed backend in its `host` object (`dist_backend`,
docs/contract.md), so that the doctor's advice on slow gradient sync fits it: NCCL's transport
settings mean nothing to a gloo job. Real replicas of a gloo DDP run on the CPU, against a real
HTTP server that refuses a malformed name."""

import json
import os

from conftest import WORKERS_DIR, step_record
from contract_server import ContractServer, validate_body

WORKER = os.path.join(WORKERS_DIR, "parameters_worker.py")  # 2 epochs of DDP through the SDK


def test_a_gloo_ddp_run_records_its_backend_in_the_step_log_and_the_reports(launch, tmp_path):
    with ContractServer() as server:
        env = dict(server.env(), GOODPUT_CHECKPOINT_DIR=str(tmp_path / "ckpt"),
                   GOODPUT_STEP_LOG=str(tmp_path / "steps-{rank}.json"),
                   GOODPUT_REPORT_INTERVAL_S="0.05", GOODPUT_NUM_NODES="1")
        codes, outputs = launch(WORKER, [], 2, env).wait(120)
        assert codes == [0, 0], outputs
        assert not server.errors, server.errors
        reports = server.reports()
    for rank in (0, 1):
        log = json.load(open(tmp_path / f"steps-{rank}.json"))
        assert log["steps"], log
        assert log["host"]["dist_backend"] == "gloo", log["host"]
        assert log["host"]["local_processes"] == 2
    assert reports and all(r["host"]["dist_backend"] == "gloo" for r in reports), reports


def test_the_contract_server_takes_a_backend_name_and_refuses_anything_else():
    def body(backend):
        host = {"cpu_count": 2, "torch_threads": 1, "dist_backend": backend}
        return {"attempt": 0, "reports": [step_record(host=host)]}
    for good in ("gloo", "nccl", "cpu:gloo,cuda:nccl"):
        assert validate_body(body(good)) is None, good
    for bad in ("", "x" * 41, "gloo; rm", 3, None):
        assert validate_body(body(bad)) is not None, bad
