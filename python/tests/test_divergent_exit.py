"""A replica whose script ends while another still runs collectives (ranks that disagree on when
to stop) exits at once, and the other fails at once with gloo's "Connection closed by peer",
instead of both waiting for the group's timeout (30 min by default): what anything the SDK
adds at exit (a barrier, say) must keep. Real processes, real gloo (normal_exit_worker.py)."""

import os
import time

from conftest import WORKERS_DIR


def test_a_rank_that_ends_first_does_not_hold_up_one_still_in_a_collective(launch, tmp_path):
    started = time.monotonic()
    replicas = launch(os.path.join(WORKERS_DIR, "normal_exit_worker.py"), ["--rank0-collective"],
                      world_size=2, extra_env={"GOODPUT_CHECKPOINT_DIR": str(tmp_path)})
    codes, outputs = replicas.wait(120)
    joined = "\n---- rank 1 ----\n".join(outputs)
    assert codes == [1, 0], joined
    assert "Connection closed by peer" in outputs[0], joined
    assert "rank=1 done" in outputs[1], joined
    # Both ended well within the wait above (about 7 s alone on 2 CPUs).
    assert time.monotonic() - started < 90, joined
