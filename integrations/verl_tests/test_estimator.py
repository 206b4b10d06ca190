"""The verl-facing estimator: registration, the compute_advantage wrapper, tensors in and out (stand-ins for verl)."""

import types
import unittest

from . import FIXTURES  # noqa: F401  (puts the package on the path)
from paraagent_verl import estimator
from paraagent_verl.adapter import BatchError


class Tensor:
    """The two things the estimator asks of a torch tensor: ``tolist`` and ``new_tensor`` (same dtype and device)."""

    def __init__(self, rows, dtype="float32"):
        self.rows = rows
        self.dtype = dtype

    def tolist(self):
        return [list(r) for r in self.rows]

    def new_tensor(self, values):
        return Tensor(values, self.dtype)


def stand_in_core_algos():
    registry = {}

    def register_adv_est(name):
        def decorator(fn):
            if name in registry and registry[name] is not fn:
                raise ValueError(f"Adv estimator {name} has already been registered")
            registry[name] = fn
            return fn
        return decorator

    return types.SimpleNamespace(register_adv_est=register_adv_est, registry=registry)


def stand_in_ray_trainer(calls):
    def compute_advantage(data, adv_estimator, gamma=1.0, lam=1.0, num_repeat=1, norm_adv_by_std_in_grpo=True, config=None):
        calls.append(adv_estimator)
        data.batch["advantages"] = "verl's own"
        return data

    return types.SimpleNamespace(compute_advantage=compute_advantage)


def batch():
    # one uid, two rollouts: rollout 0 answers well (R_ans 1.5), rollout 1 does not (0); 2 steps each
    mask = [[1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 1]]
    non_tensor = {
        "uid": ["u", "u"],
        "paraagent_step_spans": [[[0, 2], [4, 5]], [[0, 1], [3, 6]]],
        "paraagent_step_rewards": [[1.0, 1.0], [0.5, 0.0]],
        "paraagent_phase_rewards": [[1.0], [0.0]],
        "paraagent_step_phase": [[0, 0], [0, 0]],
        "paraagent_step_pool": [[1, 2], [1, 2]],
        "paraagent_r_ans": [1.5, 0.0],
        "paraagent_masked": [False, False],
    }
    return types.SimpleNamespace(
        batch={"token_level_rewards": Tensor([[0.0] * 6, [0.0] * 6]), "response_mask": Tensor(mask)},
        non_tensor_batch=non_tensor,
    )


class EstimatorTest(unittest.TestCase):
    def test_install_registers_every_name_once_and_is_idempotent(self):
        core, calls = stand_in_core_algos(), []
        trainer = stand_in_ray_trainer(calls)
        estimator.install(core, trainer)
        wrapped = trainer.compute_advantage
        estimator.install(core, trainer)
        self.assertIs(trainer.compute_advantage, wrapped)
        self.assertEqual(sorted(core.registry), sorted(estimator.VERL_ESTIMATORS))

    def test_the_wrapper_hands_non_tensor_batch_to_paraagent_and_leaves_other_estimators_to_verl(self):
        core, calls = stand_in_core_algos(), []
        trainer = stand_in_ray_trainer(calls)
        estimator.install(core, trainer)
        data = trainer.compute_advantage(batch(), "paraagent", config=None)
        adv = data.batch["advantages"]
        self.assertIsInstance(adv, Tensor)
        self.assertIs(data.batch["returns"], adv)
        rows = adv.tolist()
        # step 0 of rollout 0: A_traj (1.5 vs 0: std 0.75), A_phase (1 vs 0: std 0.5) ×0.5, call pool (1 vs 0.5: std 0.25) ×0.25
        self.assertAlmostEqual(rows[0][0], 0.75 / (0.75 + 1e-6) + 0.5 * 0.5 / (0.5 + 1e-6) + 0.25 * 0.25 / (0.25 + 1e-6), places=12)
        self.assertEqual(rows[0][2:4], [0.0, 0.0])  # observation tokens
        self.assertEqual(rows[1][1:3], [0.0, 0.0])  # outside every span
        self.assertGreater(rows[0][4], 0)
        self.assertLess(rows[1][3], 0)
        self.assertAlmostEqual(rows[0][0], -rows[1][0], places=12)
        self.assertEqual(calls, [])
        trainer.compute_advantage(batch(), "grpo", config=None)
        self.assertEqual(calls, ["grpo"])

    def test_paraagent_grpo_gives_every_generated_token_the_trajectory_advantage(self):
        fn = estimator.ESTIMATOR_FUNCTIONS["paraagent_grpo"]
        data = batch()
        adv, _ = fn(data.batch["token_level_rewards"], data.batch["response_mask"], data.non_tensor_batch["uid"], None, data.non_tensor_batch)
        rows = adv.tolist()
        up = 0.75 / (0.75 + 1e-6)
        self.assertEqual([round(x, 12) for x in rows[0]], [round(up, 12)] * 2 + [0.0, 0.0, round(up, 12), 0.0])

    def test_an_estimator_called_without_the_wrapper_says_what_to_install(self):
        fn = estimator.ESTIMATOR_FUNCTIONS["paraagent"]
        with self.assertRaises(estimator.MissingBatch) as e:
            fn(token_level_rewards=[[0.0]], response_mask=[[1]], index=["u"], config=None)
        self.assertIn("paraagent_verl.install()", str(e.exception))

    def test_a_row_without_the_agent_loop_fields_is_a_named_error(self):
        data = batch()
        del data.non_tensor_batch["paraagent_step_spans"]
        fn = estimator.ESTIMATOR_FUNCTIONS["paraagent"]
        with self.assertRaises(BatchError) as e:
            fn(data.batch["token_level_rewards"], data.batch["response_mask"], ["u", "u"], None, data.non_tensor_batch)
        self.assertEqual(e.exception.field, "paraagent_step_spans")

    def test_the_algorithm_config_overrides_the_lambdas(self):
        data = batch()
        config = {"paraagent": {"lambda_traj": 0.0, "lambda_phase": 0.0, "lambda_step": 1.0}}
        adv, _ = estimator.ESTIMATOR_FUNCTIONS["paraagent"](data.batch["token_level_rewards"], data.batch["response_mask"], ["u", "u"], config, data.non_tensor_batch)
        self.assertAlmostEqual(adv.tolist()[0][0], 0.25 / (0.25 + 1e-6), places=12)


if __name__ == "__main__":
    unittest.main()
