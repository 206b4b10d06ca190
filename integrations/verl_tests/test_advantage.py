"""The Python estimators against the TypeScript ones (fixtures written by integrations/verl/fixtures/generate.ts)."""

import json
import os
import unittest

from . import FIXTURES
from paraagent_verl import advantage
from paraagent_verl.adapter import spread, token_advantages

TOLERANCE = 1e-9


def load():
    with open(os.path.join(FIXTURES, "advantage_groups.json"), encoding="utf-8") as f:
        return json.load(f)


def rollouts_of(group):
    return [
        advantage.RolloutRewards(
            traj=r["traj"], phases=r["phases"], steps=r["steps"], step_phase=r["step_phase"],
            step_pool=r.get("step_pool"), masked=r.get("masked", False),
        )
        for r in group["rollouts"]
    ]


class FixtureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fixture = load()
        c = cls.fixture["config"]
        cls.config = advantage.AdvantageConfig(c["lambda_traj"], c["lambda_phase"], c["lambda_step"], c["epsilon"], c["tolerance"])

    def test_the_defaults_are_the_ts_defaults(self):
        self.assertEqual(self.config, advantage.DEFAULT_CONFIG)

    def test_the_fixture_covers_the_edge_cases(self):
        groups = self.fixture["groups"]
        self.assertGreaterEqual(len(groups), 30)
        sizes = [len(g["rollouts"]) for g in groups]
        self.assertIn(1, sizes)
        self.assertTrue(any(len(r["steps"]) == 0 for g in groups for r in g["rollouts"]))
        self.assertTrue(any(r.get("masked") for g in groups for r in g["rollouts"]))
        self.assertTrue(any(e - s == 0 for g in groups for t in g["tokens"] for s, e in t["spans"]))
        self.assertTrue(any(len({len(r["steps"]) for r in g["rollouts"]}) > 2 for g in groups))  # ragged
        self.assertEqual(set(groups[0]["advantages"]), set(advantage.ESTIMATORS))

    def test_every_group_every_estimator_matches_typescript(self):
        checked = 0
        for group in self.fixture["groups"]:
            for name, expected in group["advantages"].items():
                got = advantage.compute(name, rollouts_of(group), self.config)
                self.assertEqual([len(x) for x in got], [len(x) for x in expected], f"{group['name']} / {name}")
                for r, (gs, es) in enumerate(zip(got, expected)):
                    for i, (g, e) in enumerate(zip(gs, es)):
                        for level in ("traj", "phase", "step", "combined"):
                            with self.subTest(group=group["name"], estimator=name, rollout=r, step=i, level=level):
                                self.assertAlmostEqual(getattr(g, level), e[level], delta=TOLERANCE)
                                checked += 1
        self.assertGreater(checked, 4000)

    def test_constant_pools_give_exactly_zero(self):
        group = next(g for g in self.fixture["groups"] if g["name"] == "all rewards equal at every level")
        for steps in advantage.compute("paraagent", rollouts_of(group), self.config):
            self.assertEqual([s.combined for s in steps], [0.0] * len(steps))

    def test_token_spread_matches_typescript(self):
        for group in self.fixture["groups"]:
            for name, expected in group["token_advantages"].items():
                steps = advantage.compute(name, rollouts_of(group), self.config)
                for r, layout in enumerate(group["tokens"]):
                    got = spread(layout["response_mask"], [tuple(s) for s in layout["spans"]], [a.combined for a in steps[r]])
                    self.assertEqual(len(got), layout["response_length"])
                    for t, (g, e) in enumerate(zip(got, expected[r])):
                        self.assertAlmostEqual(g, e, delta=TOLERANCE, msg=f"{group['name']} / {name} rollout {r} token {t}")

    def test_the_adapter_over_one_interleaved_batch_matches_typescript(self):
        # every group in one verl batch, rows interleaved across groups: grouping is by uid, not by position
        rows = [(g, r) for g, group in enumerate(self.fixture["groups"]) for r in range(len(group["rollouts"]))]
        rows.sort(key=lambda gr: (gr[1], gr[0]))
        width = max(t["response_length"] for group in self.fixture["groups"] for t in group["tokens"])
        mask, uid, batch = [], [], {k: [] for k in ("paraagent_step_spans", "paraagent_step_rewards", "paraagent_phase_rewards", "paraagent_step_phase", "paraagent_step_pool", "paraagent_r_ans", "paraagent_masked")}
        for g, r in rows:
            group = self.fixture["groups"][g]
            roll, layout = group["rollouts"][r], group["tokens"][r]
            mask.append(layout["response_mask"] + [0] * (width - layout["response_length"]))
            uid.append(f"uid-{g}")
            batch["paraagent_step_spans"].append(layout["spans"])
            batch["paraagent_step_rewards"].append(roll["steps"])
            batch["paraagent_phase_rewards"].append(roll["phases"])
            batch["paraagent_step_phase"].append(roll["step_phase"])
            batch["paraagent_step_pool"].append(roll.get("step_pool", [0] * len(roll["steps"])))
            batch["paraagent_r_ans"].append(roll["traj"])
            batch["paraagent_masked"].append(roll.get("masked", False))
        got = token_advantages(mask, uid, batch, "paraagent", self.config)
        for (g, r), row in zip(rows, got):
            expected = self.fixture["groups"][g]["token_advantages"]["paraagent"][r]
            self.assertEqual(len(row), width)
            for t in range(width):
                e = expected[t] if t < len(expected) else 0.0
                self.assertAlmostEqual(row[t], e, delta=TOLERANCE, msg=f"group {g} rollout {r} token {t}")


class ErrorTest(unittest.TestCase):
    def test_a_step_pointing_past_its_phases_names_the_rollout(self):
        bad = [advantage.RolloutRewards(1, [1], [1], [0]), advantage.RolloutRewards(0, [0], [1, 0], [0, 1])]
        with self.assertRaises(advantage.InvalidGroup) as e:
            advantage.compute("paraagent", bad)
        self.assertEqual(e.exception.rollout, 1)
        self.assertIn("step 1 points at phase 1", str(e.exception))

    def test_a_non_finite_reward_is_refused(self):
        with self.assertRaises(advantage.InvalidGroup) as e:
            advantage.compute("grpo", [advantage.RolloutRewards(float("nan"), [], [], [])])
        self.assertIn("trajectory reward is nan", str(e.exception))

    def test_an_unknown_estimator_lists_the_known_ones(self):
        with self.assertRaises(advantage.UnknownEstimator) as e:
            advantage.compute("gae", [])
        self.assertIn("paraagent", e.exception.known)


if __name__ == "__main__":
    unittest.main()
