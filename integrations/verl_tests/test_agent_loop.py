"""A row's extra_info as the session-create body and the world it needs; step pools; the SFT shim's tools decoding."""

import json
import unittest

from . import FIXTURES  # noqa: F401
from paraagent_verl import agent_loop, sft

ROW = {
    "index": 3, "task_id": "gen-7-train-I2-3", "split": "train", "level": "I2", "paradigm": "ParaAct", "seed": 41,
    "max_rounds": 12, "fault_rate": 0.05, "world_seed": 7, "world_size": 50011, "library": None,
    "task": json.dumps({"id": "gen-7-train-I2-3", "request": "r"}),
}


class SessionRequestTest(unittest.TestCase):
    def test_a_generated_task_goes_by_id_with_the_server_field_names(self):
        body = agent_loop.session_request(ROW, rollout=2)
        self.assertEqual(body, {"taskId": "gen-7-train-I2-3", "paradigm": "ParaAct", "seed": 43, "maxRounds": 12,
                                "faults": True, "faultRate": 0.05, "policy": "verl"})
        self.assertEqual(agent_loop.expected_world(ROW), ("generated:seed=7:size=50011", False))

    def test_another_task_is_posted_inline_with_the_posted_task_fields_only(self):
        task = {"id": "x", "request": "r", "level": "I1", "gold": [], "facts": [], "split": "test", "seed": 3, "source": "s"}
        body = agent_loop.session_request({**ROW, "task_id": "mine-1", "task": json.dumps(task), "fault_rate": 0})
        self.assertEqual(body["task"], {"id": "mine-1", "request": "r", "level": "I1", "gold": [], "facts": []})
        self.assertNotIn("taskId", body)
        self.assertFalse(body["faults"])

    def test_a_library_row_names_its_world_by_path(self):
        want, prefix = agent_loop.expected_world({**ROW, "library": "/data/toolenv", "world_seed": None, "world_size": None})
        self.assertEqual((want, prefix), ("library:/data/toolenv:", True))

    def test_a_bad_field_is_named(self):
        with self.assertRaises(agent_loop.RowError) as e:
            agent_loop.session_request({**ROW, "seed": "41"})
        self.assertEqual(e.exception.field, "seed")
        for task in ("{not json", None, json.dumps([1])):
            with self.assertRaises(agent_loop.RowError) as e:
                agent_loop.session_request({**ROW, "task_id": "mine-1", "task": task})
            self.assertEqual(e.exception.field, "task")
        with self.assertRaises(agent_loop.RowError) as e:
            agent_loop.session_request(["not", "a", "mapping"])
        self.assertEqual(e.exception.field, "")

    def test_step_pools_follow_the_kind_of_the_turn(self):
        pools = [agent_loop.step_pool(s) for s in (
            {"turn": {"searches": [{"slot": "s1", "query": "q"}], "calls": []}},
            {"turn": {"searches": [], "calls": [{"id": "c1"}]}},
            {"turn": {"searches": [], "calls": [], "answer": "a"}},
            {"raw": "malformed"},
        )]
        self.assertEqual(pools, [0, 1, 2, 3])

    def test_a_malformed_turn_takes_the_pool_of_its_retry_else_the_step_before(self):
        search = {"turn": {"searches": [{"slot": "s1", "query": "q"}], "calls": []}}
        call = {"turn": {"searches": [], "calls": [{"id": "c1"}]}}
        answer = {"turn": {"searches": [], "calls": [], "answer": "a"}}
        bad = {"raw": "<call>[{"}
        self.assertEqual(agent_loop.step_pools([bad, search, bad, bad, call, answer, bad]), [0, 0, 1, 1, 1, 2, 2])
        self.assertEqual(agent_loop.step_pools([bad]), [agent_loop.POOL_OTHER])


class ToolsColumnTest(unittest.TestCase):
    def test_json_text_decodes_to_function_specs(self):
        tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
        self.assertEqual(sft.decode_tools(json.dumps(tools)), tools)
        self.assertEqual(sft.decode_tools(json.dumps(tools).encode()), tools)
        self.assertIsNone(sft.decode_tools(None))

    def test_bad_cells_name_the_row(self):
        with self.assertRaises(sft.ToolsColumnError) as e:
            sft.decode_tools("[{", row=5)
        self.assertEqual(e.exception.row, 5)
        with self.assertRaises(sft.ToolsColumnError):
            sft.decode_tools(json.dumps([{"name": "f"}]))


if __name__ == "__main__":
    unittest.main()
