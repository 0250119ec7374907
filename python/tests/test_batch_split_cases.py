"""The SDK's batch split is the TypeScript rule (src/goodput/batch-split.ts): same cases."""
import json
from pathlib import Path

from goodput.torch.batch_config import (BatchConfig, BatchLimits, derive_batch_config,
                                        split_batch, split_fixed_batch)

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


def test_fixed_split_matches_the_typescript_rule_on_every_shared_case():
    cases = json.loads(CASES.read_text())["cases"]
    for case in cases:
        limits, r = _limits(case["limits"]), case["num_replicas"]
        assert split_fixed_batch(limits, case["batch_size"], r) == BatchConfig(**case["fixed"]), case


def test_a_derived_batch_never_passes_max_batch_size():
    digits = BatchLimits(64, 512, 8, 256, True)
    assert derive_batch_config(512, 3, digits) == BatchConfig(170, 0)
    for world in range(1, 9):
        for global_batch in (64, 100, 333, 512):
            config = derive_batch_config(global_batch, world, digits)
            assert config.total_batch_size(world) <= 512, (global_batch, world, config)
