"""The ParaAct agent loop against a live ``npm run serve`` (started here unless $PARAAGENT_SERVER names one): whole
episodes with scripted model outputs, checked against the server's own record and scoring; a group through the
adapter and the estimator."""

import asyncio
import json
import os
import re
import secrets
import subprocess
import signal
import time
import unittest

from . import FIXTURES  # noqa: F401  (puts paraagent_verl on the path)
from . import verl_stand_in as verl
from .test_estimator import Tensor
from paraagent_verl import adapter, agent_loop, estimator, observation
from paraagent_verl.toolenv_client import ToolEnvClient

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LoopClass = agent_loop.loop_class(verl.AgentLoopBase, verl.AgentLoopOutput)
TASK_ID = "gen-7-train-I1-0"


def start_server(args):
    """`npx tsx programs/serve.ts --port 0 …` from the repo root (tsx itself when installed: npx costs a second or two);
    returns (process, url) once it prints its URL line."""
    tsx = os.path.join(REPO, "node_modules", ".bin", "tsx")
    command = [tsx] if os.path.exists(tsx) else ["npx", "tsx"]
    process = subprocess.Popen([*command, "programs/serve.ts", "--port", "0", *args], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            return process, m.group(1)
    stop_server(process)
    raise RuntimeError("npm run serve printed no URL line")


def stop_server(process):
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    process.stdout.close()


def run(loop, row, **extra):
    return asyncio.run(loop.run({"temperature": 1.0, "top_p": 1.0, "logprobs": True}, **row, **extra))


class LiveServerTest(unittest.TestCase):
    process = None

    @classmethod
    def setUpClass(cls):
        url = os.environ.get("PARAAGENT_SERVER")
        if url is None:
            cls.process, url = start_server(["--world-size", "2000", "--fault-rate", "0"])
        cls.url = url
        # the loop's sessions belong to its client key: this test reads them with the same key, shared the documented
        # way (PARAAGENT_CLIENT_KEY), as a trainer's processes that share sessions would
        cls.saved_key = os.environ.get("PARAAGENT_CLIENT_KEY")
        os.environ["PARAAGENT_CLIENT_KEY"] = "agent-loop-live-test-" + secrets.token_urlsafe(12)
        cls.client = ToolEnvClient(url, os.environ.get("PARAAGENT_SERVER_TOKEN"), 30)
        world = cls.client.health()["world"]
        m = re.match(r"generated:seed=(\d+):size=(\d+)$", world)
        if m is None:
            raise unittest.SkipTest(f"the server at {url} serves {world}, not a generated world")
        seed, size = int(m.group(1)), int(m.group(2))
        cls.task = cls.client.request("GET", f"/tasks/{TASK_ID.replace('gen-7', f'gen-{seed}')}?gold=true")
        if len(cls.task["gold"]) != 1:
            raise unittest.SkipTest(f"the scripted correct episode makes one call; {cls.task['id']} on {world} needs {len(cls.task['gold'])}")
        cls.row = {
            "raw_prompt": [{"role": "system", "content": "You solve requests with the ParaAct protocol."},
                           {"role": "user", "content": cls.task["request"]}],
            "extra_info": {
                "index": 0, "task_id": cls.task["id"], "split": "train", "level": "I1", "paradigm": "ParaAct", "seed": 11,
                "max_rounds": 4, "fault_rate": 0.0, "world_seed": seed, "world_size": size, "library": None,
                "task": json.dumps(cls.task),
            },
            "index": 0,
            "uid": "group-1",
            "data_source": "paraagent_toolenv",
        }

    @classmethod
    def tearDownClass(cls):
        if cls.saved_key is None:
            os.environ.pop("PARAAGENT_CLIENT_KEY", None)
        else:
            os.environ["PARAAGENT_CLIENT_KEY"] = cls.saved_key
        if cls.process is not None:
            stop_server(cls.process)

    # ---- scripts ----

    def correct_turns(self, task):
        gold = task["gold"][0]
        return [
            '<plan>\n{"nodes":[{"id":"c1","slot":"the capability","deps":[]}]}\n</plan>\n'
            f'<search>\n[{{"slot":"c1","query":{json.dumps(gold["tool"].replace("_", " "))}}}]\n</search>',
            "<call>\n" + json.dumps([{"id": "c1", "name": gold["tool"], "arguments": gold["arguments"]}]) + "\n</call>",
            "<think>\nI have it.\n</think>\n<answer>\n" + "; ".join(f["value"] for f in task["facts"]) + "\n</answer>",
        ]

    def search_turn(self, k):
        return f'<search>\n[{{"slot":"s{k}","query":"translate text {k}"}}]\n</search>'

    # ---- checks ----

    def check_well_formed(self, out, manager, tokenizer):
        n = len(out.response_ids)
        self.assertEqual(len(out.response_mask), n)
        self.assertEqual(len(out.response_logprobs), n)
        spans = out.extra_fields[adapter.STEP_SPANS]
        covered = set()
        for start, end in spans:
            covered.update(range(start, end))
        # every generated token lies in a step's span, and every span is generated tokens only
        self.assertEqual(covered, {t for t in range(n) if out.response_mask[t] == 1})
        self.assertEqual(len(spans), len(manager.calls))
        for k, (call, (start, end)) in enumerate(zip(manager.calls, spans)):
            # tokens kept end to end: each round's prompt is the row's prompt + the response so far, never re-tokenised
            self.assertEqual(call["prompt_ids"], out.prompt_ids + out.response_ids[:start])
            self.assertEqual(out.response_logprobs[start:end], [verl.logprob(i) for i in range(end - start)])
        self.assertTrue(all(out.response_logprobs[t] == 0.0 for t in range(n) if out.response_mask[t] == 0))
        steps = len(spans)
        self.assertEqual(len(out.extra_fields[adapter.STEP_REWARDS]), steps)
        self.assertEqual(len(out.extra_fields[adapter.STEP_PHASE]), steps)
        self.assertEqual(len(out.extra_fields[adapter.STEP_POOL]), steps)
        self.assertEqual(out.prompt_ids, tokenizer.apply_chat_template(self.row["raw_prompt"]))

    def check_matches_server(self, out, tokenizer):
        sid = out.extra_fields["paraagent_session_id"]
        score = self.client.score(sid)  # fetched independently of the loop
        trajectory = self.client.trajectory(sid)
        self.assertEqual(out.reward_score, score["answer"]["rAns"])
        self.assertEqual(out.extra_fields[adapter.R_ANS], score["answer"]["rAns"])
        self.assertEqual(out.extra_fields[adapter.STEP_REWARDS], [s["rStep"] for s in score["steps"]])
        self.assertEqual(out.extra_fields[adapter.PHASE_REWARDS], [p["reward"]["rPhase"] for p in score["phases"]])
        for i, p in enumerate(out.extra_fields[adapter.STEP_PHASE]):
            span = score["phases"][p]
            self.assertTrue(span["start"] <= i < span["end"])
        self.assertEqual(out.extra_fields[adapter.STEP_POOL], agent_loop.step_pools(trajectory["steps"]))
        # the server stepped exactly the decoded tokens of each span
        for (start, end), step in zip(out.extra_fields[adapter.STEP_SPANS], trajectory["steps"]):
            self.assertEqual(tokenizer.decode(out.response_ids[start:end], skip_special_tokens=True), step["raw"])
        return score, trajectory

    # ---- episodes ----

    def test_a_correct_episode_is_scored_as_the_server_scores_it(self):
        loop, manager, tokenizer = verl.make_loop(LoopClass, self.correct_turns(self.task), self.url)
        out = run(loop, self.row)
        self.assertIsNone(out.extra_fields["paraagent_error"])
        self.check_well_formed(out, manager, tokenizer)
        score, trajectory = self.check_matches_server(out, tokenizer)
        self.assertEqual(trajectory["stop"], "answer")
        self.assertEqual(out.extra_fields[adapter.STEP_POOL], [0, 1, 2])
        self.assertEqual(score["answer"]["rAns"], 1.5)  # Q, F and U all YES from the rule judge
        self.assertEqual(out.num_turns, 3 + 2 + 1)  # 3 generations, 2 observations
        # the observation after the search shows the found tool's parameters (the model has no other place to read them)
        obs = tokenizer.decode(out.response_ids[out.extra_fields[adapter.STEP_SPANS][0][1]:out.extra_fields[adapter.STEP_SPANS][1][0]])
        self.assertIn('"parameters":', obs)
        self.assertIn(self.task["gold"][0]["tool"], obs)
        self.assertEqual(manager.calls[0]["sampling_params"]["max_tokens"], loop.response_length)

    def test_malformed_turns_score_r_base_0_and_the_episode_runs_to_t_max(self):
        loop, manager, tokenizer = verl.make_loop(LoopClass, ["I will just talk.", "<call>[{]</call>"], self.url)
        row = {**self.row, "extra_info": {**self.row["extra_info"], "max_rounds": 3}}
        out = run(loop, row)
        self.assertIsNone(out.extra_fields["paraagent_error"])
        self.check_well_formed(out, manager, tokenizer)
        score, trajectory = self.check_matches_server(out, tokenizer)
        self.assertEqual(trajectory["stop"], "max_rounds")
        self.assertEqual([s["rBase"] for s in score["steps"]], [0, 0, 0])
        self.assertEqual(out.extra_fields[adapter.STEP_POOL], [3, 3, 3])
        text = tokenizer.decode(out.response_ids)
        self.assertIn("<protocol-error", text)

    def test_an_episode_that_hits_t_max_is_told_its_last_round_and_scored(self):
        loop, manager, tokenizer = verl.make_loop(LoopClass, [self.search_turn(k) for k in range(3)], self.url)
        row = {**self.row, "extra_info": {**self.row["extra_info"], "max_rounds": 3}}
        out = run(loop, row)
        self.assertIsNone(out.extra_fields["paraagent_error"])
        self.check_well_formed(out, manager, tokenizer)
        _, trajectory = self.check_matches_server(out, tokenizer)
        self.assertEqual(trajectory["stop"], "max_rounds")
        self.assertEqual(len(trajectory["steps"]), 3)
        observed = "".join(tokenizer.decode([t]) for t, m in zip(out.response_ids, out.response_mask) if m == 0)
        self.assertEqual(observed.count(observation.LAST_ROUND_NOTE), 1)

    def test_a_group_goes_through_the_adapter_and_the_estimator(self):
        scripts = [self.correct_turns(self.task), ["no protocol here"], [self.search_turn(k) for k in range(3)]]
        outs = []
        for turns in scripts:
            loop, _, _ = verl.make_loop(LoopClass, turns, self.url, close_sessions=True)
            outs.append(run(loop, {**self.row, "extra_info": {**self.row["extra_info"], "max_rounds": 3}}))
        self.assertEqual([o.extra_fields["paraagent_error"] for o in outs], [None, None, None])
        # verl pads responses to one length and stacks extra_fields into non_tensor_batch columns
        width = max(len(o.response_ids) for o in outs)
        mask = [o.response_mask + [0] * (width - len(o.response_mask)) for o in outs]
        non_tensor = {key: [o.extra_fields[key] for o in outs] for key in adapter.FIELDS}
        uids = ["group-1"] * 3
        fn = estimator.ESTIMATOR_FUNCTIONS["paraagent"]
        adv, returns = fn(Tensor([[0.0] * width] * 3), Tensor(mask), uids, None, non_tensor)
        rows = adv.tolist()
        self.assertEqual([len(r) for r in rows], [width] * 3)
        for r, m in zip(rows, mask):
            self.assertTrue(all(a == 0.0 for a, x in zip(r, m) if x == 0))
        first = outs[0].extra_fields[adapter.STEP_SPANS][0][0]
        self.assertGreater(rows[0][first], 0)  # the answered episode is above its group
        self.assertLess(rows[1][0], 0)  # the malformed one below
        grpo, _ = estimator.ESTIMATOR_FUNCTIONS["paraagent_grpo"](Tensor([[0.0] * width] * 3), Tensor(mask), uids, None, non_tensor)
        self.assertGreater(grpo.tolist()[0][first], 0)

    def test_a_posted_task_row_opens_its_session_with_the_task_inline(self):
        task = {**self.task, "id": "verl-posted-1"}
        row = {**self.row, "extra_info": {**self.row["extra_info"], "task_id": "verl-posted-1", "task": json.dumps(task)}}
        answer = "<answer>\n" + "; ".join(f["value"] for f in task["facts"]) + "\n</answer>"
        loop, manager, tokenizer = verl.make_loop(LoopClass, [answer], self.url)
        out = run(loop, row)
        self.assertIsNone(out.extra_fields["paraagent_error"])
        self.check_well_formed(out, manager, tokenizer)
        _, trajectory = self.check_matches_server(out, tokenizer)
        self.assertEqual(trajectory["taskId"], "verl-posted-1")

    def test_a_spent_budget_a_bad_engine_output_and_a_wrong_world_end_the_episode_with_zero_rewards(self):
        cases = [
            ("response_length", dict(response_length=120), self.row),
            ("logprobs", dict(bad_logprobs=True), self.row),
            ("world_seed", {}, {**self.row, "extra_info": {**self.row["extra_info"], "world_size": 999}}),
            ("extra_info.seed", {}, {**self.row, "extra_info": {**self.row["extra_info"], "seed": "11"}}),
        ]
        for needle, options, row in cases:
            with self.subTest(needle):
                loop, manager, tokenizer = verl.make_loop(LoopClass, [self.search_turn(k) for k in range(4)], self.url, **options)
                out = run(loop, row)
                self.assertIn(needle, out.extra_fields["paraagent_error"])
                self.assertEqual(out.reward_score, 0.0)
                self.assertTrue(all(r == 0.0 for r in out.extra_fields[adapter.STEP_REWARDS]))
                self.assertEqual(len(out.extra_fields[adapter.STEP_SPANS]), len(out.extra_fields[adapter.STEP_REWARDS]))
                self.assertLessEqual(len(out.response_ids), loop.response_length)
                self.assertEqual(len(out.response_mask), len(out.response_ids))


if __name__ == "__main__":
    unittest.main()
