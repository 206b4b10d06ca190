"""The Python client against a live server: PARAAGENT_SERVER (and PARAAGENT_SERVER_TOKEN) when set, else one
started here (`npx tsx programs/serve.ts --port 0`, its URL read from the line it prints when listening).

Run from the repository root: python3 -m unittest discover integrations
"""
import os
import re
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from paraagent_client import ToolEnvClient, ToolEnvError, gold_rounds  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class LiveServerTest(unittest.TestCase):
    server = None
    client: ToolEnvClient

    @classmethod
    def setUpClass(cls) -> None:
        url = os.environ.get("PARAAGENT_SERVER")
        token = os.environ.get("PARAAGENT_SERVER_TOKEN")
        if url is None:
            token = "python-client-test-token"
            env = {k: v for k, v in os.environ.items() if not k.startswith("PARAAGENT_")}
            cls.server = subprocess.Popen(
                ["npx", "tsx", "programs/serve.ts", "--port", "0", "--world-size", "2000", "--token", token],
                cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                start_new_session=True)  # its own process group: npx, tsx and node end together
            assert cls.server.stdout is not None
            for line in cls.server.stdout:
                found = re.search(r"listening on (http://\S+)", line)
                if found:
                    url = found.group(1)
                    break
            if url is None:
                raise RuntimeError("the server exited before it printed its URL")
        cls.client = ToolEnvClient(url, token=token)

    @classmethod
    def tearDownClass(cls) -> None:
        if cls.server is not None:
            os.killpg(cls.server.pid, signal.SIGTERM)
            cls.server.wait(timeout=30)
            if cls.server.stdout is not None:
                cls.server.stdout.close()

    def test_episode_scored_and_grouped(self) -> None:
        c = self.client
        self.assertEqual(c.health()["status"], "healthy")
        task = c.tasks(split="test", level="I2", count=1, gold=True)[0]
        ids = []
        for seed in (1, 2):
            s = c.create_session(taskId=task["id"], seed=seed)
            ids.append(s["sessionId"])
            for i, turn in enumerate(gold_rounds(task)):
                r = c.step(s["sessionId"], turn=turn, round=i)
                self.assertEqual(r["step"]["index"], i)
                if r["done"]:
                    break
            self.assertTrue(r["done"])
            self.assertEqual(r["stop"], "answer")
        t = c.trajectory(ids[0])
        self.assertEqual(t["taskId"], task["id"])
        self.assertTrue(any(o["outcome"]["_tag"] == "ok" for s in t["steps"] for o in s["observations"]))
        score = c.score(ids[0])
        self.assertEqual(len(score["steps"]), len(t["steps"]))
        self.assertIn(score["verdict"]["quality"], ("YES", "PARTIAL", "NO"))
        group = c.advantages(sessions=ids, estimator="grpo")
        self.assertEqual(len(group["group"]), 2)
        self.assertAlmostEqual(sum(g["steps"][0]["traj"] for g in group["group"]), 0.0, places=9)
        self.assertTrue(c.close(ids[1])["closed"])

    def test_text_turns_and_openenv(self) -> None:
        c = self.client
        reset = c.reset(seed=3)
        episode = reset["observation"]["episode_id"]
        self.assertFalse(reset["done"])
        result = c.openenv_step({"text": '<search>[{"slot":"s1","query":"weather forecast"}]</search>'}, episode_id=episode)
        self.assertFalse(result["done"])
        self.assertGreater(len(result["observation"]["step"]["searches"][0]["hits"]), 0)
        self.assertEqual(c.state(episode)["step_count"], 1)

    def test_typed_errors(self) -> None:
        c = self.client
        with self.assertRaises(ToolEnvError) as e:
            c.session("no-such-session")
        self.assertEqual((e.exception.status, e.exception.tag, e.exception.field), (404, "NotFound", "sessionId"))
        s = c.create_session(seed=1)
        with self.assertRaises(ToolEnvError) as e:
            c.step(s["sessionId"], text=None, turn={"searches": "not a list", "calls": []})
        self.assertEqual(e.exception.status, 400)
        self.assertIn("searches", e.exception.field)
        with self.assertRaises(ToolEnvError) as e:
            c.step(s["sessionId"], text="<answer>x</answer>", round=3)
        self.assertEqual((e.exception.status, e.exception.tag, e.exception.field), (409, "StepConflict", "round"))
        with self.assertRaises(ToolEnvError) as e:
            c.advantages(sessions=[s["sessionId"]], estimator="magic")
        self.assertEqual(e.exception.status, 422)  # still running: checked before the estimator
        with self.assertRaises(ToolEnvError) as e:
            ToolEnvClient(c.base_url, token="wrong-token-123").tools()
        self.assertEqual((e.exception.status, e.exception.tag), (401, "Unauthorized"))
        self.assertNotIn("python-client-test-token", repr(c))

    def test_sessions_belong_to_their_client(self) -> None:
        c = self.client
        other = ToolEnvClient(c.base_url, token=c._token, client_key="another-client-key-" + "x" * 8)
        s = c.create_session(seed=4)
        for call in (lambda: other.session(s["sessionId"]), lambda: other.step(s["sessionId"], text="<answer>x</answer>"),
                     lambda: other.close(s["sessionId"])):
            with self.assertRaises(ToolEnvError) as e:
                call()
            self.assertEqual((e.exception.status, e.exception.tag), (404, "NotFound"))
        # OpenEnv without episode_id: each client steps its own last reset
        mine = c.reset(seed=5)["observation"]["episode_id"]
        theirs = other.reset(seed=6)["observation"]["episode_id"]
        self.assertEqual(c.state()["episode_id"], mine)
        self.assertEqual(other.state()["episode_id"], theirs)
        self.assertEqual(c.session(s["sessionId"])["rounds"], 0)


if __name__ == "__main__":
    unittest.main()
