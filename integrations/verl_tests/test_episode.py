"""The episode recorder the agent loop fills: masks align with tokens, spans cover every step, failures score 0."""

import unittest

from . import FIXTURES  # noqa: F401
from paraagent_verl import adapter
from paraagent_verl.episode import Episode, EpisodeError, Scoring, StepScore


def scripted():
    e = Episode(prompt_ids=[101, 102], max_response_tokens=12)
    e.add_generation([1, 2, 3], [-0.1, -0.2, -0.3])
    e.add_observation([90, 91])
    e.add_generation([], [])  # a zero-length step
    e.add_observation([92])
    e.add_generation([4, 5], [-0.4, -0.5])
    return e


class EpisodeTest(unittest.TestCase):
    def test_masks_logprobs_and_spans_align_with_the_tokens(self):
        e = scripted()
        out = e.output(Scoring(1.5, [1.0, 0.5], [StepScore(1.0, 0, 0), StepScore(0.0, 0, 3), StepScore(0.75, 1, 2)]))
        self.assertEqual(out["response_ids"], [1, 2, 3, 90, 91, 92, 4, 5])
        self.assertEqual(out["response_mask"], [1, 1, 1, 0, 0, 0, 1, 1])
        self.assertEqual(len(out["response_logprobs"]), len(out["response_ids"]))
        self.assertEqual(out["response_logprobs"][:3], [-0.1, -0.2, -0.3])
        spans = out["extra_fields"][adapter.STEP_SPANS]
        self.assertEqual(spans, [[0, 3], [5, 5], [6, 8]])
        generated = [t for s, t in enumerate(out["response_ids"]) if out["response_mask"][s] == 1]
        self.assertEqual(generated, [out["response_ids"][t] for s, e_ in spans for t in range(s, e_)])
        self.assertEqual(out["reward_score"], 1.5)
        self.assertEqual(out["num_turns"], 6)

    def test_the_output_feeds_the_adapter(self):
        outs = [scripted().output(Scoring(r, [r], [StepScore(r, 0, 0), StepScore(0.0, 0, 3), StepScore(r, 0, 2)])) for r in (1.5, 0.0)]
        batch = {k: [o["extra_fields"][k] for o in outs] for k in adapter.FIELDS}
        rows = adapter.token_advantages([o["response_mask"] for o in outs], ["u", "u"], batch)
        self.assertGreater(rows[0][0], 0)
        self.assertLess(rows[1][0], 0)
        self.assertEqual(rows[0][3:6], [0.0, 0.0, 0.0])

    def test_the_response_budget_truncates_and_says_so(self):
        e = Episode(prompt_ids=[1], max_response_tokens=4)
        e.add_generation([1, 2, 3], [0.0] * 3)
        self.assertEqual(e.add_observation([9, 9, 9]), 1)
        e.add_generation([4], [0.0])
        self.assertEqual(e.spans, [[0, 3], [4, 4]])
        self.assertTrue(e.truncated)
        self.assertEqual(e.remaining, 0)

    def test_a_failed_episode_ends_cleanly_with_r_base_zero(self):
        e = scripted()
        e.fail("server timed out after 30 s")
        out = e.output(e.unscored())
        extra = out["extra_fields"]
        self.assertEqual(extra[adapter.STEP_REWARDS], [0.0, 0.0, 0.0])
        self.assertEqual(extra[adapter.R_ANS], 0.0)
        self.assertEqual(extra["paraagent_error"], "server timed out after 30 s")
        self.assertEqual(out["reward_score"], 0.0)

    def test_a_score_that_does_not_fit_is_a_named_error(self):
        with self.assertRaises(EpisodeError) as e:
            scripted().output(Scoring(1.0, [1.0], [StepScore(1.0, 0, 0)]))
        self.assertEqual(e.exception.field, "steps")
        with self.assertRaises(EpisodeError) as e:
            scripted().output(Scoring(1.0, [1.0], [StepScore(1.0, 0, 0), StepScore(1.0, 2, 0), StepScore(1.0, 0, 0)]))
        self.assertIn("points at phase 2", str(e.exception))
        with self.assertRaises(EpisodeError):
            Episode([1], 8).add_generation([1, 2], [0.0])


if __name__ == "__main__":
    unittest.main()
