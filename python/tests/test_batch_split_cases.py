"""The SDK's batch split is the TypeScript rule (src/goodput/batch-split.ts): same cases."""
import json
from pathlib import Path

from goodput.torch.batch_config import BatchConfig, BatchLimits, split_batch

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "batch-split" / "cases.json"


def _limits(d):
    return BatchLimits(d["init_batch_size"], d["max_batch_size"], d["min_local_bsz"],
                       d["max_local_bsz"], d["accumulation"])


def test_split_matches_the_typescript_rule_on_every_shared_case():
    cases = json.loads(CASES.read_text())["cases"]
    assert len(cases) > 100
    for case in cases:
        limits, r = _limits(case["limits"]), case["num_replicas"]
        assert split_batch(limits, case["batch_size"], r) == BatchConfig(**case["split"]), case
