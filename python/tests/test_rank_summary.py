"""Every rank's summary (rank_summary.py) against a real HTTP server: sums since the previous
post, heartbeats without steps, sums kept across a failed post, and the SIGUSR1 stack dump."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from conftest import REPO_ROOT
from goodput.torch.rank_summary import RankSummaries


class RankServer:
    def __init__(self):
        self.bodies = []
        self.fail = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status = 503 if server.fail else 200
                if not server.fail:
                    server.bodies.append((self.path, self.headers.get("Authorization"), body))
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def wait_for(predicate, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not predicate():
        time.sleep(0.02)
    return predicate()


def test_sums_heartbeats_and_failed_posts():
    server = RankServer()
    try:
        ranks = RankSummaries(server.url, "job-1", "tok", attempt=2, rank=3, interval_s=0.2)
        ranks.phase("step")
        for step in range(5):
            ranks.step_done(step, 0.01, 0.1, 0.02, 0.003)
        ranks.phase("between")
        assert wait_for(lambda: len(server.bodies) >= 1, 5)
        path, auth, body = server.bodies[0]
        assert path == "/v1/jobs/job-1/ranks" and auth == "Bearer tok"
        assert body["attempt"] == 2 and body["rank"] == 3
        w = body["window"]
        assert w["steps"] == 5 and w["step"] == 4 and w["phase"] == "between"
        assert abs(w["compute_s"] - 0.5) < 1e-9 and abs(w["data_wait_s"] - 0.05) < 1e-9
        # no step since: a heartbeat with no steps, the same counter
        assert wait_for(lambda: len(server.bodies) >= 2, 5)
        assert server.bodies[1][2]["window"]["steps"] == 0 and server.bodies[1][2]["window"]["step"] == 4
        # a failed post keeps its sums for the next one
        server.fail = True
        ranks.step_done(5, 0.0, 0.2, 0.0, 0.0)
        assert wait_for(lambda: ranks.posts_failed >= 1, 5)
        seen = len(server.bodies)
        server.fail = False
        assert wait_for(lambda: any(b[2]["window"]["steps"] == 1 for b in server.bodies[seen:]), 5)
        ranks.close()
    finally:
        server.close()


def test_sigusr1_writes_every_threads_stack(tmp_path):
    script = (
        "import sys, time, threading\n"
        f"sys.path.insert(0, {os.path.join(REPO_ROOT, 'python')!r})\n"
        "from goodput.torch.rank_summary import install_stack_dump\n"
        f"print(install_stack_dump({str(tmp_path)!r}, 1, 2), flush=True)\n"
        "def waits_in_a_collective():\n"
        "    print('waiting', flush=True)\n"
        "    time.sleep(30)\n"
        "waits_in_a_collective()\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        path = proc.stdout.readline().strip()
        assert path == str(tmp_path / "stacks-attempt-1-rank-2.txt")
        assert proc.stdout.readline().strip() == "waiting"  # inside the function: its frame is on the stack
        proc.send_signal(signal.SIGUSR1)
        assert wait_for(lambda: "waits_in_a_collective" in open(path).read(), 10), open(path).read()
        assert proc.poll() is None, "the dump does not end the process"
    finally:
        proc.kill()
        proc.wait()
