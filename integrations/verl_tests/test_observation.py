"""The agent loop's observation block equals renderObservation (src/protocol/OpenAiFormat.ts) on steps recorded from the server."""

import json
import os
import unittest

from . import FIXTURES
from paraagent_verl import observation


class ObservationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(FIXTURES, "observations.json"), encoding="utf-8") as f:
            cls.data = json.load(f)

    def test_the_text_equals_the_typescript_rendering(self):
        tools = self.data["tools"]
        kinds = set()
        for i, (step, want) in enumerate(zip(self.data["steps"], self.data["expected"])):
            with self.subTest(step=i):
                self.assertEqual(observation.render(step, None, None), want["plain"])
                self.assertEqual(observation.render(step, tools.get, 4000), want["lookup4000"])
                self.assertEqual(observation.render(step, None, 200), want["cut200"])
            kinds.update(o["outcome"]["_tag"] for o in step["observations"])
            kinds.update(["protocol-error"] if "protocolError" in step else [])
            kinds.update(["search"] if step["searches"] else [])
        self.assertEqual(kinds, {"ok", "error", "protocol-error", "search"})
        self.assertTrue(any("more characters]" in (w["cut200"] or "") for w in self.data["expected"]))

    def test_the_last_round_note_follows_the_observation(self):
        step = self.data["steps"][0]
        shown = observation.messages(step, {"round": 3, "maxRounds": 4})
        self.assertEqual([m["content"] for m in shown][1], observation.LAST_ROUND_NOTE)
        self.assertEqual(len(observation.messages(step, {"round": 1, "maxRounds": 4})), 1)


if __name__ == "__main__":
    unittest.main()
