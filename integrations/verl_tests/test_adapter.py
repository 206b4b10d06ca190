"""The batch adapter: bad rows are named errors; masked rows and tokens outside spans get 0."""

import unittest

from . import FIXTURES  # noqa: F401
from paraagent_verl import adapter


def columns(**overrides):
    base = {
        adapter.STEP_SPANS: [[[0, 2]], [[0, 1]]],
        adapter.STEP_REWARDS: [[1.0], [0.0]],
        adapter.PHASE_REWARDS: [[1.0], [0.0]],
        adapter.STEP_PHASE: [[0], [0]],
        adapter.STEP_POOL: [[2], [2]],
        adapter.R_ANS: [1.5, 0.0],
        adapter.MASKED: [False, False],
    }
    base.update(overrides)
    return base


class AdapterTest(unittest.TestCase):
    def test_spans_that_overlap_are_refused(self):
        batch = columns(**{adapter.STEP_SPANS: [[[0, 2]], [[0, 1]]], adapter.STEP_REWARDS: [[1.0], [0.0, 1.0]],
                           adapter.STEP_PHASE: [[0], [0, 0]], adapter.STEP_POOL: [[2], [1, 2]]})
        batch[adapter.STEP_SPANS] = [[[0, 2]], [[0, 3], [2, 4]]]
        with self.assertRaises(adapter.BatchError) as e:
            adapter.token_advantages([[1, 1, 0, 0], [1, 1, 1, 1]], ["u", "u"], batch)
        self.assertEqual((e.exception.row, e.exception.field), (1, adapter.STEP_SPANS))

    def test_a_span_count_that_is_not_the_step_count_is_refused(self):
        batch = columns(**{adapter.STEP_SPANS: [[[0, 2], [2, 3]], [[0, 1]]]})
        with self.assertRaises(adapter.BatchError) as e:
            adapter.token_advantages([[1, 1, 1], [1, 0, 0]], ["u", "u"], batch)
        self.assertIn("2 spans for 1 steps", str(e.exception))

    def test_a_bad_phase_id_names_the_batch_row(self):
        batch = columns(**{adapter.STEP_PHASE: [[0], [3]]})
        with self.assertRaises(adapter.BatchError) as e:
            adapter.token_advantages([[1, 1], [1, 0]], ["a", "a"], batch)
        self.assertEqual(e.exception.row, 1)

    def test_a_masked_row_gets_zero_and_the_other_is_alone_in_its_pool(self):
        batch = columns(**{adapter.MASKED: [False, True]})
        rows = adapter.token_advantages([[1, 1], [1, 0]], ["u", "u"], batch)
        self.assertEqual(rows, [[0.0, 0.0], [0.0, 0.0]])

    def test_numpy_like_columns_are_read_through_tolist(self):
        class Column(list):
            def tolist(self):
                return list(self)

        batch = {k: Column(v) for k, v in columns().items()}
        rows = adapter.token_advantages(Column([[1, 1], [1, 0]]), Column(["u", "u"]), batch)
        self.assertGreater(rows[0][0], 1)
        self.assertLess(rows[1][0], -1)
        self.assertEqual(rows[1][1], 0.0)

    def test_a_span_past_the_response_is_cut(self):
        self.assertEqual(adapter.spread([1, 1, 0], [(1, 9)], [2.0]), [0.0, 2.0, 0.0])


if __name__ == "__main__":
    unittest.main()
