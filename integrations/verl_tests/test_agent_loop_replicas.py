"""The ParaAct agent loop against two ``npm run serve`` replicas on one PostgreSQL behind a round-robin balancer, one
replica killed (SIGKILL) in the middle of the episode: the episode finishes on the survivor, which rebuilds the session
from the shared log, with the reward a single server gives. Needs ``$PARAAGENT_TEST_PG`` (``.ci/run`` starts a
PostgreSQL and sets it); skips with one line without it."""

import http.client
import http.server
import json
import os
import secrets
import signal
import subprocess
import threading
import unittest
from urllib.parse import urlparse

from . import FIXTURES  # noqa: F401  (puts paraagent_verl on the path)
from . import verl_stand_in as verl
from .test_agent_loop_live import LoopClass, TASK_ID, run, start_server, stop_server
from paraagent_verl.toolenv_client import ToolEnvClient

PG = os.environ.get("PARAAGENT_TEST_PG")


class Balancer:
    """A plain HTTP balancer on loopback: each request to the next live replica; a replica that refuses the connection
    is marked down and the request goes to the next one (what a load balancer's health checks and retries do)."""

    def __init__(self, upstreams):
        self.upstreams = [urlparse(u) for u in upstreams]
        self.alive = [True] * len(upstreams)
        self.next = 0
        self.served = []
        lock = threading.Lock()
        balancer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def forward(self):
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                for _ in range(2 * len(balancer.upstreams)):
                    with lock:
                        live = [i for i, a in enumerate(balancer.alive) if a]
                        if not live:
                            break
                        which = live[balancer.next % len(live)]
                        balancer.next += 1
                    target = balancer.upstreams[which]
                    try:
                        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                        conn.request(self.command, self.path, body=body or None, headers=headers)
                        answer = conn.getresponse()
                        data = answer.read()
                        conn.close()
                    except (ConnectionError, OSError):
                        conn.close()
                        with lock:
                            balancer.alive[which] = False
                        continue
                    balancer.served.append(which)
                    self.send_response(answer.status)
                    for k, v in answer.getheaders():
                        if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                            self.send_header(k, v)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_error(502, "no replica answered")

            do_GET = forward
            do_POST = forward
            do_DELETE = forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@unittest.skipIf(PG is None, "no PostgreSQL: set PARAAGENT_TEST_PG (.ci/run starts one) to run the loop over two replicas")
class ReplicasTest(unittest.TestCase):
    def setUp(self):
        self.schema = "verl_" + secrets.token_hex(6)
        args = ["--world-size", "2000", "--fault-rate", "0", "--store", PG, "--pg-schema", self.schema]
        self.replicas = [start_server(args), start_server(args)]
        self.balancer = Balancer([url for _, url in self.replicas])
        self.saved_key = os.environ.get("PARAAGENT_CLIENT_KEY")
        os.environ["PARAAGENT_CLIENT_KEY"] = "agent-loop-replicas-test-" + secrets.token_urlsafe(12)

    def tearDown(self):
        self.balancer.close()
        for process, _ in self.replicas:
            stop_server(process)
        # best effort: the schema goes with psql when it is on PATH (a scratch database goes away anyway)
        try:
            subprocess.run(["psql", PG, "-qc", f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE'], capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            pass
        if self.saved_key is None:
            os.environ.pop("PARAAGENT_CLIENT_KEY", None)
        else:
            os.environ["PARAAGENT_CLIENT_KEY"] = self.saved_key

    def test_a_replica_killed_mid_episode_the_episode_finishes_on_the_survivor_with_the_right_reward(self):
        client = ToolEnvClient(self.balancer.url, None, 30)
        task = client.request("GET", f"/tasks/{TASK_ID}?gold=true")
        gold = task["gold"][0]
        turns = [
            '<plan>\n{"nodes":[{"id":"c1","slot":"the capability","deps":[]}]}\n</plan>\n'
            f'<search>\n[{{"slot":"c1","query":{json.dumps(gold["tool"].replace("_", " "))}}}]\n</search>',
            "<call>\n" + json.dumps([{"id": "c1", "name": gold["tool"], "arguments": gold["arguments"]}]) + "\n</call>",
            "<think>\nI have it.\n</think>\n<answer>\n" + "; ".join(f["value"] for f in task["facts"]) + "\n</answer>",
        ]
        loop, manager, tokenizer = verl.make_loop(verl_loop_class(), turns, self.balancer.url)
        victim = self.replicas[1][0]
        generate = manager.generate

        async def generate_and_kill(request_id, **kwargs):
            # after the first round was stepped, replica 1 dies (kill -9): the next requests find only replica 0
            if len(manager.calls) == 1:
                os.killpg(victim.pid, signal.SIGKILL)
                victim.wait()
            return await generate(request_id, **kwargs)

        manager.generate = generate_and_kill
        row = {
            "raw_prompt": [{"role": "system", "content": "You solve requests with the ParaAct protocol."}, {"role": "user", "content": task["request"]}],
            "extra_info": {"index": 0, "task_id": task["id"], "split": "train", "level": "I1", "paradigm": "ParaAct", "seed": 11,
                           "max_rounds": 4, "fault_rate": 0.0, "world_seed": 7, "world_size": 2000, "library": None, "task": json.dumps(task)},
            "index": 0,
            "uid": "group-1",
            "data_source": "paraagent_toolenv",
        }
        out = run(loop, row)
        self.assertIsNone(out.extra_fields["paraagent_error"])
        self.assertEqual(self.balancer.alive, [True, False])
        self.assertIn(1, self.balancer.served[:3])  # replica 1 served part of the episode before it died
        # the right reward: Q, F and U all YES from the rule judge, as on a single server
        self.assertEqual(out.extra_fields["paraagent_r_ans"], 1.5)
        self.assertEqual(out.reward_score, 1.5)
        survivor = ToolEnvClient(self.replicas[0][1], None, 30)
        trajectory = survivor.request("GET", f"/sessions/{out.extra_fields['paraagent_session_id']}/trajectory")
        self.assertEqual(len(trajectory["steps"]), 3)
        self.assertEqual(trajectory["stop"], "answer")


def verl_loop_class():
    return LoopClass


if __name__ == "__main__":
    unittest.main()
