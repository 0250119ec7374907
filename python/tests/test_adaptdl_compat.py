"""Code written for AdaptDL ports cleanly: drop_last, keyword-only arguments after
(module, optimizer, lr_scheduler), an Accumulator summed over the replicas that survives
restarts, share_path() and job_id(). Real gloo processes where replicas matter."""

import os
import re
import subprocess
import textwrap

from conftest import PYTHON, WORKERS_DIR, free_port, replica_env
from goodput.torch.env import EXIT_CHECKPOINTED

WORKER = os.path.join(WORKERS_DIR, "adaptdl_compat_worker.py")


def test_drop_last_drops_the_short_last_micro_batch_on_every_replica(launch, tmp_path):
    codes, outputs = launch(WORKER, ["--drop-last", "--epochs", "2"], world_size=2,
                            extra_env={"GOODPUT_CHECKPOINT_DIR": str(tmp_path)}).wait()
    assert codes == [0, 0], outputs
    for rank, output in enumerate(outputs):
        sizes = re.findall(rf"^rank={rank} epoch=\d local_sizes=\[([^\]]*)\] len=(\d+)$",
                           output, re.M)
        assert len(sizes) == 2, output
        for listed, length in sizes:  # 100 samples, 32 per micro-step: 3 full ones, 4 dropped
            assert listed == "16, 16, 16" and length == "3", output
    assert re.findall(r"^epoch=\d samples=(\d+)", outputs[0], re.M) == ["96", "96"]


def test_accumulator_sums_over_replicas_and_survives_a_stop_and_a_rescale(launch, tmp_path):
    env = {"GOODPUT_CHECKPOINT_DIR": str(tmp_path)}
    # 100 samples, global batch 4: 25 steps per epoch; the stop is asked for at step 27 and
    # taken within two control rounds (at most 0.5 s apart, steps of 50 ms): mid-epoch 1.
    args = ["--batch-size", "4", "--step-sleep-s", "0.05"]
    codes, outputs = launch(WORKER, args + ["--stop-at-step", "27"], world_size=2,
                            extra_env=env).wait()
    assert codes == [EXIT_CHECKPOINTED] * 2, outputs
    assert "epoch=0 samples=100 index_sum=4950" in outputs[0], outputs[0]
    stopped = int(re.search(r"checkpointed step (\d+)", outputs[0]).group(1))
    assert 27 <= stopped < 50 and "epoch=1 samples" not in outputs[0], outputs[0]
    # Resumed on 3 replicas (3 samples per step): epoch 1 counts the samples before and after
    # the stop once each. Two stop steps in three leave a tail of 1 or 2 samples, which once
    # made ranks re-read the epoch's first samples (101 or 102 counted); it now joins the
    # micro-step before it (epoch_plan.py).
    codes, outputs = launch(WORKER, args, world_size=3, extra_env=env).wait()
    assert codes == [0, 0, 0], outputs
    assert re.findall(r"^epoch=(\d) samples=(\d+) index_sum=(\d+)$", outputs[0], re.M) == \
        [("1", "100", "4950"), ("2", "100", "4950")], outputs[0]
    assert "total samples=300" in outputs[0], outputs[0]


def _run_alone(code, tmp_path, extra_env=None):
    env = replica_env(0, 1, free_port(), {"GOODPUT_CHECKPOINT_DIR": str(tmp_path / "ckpt"),
                                          **(extra_env or {})})
    return subprocess.run([PYTHON, "-c", textwrap.dedent(code)], env=env, text=True,
                          capture_output=True, timeout=120)


def test_a_fourth_positional_argument_is_refused_naming_the_adaptdl_difference(tmp_path):
    result = _run_alone("""
        import torch
        import goodput.torch as gt
        net = torch.nn.Linear(2, 2)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for args, kwargs in [((None, object()), {}), ((None,), {"mp_scaler": object()}),
                             ((None,), {"scaling_rule": object()})]:
            try:
                gt.AdaptiveDataParallel(net, opt, *args, **kwargs)
            except TypeError as error:
                print("REFUSED", error)
        model = gt.AdaptiveDataParallel(net, opt, None, lr_scaling="linear", name="ok")
        print("ACCEPTED", type(model).__name__)
        """, tmp_path)
    assert result.returncode == 0, result.stderr
    refusals = re.findall(r"^REFUSED (.*)$", result.stdout, re.M)
    assert len(refusals) == 3, result.stdout
    assert "3 positional arguments" in refusals[0] and "AdaptDL" in refusals[0]
    assert "GradScaler" in refusals[0] and "amp=True" in refusals[0]
    assert "mp_scaler" in refusals[1] and "lr_scaling=" in refusals[2]
    assert "ACCEPTED AdaptiveDataParallel" in result.stdout


def test_sampler_arguments_are_refused_at_construction(tmp_path):
    result = _run_alone("""
        import torch
        from torch.utils.data import TensorDataset
        import goodput.torch as gt
        data = TensorDataset(torch.zeros(10, 1))
        try:
            gt.AdaptiveDataLoader(data, batch_size=2, batch_sampler=[[0, 1]])
        except ValueError as error:
            print("REFUSED", error)
        """, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "REFUSED goodput: AdaptiveDataLoader chooses the samples itself" in result.stdout


def test_share_path_and_job_id(tmp_path):
    code = """
        import goodput.torch as gt
        print("JOB", gt.job_id())
        print("SHARE", gt.share_path())
        """
    alone = _run_alone(code, tmp_path)
    assert alone.returncode == 0, alone.stderr
    assert "JOB None" in alone.stdout
    share = str(tmp_path / "share")
    assert f"SHARE {share}" in alone.stdout and os.path.isdir(share)
    explicit = _run_alone(code, tmp_path, {"GOODPUT_JOB_ID": "job-7",
                                           "GOODPUT_SHARE_DIR": str(tmp_path / "shared")})
    assert "JOB job-7" in explicit.stdout, explicit.stderr
    assert f"SHARE {tmp_path / 'shared'}" in explicit.stdout
