"""A row's extra_info as the session-create body; the SFT shim's tools decoding."""

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
    def test_a_generated_world_row(self):
        body = agent_loop.session_request(ROW, rollout=2)
        self.assertEqual(body["seed"], 43)
        self.assertEqual(body["world"], {"seed": 7, "size": 50011})
        self.assertEqual(body["task"]["id"], "gen-7-train-I2-3")
        self.assertNotIn("library", body)

    def test_a_library_row_names_the_library(self):
        body = agent_loop.session_request({**ROW, "library": "/data/toolenv", "world_seed": None, "world_size": None})
        self.assertEqual(body["library"], "/data/toolenv")
        self.assertNotIn("world", body)

    def test_a_bad_field_is_named(self):
        with self.assertRaises(agent_loop.RowError) as e:
            agent_loop.session_request({**ROW, "seed": "41"})
        self.assertEqual(e.exception.field, "seed")
        with self.assertRaises(agent_loop.RowError) as e:
            agent_loop.session_request({**ROW, "task": "{not json"})
        self.assertEqual(e.exception.field, "task")


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
