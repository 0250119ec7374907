"""goodput.torch.trace_handler / export_trace: torch's chrome trace plus the host's CPU threads as
the top-level `goodput_host` member, which `goodput doctor` needs to see thread oversubscription
in a profiler trace; a real torch.profiler run and real files (plain and gzip)."""

import gzip
import json
import os
import subprocess

from conftest import PYTHON, PYTHON_DIR

from goodput.torch.profiling import add_host_to_trace

# A profiled loop under the SDK, its thread count set after init() (the export reads it then).
PROFILE = """
import sys, torch
import goodput.torch as gt
gt.init()
torch.set_num_threads(5)
net = torch.nn.Linear(8, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
model = gt.AdaptiveDataParallel(net, opt)
data = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
loader = gt.AdaptiveDataLoader(data, batch_size=16, num_workers=1)
schedule = torch.profiler.schedule(wait=0, warmup=1, active=2)
with torch.profiler.profile(schedule=schedule, on_trace_ready=gt.trace_handler(sys.argv[1])) as prof:
    for x, y in loader:
        opt.zero_grad()
        model.backward(torch.nn.functional.cross_entropy(model(x), y))
        opt.step()
        prof.step()
"""

HOST = {"cpu_count": 2, "torch_threads": 16, "local_processes": 1, "dataloader_workers": 0}


def test_profiled_run_exports_the_trace_with_its_host_threads(tmp_path):
    trace = tmp_path / "trace.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOODPUT_")}
    env.update({"GOODPUT_CHECKPOINT_DIR": str(tmp_path / "ckpt"), "PYTHONPATH": PYTHON_DIR})
    done = subprocess.run([PYTHON, "-c", PROFILE, str(trace)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.load(open(trace))
    assert doc["goodput_host"] == {"cpu_count": len(os.sched_getaffinity(0)), "torch_threads": 5,
                                   "local_processes": 1, "dataloader_workers": 1,
                                   "in_memory_dataset": True}
    names = [e.get("name", "") for e in doc["traceEvents"]]
    assert any(n.startswith("ProfilerStep#") for n in names), names[:10]


def test_bare_array_and_object_traces_plain_and_gzip(tmp_path):
    events = [{"name": "aten::mm", "ph": "X", "ts": i, "dur": 1, "tid": 1, "pid": "CPU functions",
               "args": {}} for i in range(3)]
    cases = {"array.json": events, "object.json": {"schemaVersion": 1, "traceEvents": events},
             "empty.json": {}}
    for name, content in cases.items():
        for gz in (False, True):
            path = str(tmp_path / (name + (".gz" if gz else "")))
            with (gzip.open(path, "wt") if gz else open(path, "w")) as f:
                f.write("  " + json.dumps(content, indent=1))
            add_host_to_trace(path, HOST)
            with (gzip.open(path, "rt") if gz else open(path)) as f:
                doc = json.load(f)
            assert doc["goodput_host"] == HOST, path
            if name != "empty.json":
                assert doc["traceEvents"] == events, path
            if name == "object.json":
                assert doc["schemaVersion"] == 1
            assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]


def test_not_a_trace_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    try:
        add_host_to_trace(str(path), HOST)
        raise AssertionError("expected ValueError")
    except ValueError as error:
        assert "not a chrome trace" in str(error)
    assert path.read_text() == "hello"
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]
