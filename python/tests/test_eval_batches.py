"""Issue 52: NCF's evaluation crashed at 3 replicas: AdaptiveDataLoader(train=False) split each
user's 100-item batch over the replicas and torch.topk failed. Evaluation loaders now read whole
batches, as a plain DataLoader cuts them, spread over the replicas."""

import json
import os

import pytest

from conftest import WORKERS_DIR

WORKER = os.path.join(WORKERS_DIR, "eval_batches_worker.py")


def _run(launch, tmp_path, world, users, *args):
    codes, outputs = launch(WORKER, [str(tmp_path), str(users), *args], world_size=world).wait()
    assert codes == [0] * world, outputs
    return [json.load(open(os.path.join(tmp_path, f"rank{r}.json"))) for r in range(world)]


@pytest.mark.parametrize("world", [1, 3])
def test_each_batch_is_one_whole_user_at_any_replica_count(launch, tmp_path, world):
    ranks = _run(launch, tmp_path, world, 7)
    users = [b["users"] for r in ranks for b in r["batches"]]
    assert all(len(u) == 1 for u in users), users  # never two users in a batch
    assert all(b["size"] == 100 for r in ranks for b in r["batches"])  # nor a split one
    assert sorted(u[0] for u in users) == list(range(7))  # every user once over the replicas
    assert [r["len"] for r in ranks] == [len(r["batches"]) for r in ranks]
    assert ranks[0]["hits"] == 2 * 7  # two passes, one hit per user


def test_false_friend_a_short_last_batch_stays_whole_or_is_dropped(launch, tmp_path):
    # 5 users minus 30 items: 4 full batches and one of 70, as a plain DataLoader makes them.
    ranks = _run(launch, tmp_path, 3, 5, "30")
    assert sorted(b["size"] for r in ranks for b in r["batches"]) == [70] + [100] * 4
    dropped = _run(launch, tmp_path, 3, 5, "30", "drop_last")
    assert sorted(b["size"] for r in dropped for b in r["batches"]) == [100] * 4
