"""Reports measurements to the control plane from a background thread (docs/contract.md).

Invariants:
  * the training thread only appends to a bounded deque (`submit`) and reads `latest_config`;
    it never waits on the network, so a slow or absent control plane cannot block training;
  * per-step records are aggregated off the training thread into one report entry per run of
    consecutive steps with the same (num_replicas, local_bsz, accum_steps) and flush window;
  * failed posts keep their entries (bounded: oldest dropped first) and are retried with
    exponential backoff; the job keeps its last configuration meanwhile;
  * `limits` go with every post until one succeeds in this attempt.
"""

import json
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass
from typing import Any, Deque, Dict, List, Optional

MAX_QUEUED_STEPS = 20_000
MAX_PENDING_ENTRIES = 500
MAX_BACKOFF_S = 60.0
_MEAN_FIELDS = ("step_time_s", "sync_time_s")
_LAST_FIELDS = ("time_s", "step", "epoch", "num_nodes", "samples", "grad_sqr", "grad_var")
_GROUP_FIELDS = ("num_replicas", "local_bsz", "accum_steps")
_OPTIONAL_LAST_FIELDS = ("remaining_samples", "checkpoint_time_s", "model_parameters", "host")


@dataclass(frozen=True)
class RemoteConfig:
    """The configuration returned by the control plane; `version` increases on every change.

    The answer's `lr_scale` is deliberately not read: the learning-rate factor is the SDK's own
    (scaling_rules.py), computed at every optimizer step from the batch in force and the
    noise statistics of that step, with the rule the script chose (AdaScale, its square root for
    Adam, linear, ...). The control plane's figure is its prediction for display; using it would
    apply a stale value computed with a rule the optimizer may not follow."""
    local_bsz: int
    accum_steps: int
    batch_size: Optional[int]
    version: int


