"""A stand-in for an SDK script that speaks the report contract alone (no torch): its step takes
1 ms per sample per micro-step, so the profile's points are known exactly. Exits 143 on SIGTERM.
With FAKE_SDK_ENV_DIR set, each rank writes its environment there (rank-N.json)."""
import json
import os
import signal
import sys
import time
import urllib.request

signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
if os.environ.get("FAKE_SDK_ENV_DIR"):  # what the launcher gave this rank, for the tests
    with open(os.path.join(os.environ["FAKE_SDK_ENV_DIR"], f"rank-{os.environ.get('RANK', '?')}.json"), "w") as f:
        json.dump(dict(os.environ), f)
url = f"{os.environ['GOODPUT_API']}/v1/jobs/{os.environ['GOODPUT_JOB_ID']}/reports"
headers = {"Authorization": f"Bearer {os.environ['GOODPUT_TOKEN']}", "content-type": "application/json"}
limits = {"init_batch_size": 16, "max_batch_size": 256, "min_local_bsz": 8, "max_local_bsz": 64, "accumulation": True}
local_bsz, accum_steps, step = 8, 0, 0
world = int(os.environ.get("WORLD_SIZE", "1"))  # every rank reports, as the SDK's do
while True:
    time.sleep(0.05)
    step += 1
    entry = {"time_s": time.time(), "step": step, "num_nodes": 1, "num_replicas": world, "local_bsz": local_bsz,
             "accum_steps": accum_steps, "step_time_s": 0.001 * local_bsz * (accum_steps + 1), "sync_time_s": 0,
             "grad_sqr": 1.0, "grad_var": 2.0, "model_parameters": 1000}
    body = json.dumps({"attempt": 0, "limits": limits, "reports": [entry]}).encode()
    config = json.load(urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers)))["config"]
    local_bsz, accum_steps = config["local_bsz"], config["accum_steps"]
