"""Pure pieces: environment parsing, batch limits and splits, and the epoch sampling plan."""

import pytest

from goodput.torch.batch_config import BatchConfig, BatchLimits, derive_batch_config
from goodput.torch.env import read_job_env
from goodput.torch.epoch_plan import EpochPlan


def test_env_defaults_are_a_valid_standalone_run():
    env = read_job_env({})
    assert (env.rank, env.world_size, env.attempt, env.num_nodes) == (0, 1, 0, 1)
    assert not env.has_control_plane and env.checkpoint_dir.endswith("checkpoint")
    full = read_job_env({"RANK": "2", "WORLD_SIZE": "3", "GOODPUT_API": "http://h:1/",
                         "GOODPUT_JOB_ID": "j", "GOODPUT_ATTEMPT": "4",
                         "GOODPUT_CHECKPOINT_DIR": "/c"})
    assert full.api_url == "http://h:1" and full.has_control_plane and full.attempt == 4
    assert read_job_env({"GOODPUT_CHECKPOINT_DIR": "/c"}, checkpoint_dir="/x").checkpoint_dir == "/x"


def test_env_errors_name_the_variable():
    with pytest.raises(ValueError, match="RANK=3 is not in"):
        read_job_env({"RANK": "3", "WORLD_SIZE": "2"})
    with pytest.raises(ValueError, match="GOODPUT_ATTEMPT='x' is not an integer"):
        read_job_env({"GOODPUT_ATTEMPT": "x"})


def test_limits_validation_and_report_shape():
    with pytest.raises(ValueError, match="max_batch_size=32 is smaller"):
        BatchLimits(64, 32, 1, None, False)
    with pytest.raises(ValueError, match="local_bsz_bounds"):
        BatchLimits(64, 64, 16, 8, False)
    limits = BatchLimits(64, 512, 8, None, True)
    assert limits.adaptive and limits.to_report() == {
        "init_batch_size": 64, "max_batch_size": 512, "min_local_bsz": 8, "max_local_bsz": 512,
        "accumulation": True}


def test_derive_batch_config_splits_and_accumulates():
    assert derive_batch_config(64, 2, BatchLimits(64, 64, 1, None, False)) == BatchConfig(32, 0)
    # 22 x 3 = 66 would pass max_batch_size 64.
    assert derive_batch_config(64, 3, BatchLimits(64, 64, 1, None, False)) == BatchConfig(21, 0)
    with_accum = BatchLimits(64, 1024, 1, 16, True)
    assert derive_batch_config(256, 2, with_accum) == BatchConfig(16, 7)
    no_accum = BatchLimits(64, 1024, 1, 16, False)
    assert derive_batch_config(256, 2, no_accum) == BatchConfig(16, 0)
    assert BatchConfig(16, 7).total_batch_size(2) == 256


@pytest.mark.parametrize("world_sizes", [(1,), (2, 1, 3), (3, 2), (4,)])
def test_plan_covers_each_sample_once_whatever_the_replica_changes(world_sizes):
    plan = EpochPlan(103, epoch=5, seed=9, shuffle=True)
    assert sorted(plan.order) == list(range(103))
    assert plan.order == EpochPlan(103, epoch=5, seed=9, shuffle=True).order
    assert plan.order != EpochPlan(103, epoch=6, seed=9, shuffle=True).order
    seen, position, step = [], 0, 0
    while position < 103:
        world = world_sizes[min(step // 3, len(world_sizes) - 1)]  # rescale every 3 steps
        counts = set()
        for rank in range(world):
            indices, count = plan.micro_batch(position, 7, world, rank)
            seen += indices
            counts.add(count)
            assert indices  # never an empty micro-batch
        assert len(counts) == 1  # every rank advances the position identically
        position += counts.pop()
        step += 1
    assert sorted(seen) == list(range(103))  # each sample once: no tail re-read


@pytest.mark.parametrize("world", [2, 3, 4, 5])
def test_a_tail_smaller_than_the_replicas_joins_the_micro_step_before_it(world):
    # Every resume position of a 2-replica job with 4 samples per step, continued on `world`
    # replicas of local batch 2: the epoch is read once, each micro-batch at most one sample
    # over the local batch (without the merge, a tail of 1 or 2 samples re-read samples).
    for start in range(0, 100, 4):
        plan = EpochPlan(100, epoch=1, seed=0, shuffle=True)
        seen, position = [], start
        while position < 100:
            counts = set()
            for rank in range(world):
                indices, count = plan.micro_batch(position, 2, world, rank)
                assert 1 <= len(indices) <= 3
                seen += indices
                counts.add(count)
            assert len(counts) == 1
            position += counts.pop()
        left = 100 - start
        if left >= world:
            assert sorted(seen) == sorted(plan.order[start:]), (world, start)
        else:  # resumed with fewer samples than replicas left: the only re-reads
            assert set(plan.order[start:]) <= set(seen) and len(seen) == world


def test_without_merge_and_with_fewer_samples_than_replicas_ranks_re_read():
    dropping = EpochPlan(10, epoch=0, seed=0, shuffle=False, merge_tail=False)
    assert dropping.step_count(6, 2, 2) == 4 and dropping.step_count(9, 2, 2) == 1
    merging = EpochPlan(10, epoch=0, seed=0, shuffle=False)
    assert merging.step_count(5, 2, 2) == 5  # 4 + a tail of 1 < 2 replicas
    # Resumed with 3 replicas where 2 samples are left: one rank re-reads a first sample.
    assert [merging.micro_batch(8, 2, 3, r)[0] for r in range(3)] == [[8], [9], [2]]
