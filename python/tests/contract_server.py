"""A tiny real HTTP server implementing the report endpoint of docs/contract.md, standing in for
the control plane in tests. It validates requests like the real one must (401/403/404/400)."""

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional

REPORT_FIELDS = {"time_s", "step", "epoch", "num_nodes", "num_replicas", "local_bsz",
                 "accum_steps", "step_time_s", "sync_time_s", "grad_sqr", "grad_var", "samples",
                 "breakdown"}
BREAKDOWN_FIELDS = {"data_wait_s", "forward_backward_s", "sync_s", "optimizer_s"}
OPTIONAL_BREAKDOWN_FIELDS = {"between_steps_s"}
HOST_FIELDS = {"cpu_count", "torch_threads", "local_processes", "dataloader_workers"}
DIST_BACKEND = re.compile(r"[A-Za-z0-9_.:,+-]{1,40}")  # src/core/dist-backend.ts
LIMIT_FIELDS = {"init_batch_size", "max_batch_size", "min_local_bsz", "max_local_bsz",
                "accumulation"}

LR_RULES = {"adascale", "adamscale", "linear", "sqrt", "none", "custom"}

ConfigPolicy = Callable[["ContractServer", Dict[str, Any]], Dict[str, Any]]


def validate_body(body: Any) -> Optional[str]:
    """The contract's shape; returns an error message or None."""
    if not isinstance(body, dict) or not isinstance(body.get("attempt"), int):
        return "attempt must be an integer"
    if "limits" in body and set(body["limits"]) != LIMIT_FIELDS:
        return f"limits fields {sorted(body['limits'])}"
    if not isinstance(body.get("checkpoint_on_stop", False), bool):
        return "checkpoint_on_stop must be a boolean"
    if body.get("lr_rule", "adascale") not in LR_RULES:  # src/core/wire.ts lrRuleSchema
        return f"lr_rule must be one of {sorted(LR_RULES)}"
    reports = body.get("reports")
    if not isinstance(reports, list) or not reports:
        return "reports must be a non-empty list"
    for report in reports:
        missing = REPORT_FIELDS - set(report)
        if missing:
            return f"report misses {sorted(missing)}"
        if not BREAKDOWN_FIELDS <= set(report["breakdown"]) <= BREAKDOWN_FIELDS | OPTIONAL_BREAKDOWN_FIELDS:
            return f"breakdown fields {sorted(report['breakdown'])}"
        host = report.get("host")  # optional; null = unknown
        counts = ({k: v for k, v in host.items() if k not in ("dist_backend", "in_memory_dataset")}
                  if isinstance(host, dict) else None)
        if host is not None and (counts is None or not set(counts) <= HOST_FIELDS or
                                 not all(isinstance(v, int) and v >= 0 for v in counts.values()) or
                                 counts.get("cpu_count", 0) < 1 or counts.get("torch_threads", 0) < 1):
            return f"host must be an object of counts ({sorted(HOST_FIELDS)}) or null"
        if isinstance(host, dict) and host.get("in_memory_dataset", True) is not True:
            return "host.in_memory_dataset is true when present (absent otherwise)"
        # The SDK must send a well-formed name (the real server would drop a malformed one).
        if isinstance(host, dict) and "dist_backend" in host and not (
                isinstance(host["dist_backend"], str) and DIST_BACKEND.fullmatch(host["dist_backend"])):
            return "host.dist_backend must be a backend name"
        if not report["step_time_s"] > 0:
            return "step_time_s must be positive"
        remaining = report.get("remaining_samples")  # optional; null = unknown
        if remaining is not None and (isinstance(remaining, bool) or
                                      not isinstance(remaining, (int, float)) or
                                      not 0 <= remaining < float("inf")):
            return "remaining_samples must be a finite number >= 0 or null"
        checkpoint = report.get("checkpoint_time_s")  # optional; null = none yet
        if checkpoint is not None and (isinstance(checkpoint, bool) or
                                       not isinstance(checkpoint, (int, float))):
            return "checkpoint_time_s must be a number or null"
        parameters = report.get("model_parameters")  # optional; null = unknown
        if parameters is not None and (isinstance(parameters, bool) or
                                       not isinstance(parameters, int) or parameters < 1):
            return "model_parameters must be a positive integer or null"
        peak = report.get("memory_peak_bytes")  # optional; absent on CPU
        if peak is not None and (isinstance(peak, bool) or not isinstance(peak, int) or peak < 0):
            return "memory_peak_bytes must be an integer >= 0 or null"
    times = [r["time_s"] for r in reports]
    if times != sorted(times):
        return "reports must be oldest first"
    return None


class ContractServer:
    def __init__(self, job_id: str = "job-1", token: str = "secret", delay_s: float = 0.0,
                 policy: Optional[ConfigPolicy] = None, port: int = 0, hold: bool = False):
        self.job_id, self.token, self.delay_s = job_id, token, delay_s
        # hold: every request waits, unanswered, until the server is closed (a control plane that
        # hangs for as long as the test runs; no wall-clock figure for the test to race against).
        self.hold, self.released, self.received = hold, threading.Event(), 0
        self.policy = policy or (lambda server, body: {"local_bsz": 32, "accum_steps": 0,
                                                       "batch_size": 64, "lr_scale": 1.0})
        self.bodies: List[Dict[str, Any]] = []
        self.errors: List[str] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, payload: Dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                with server.lock:
                    server.received += 1
                if server.hold:
                    server.released.wait()
                if server.delay_s:
                    time.sleep(server.delay_s)
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                parts = self.path.strip("/").split("/")
                if len(parts) != 4 or parts[:2] != ["v1", "jobs"] or parts[3] != "reports":
                    return self._reply(404, {"error": {"code": "NOT_FOUND", "message": self.path}})
                auth = self.headers.get("Authorization", "")
                if not auth.startswith("Bearer "):
                    return self._reply(401, {"error": {"code": "UNAUTHORIZED", "message": "token"}})
                if parts[2] != server.job_id:
                    return self._reply(404, {"error": {"code": "NOT_FOUND", "message": "job"}})
                if auth != f"Bearer {server.token}":
                    return self._reply(403, {"error": {"code": "FORBIDDEN", "message": "token"}})
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                problem = validate_body(body)
                if problem:
                    with server.lock:
                        server.errors.append(problem)
                    return self._reply(400, {"error": {"code": "BAD_REQUEST", "message": problem}})
                with server.lock:
                    server.bodies.append(body)
                    config = server.policy(server, body)
                self._reply(200, {"config": config})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "ContractServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def env(self) -> Dict[str, str]:
        return {"GOODPUT_API": self.url, "GOODPUT_JOB_ID": self.job_id, "GOODPUT_TOKEN": self.token}

    def reports(self) -> List[Dict[str, Any]]:
        with self.lock:
            return [r for body in self.bodies for r in body["reports"]]