def aggregate_steps(records: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Folds consecutive per-step records with the same configuration into report entries."""
    entries: List[Dict[str, Any]] = []
    group: List[Dict[str, Any]] = []

    def close_group() -> None:
        if not group:
            return
        last = group[-1]
        entry: Dict[str, Any] = {k: last[k] for k in _LAST_FIELDS}
        entry.update({k: last[k] for k in _GROUP_FIELDS})
        for key in _OPTIONAL_LAST_FIELDS:  # only when the SDK knows them
            if last.get(key) is not None:
                entry[key] = last[key]
        peaks = [r["memory_peak_bytes"] for r in group if r.get("memory_peak_bytes") is not None]
        if peaks:  # each record holds the peak of its own step: the entry's is the largest
            entry["memory_peak_bytes"] = max(peaks)
        for key in _MEAN_FIELDS:
            entry[key] = sum(r[key] for r in group) / len(group)
        losses = [r["loss"] for r in group if r.get("loss") is not None]
        if losses:
            entry["loss"] = sum(losses) / len(losses)
        entry["breakdown"] = {k: sum(r["breakdown"][k] for r in group) / len(group)
                              for k in last["breakdown"]}
        entries.append(entry)
        group.clear()

    for record in records:
        if group and any(record[k] != group[0][k] for k in _GROUP_FIELDS):
            close_group()
        group.append(record)
    close_group()
    return entries


def parse_config(body: bytes, version: int) -> Optional[RemoteConfig]:
    """The `config` of a 200 response, or None if it is absent or malformed."""
    try:
        config = json.loads(body.decode("utf-8"))["config"]
        local_bsz = int(config["local_bsz"])
        accum_steps = int(config.get("accum_steps", 0))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if local_bsz < 1 or accum_steps < 0:
        return None
    batch_size = config.get("batch_size")
    return RemoteConfig(local_bsz, accum_steps,
                        int(batch_size) if isinstance(batch_size, (int, float)) else None, version)


class ReportClient:
    def __init__(self, api_url: str, job_id: str, token: Optional[str], attempt: int,
                 limits: Dict[str, Any], interval_s: float = 5.0, timeout_s: float = 3.0):
        self.url = f"{api_url.rstrip('/')}/v1/jobs/{job_id}/reports"
        self._token = token
        self._attempt = attempt
        self._limits = limits
        self._limits_acknowledged = False
        self._interval_s = max(0.05, interval_s)
        self._timeout_s = timeout_s
        self._queue: Deque[Dict[str, Any]] = deque(maxlen=MAX_QUEUED_STEPS)
        self._pending: List[Dict[str, Any]] = []
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._first_flush_done = False
        self._failures = 0
        self._rejected_as_malformed = False
        self.latest_config: Optional[RemoteConfig] = None
        # The script's learning-rate rule by name (scaling_rules.rule_name); sent when known.
        self.lr_rule: Optional[str] = None
        self.posts_ok = 0
        self.posts_failed = 0
        self.last_error: Optional[str] = None
        self._thread = threading.Thread(target=self._run, name="goodput-report", daemon=True)
        self._thread.start()

    def submit(self, record: Dict[str, Any]) -> None:
        """Queues one step's record. O(1); called on the training thread."""
        self._queue.append(record)
        if not self._first_flush_done:
            self._wake.set()  # the first report goes out at once, so limits arrive early

    def close(self, timeout_s: float = 2.0) -> None:
        """Stops the thread after one last flush attempt, waiting at most `timeout_s`."""
        self._stopping.set()
        self._wake.set()
        self._thread.join(timeout_s)

    def _run(self) -> None:
        while True:
            backoff_s = min(MAX_BACKOFF_S, self._interval_s * (2 ** self._failures)) \
                if self._failures else self._interval_s
            self._wake.wait(backoff_s)
            self._wake.clear()
            stopping = self._stopping.is_set()
            try:
                self._flush()
            except Exception as error:  # never let the reporter die: training keeps going
                self.last_error = f"{type(error).__name__}: {error}"
            if stopping:
                return

    def _flush(self) -> None:
        records = []
        while self._queue:
            records.append(self._queue.popleft())
        self._pending.extend(aggregate_steps(records))
        del self._pending[:-MAX_PENDING_ENTRIES]
        if not self._pending:
            return
        self._first_flush_done = True
        # The SDK checkpoints when stopped (SIGTERM -> checkpoint -> exit 143): a stop loses nothing.
        body: Dict[str, Any] = {"attempt": self._attempt, "reports": list(self._pending),
                                "checkpoint_on_stop": True}
        if not self._limits_acknowledged:
            body["limits"] = self._limits
        if self.lr_rule is not None:
            body["lr_rule"] = self.lr_rule
        response = self._post(body)
        if self._rejected_as_malformed:
            # Why: a body the server calls malformed will never be accepted; retrying it forever
            # would block every later report. Drop it and keep going.
            self._rejected_as_malformed = False
            del self._pending[:len(body["reports"])]
        if response is None:
            self._failures += 1
            self.posts_failed += 1
            return
        self._failures = 0
        self.posts_ok += 1
        self._limits_acknowledged = True
        del self._pending[:len(body["reports"])]
        previous = self.latest_config
        version = previous.version + 1 if previous else 1
        config = parse_config(response, version)
        if config and (previous is None or (config.local_bsz, config.accum_steps) !=
                       (previous.local_bsz, previous.accum_steps)):
            self.latest_config = config

    def _post(self, body: Dict[str, Any]) -> Optional[bytes]:
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_s) as response:
                return response.read()
        except urllib.error.HTTPError as error:
            detail = error.read()[:300].decode("utf-8", "replace")
            self.last_error = f"HTTP {error.code}: {detail}"
            self._rejected_as_malformed = error.code == 400
            if error.code in (400, 401, 403, 404) and self.posts_failed == 0:
                print(f"goodput: report rejected by {self.url}: {self.last_error}", file=sys.stderr)
        except (urllib.error.URLError, OSError, ValueError) as error:
            self.last_error = f"{type(error).__name__}: {error}"
        return None
