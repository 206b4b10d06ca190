"""The ParaAct agent loop when the server fails: a closed port, 500s, a step that never answers in time — each ends the
episode cleanly (r_base 0, R_ans 0, the error recorded), never an exception out of run()."""

import asyncio
import json
import socket
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import FIXTURES  # noqa: F401
from . import verl_stand_in as verl
from paraagent_verl import adapter, agent_loop

LoopClass = agent_loop.loop_class(verl.AgentLoopBase, verl.AgentLoopOutput)
WORLD = "generated:seed=7:size=2000"
ROW = {
    "raw_prompt": [{"role": "user", "content": "Translate 'hi' to es."}],
    "extra_info": {"index": 0, "task_id": "gen-7-train-I1-0", "split": "train", "level": "I1", "paradigm": "ParaAct",
                   "seed": 1, "max_rounds": 4, "fault_rate": 0.0, "world_seed": 7, "world_size": 2000, "library": None,
                   "task": None},
    "index": 0,
}
TURN = '<search>\n[{"slot":"s1","query":"translate"}]\n</search>'


class FakeServer:
    """A local HTTP server: ``mode`` "500" fails everything; "step500" and "slow" open sessions, then fail or stall the step."""

    def __init__(self, mode):
        outer = self
        self.mode = mode
        self.requests = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def handle_any(self):
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                outer.requests.append((self.command, self.path))
                if outer.mode == "500":
                    return self.answer(500, {"_tag": "InternalError", "message": "boom"})
                if self.path == "/health":
                    return self.answer(200, {"status": "healthy", "world": WORLD, "sessions": 0})
                if self.path == "/sessions":
                    return self.answer(200, {"sessionId": "s-1", "next": {"round": 0, "maxRounds": 4}})
                if self.path.endswith("/step") and outer.mode == "slow":
                    time.sleep(1.5)
                    return self.answer(200, {})
                if self.path.endswith("/step"):
                    return self.answer(500, {"_tag": "InternalError", "message": "the simulator fell over"})
                return self.answer(200, {"closed": True})

            do_GET = do_POST = do_DELETE = handle_any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def closed_port_url():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def run(url, timeout_s=5.0):
    agent_loop.ParaActLoopMixin._worlds.pop(url, None)
    loop, manager, tokenizer = verl.make_loop(LoopClass, [TURN], url, timeout_s=timeout_s, close_sessions=True)
    out = asyncio.run(loop.run({"temperature": 1.0}, **ROW))
    return out, manager


class ServerErrorTest(unittest.TestCase):
    def check_clean_failure(self, out, steps, needle):
        self.assertIn(needle, out.extra_fields["paraagent_error"])
        self.assertEqual(out.reward_score, 0.0)
        self.assertEqual(out.extra_fields[adapter.R_ANS], 0.0)
        self.assertEqual(out.extra_fields[adapter.STEP_REWARDS], [0.0] * steps)
        self.assertEqual(len(out.extra_fields[adapter.STEP_SPANS]), steps)
        self.assertEqual(len(out.response_ids), len(out.response_mask))
        self.assertEqual(len(out.response_ids), len(out.response_logprobs))
        # the adapter takes the failed rollout like any other
        rows = adapter.rows_of({k: [out.extra_fields[k]] for k in adapter.FIELDS}, 1)
        self.assertEqual(rows[0][0].traj, 0.0)

    def test_connection_refused(self):
        out, manager = run(closed_port_url())
        self.check_clean_failure(out, 0, "connection: GET /health")
        self.assertEqual(manager.calls, [])

    def test_a_server_answering_500(self):
        with FakeServer("500") as server:
            out, _ = run(server.url)
        self.check_clean_failure(out, 0, "-> 500")
        self.assertIn("boom", out.extra_fields["paraagent_error"])

    def test_a_500_mid_episode_keeps_the_generated_tokens_and_closes_the_session(self):
        with FakeServer("step500") as server:
            out, manager = run(server.url)
        self.check_clean_failure(out, 1, "POST /sessions/s-1/step -> 500")
        self.assertEqual(len(manager.calls), 1)
        self.assertEqual(out.response_mask, [1] * len(out.response_ids))
        self.assertIn(("DELETE", "/sessions/s-1"), server.requests)

    def test_a_step_that_times_out(self):
        with FakeServer("slow") as server:
            started = time.monotonic()
            out, _ = run(server.url, timeout_s=0.3)
            elapsed = time.monotonic() - started
        self.check_clean_failure(out, 1, "timeout: POST /sessions/s-1/step")
        self.assertLess(elapsed, 1.4)


if __name__ == "__main__":
    unittest.main()
