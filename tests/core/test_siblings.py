"""Sibling sections (search/siblings.py): among the best rows of one page, the section whose heading
path is nearest the question gains, on hand-made arrays."""

from __future__ import annotations

import numpy as np
import pytest

from docs_mcp_core.search.siblings import sibling_boost

# catalog positions 0-2 are sections of page 0 (list, get, create), 3 of page 1, 4 of page 2
FILE_CODES = np.array([0, 0, 0, 1, 2], dtype=np.int32)


def _heading(positions: list[int], similarity: list[float]) -> tuple[np.ndarray, np.ndarray]:
    return np.array(positions, dtype=np.int64), np.array(similarity, dtype=np.float64)


def test_the_sibling_whose_names_mean_the_question_overtakes_one_that_scores_alike() -> None:
    rows = np.array([0, 1, 2, 3], dtype=np.int64)
    score = np.array([1.00, 0.98, 0.50, 0.90])  # "get" leads "list" lexically by a little
    heading = _heading([1, 3, 0], [0.62, 0.70, 0.55])  # in the leg's order: best first
    sibling_boost(rows, score, heading, FILE_CODES, 0.05)
    assert score.tolist() == pytest.approx([1.00, 0.98 * 1.05, 0.50, 0.90])
    assert int(np.argmax(score)) == 1  # the nearer sibling now ranks first
    # row 3 is the nearest of all, but alone on its page: nothing to choose between, no gain


def test_rows_the_heading_leg_did_not_return_and_rows_below_the_depth_do_not_gain() -> None:
    rows = np.array([0, 1, 2, 4], dtype=np.int64)
    score = np.array([0.9, 0.8, 0.7, 1.0])
    heading = _heading([2], [0.4])  # only one sibling has a similarity
    sibling_boost(rows, score, heading, FILE_CODES, 0.05, depth=3)  # rows 4, 0, 1 are the best three
    assert score.tolist() == pytest.approx([0.9, 0.8, 0.7, 1.0])  # row 2 is below the depth
    sibling_boost(rows, score, heading, FILE_CODES, 0.05, depth=4)
    assert score.tolist() == pytest.approx([0.9, 0.8, 0.7 * 1.05, 1.0])


def test_no_heading_rows_or_a_zero_weight_change_nothing() -> None:
    rows = np.array([0, 1], dtype=np.int64)
    score = np.array([1.0, 0.9])
    sibling_boost(rows, score, _heading([], []), FILE_CODES, 0.05)
    sibling_boost(rows, score, _heading([1, 0], [0.9, 0.1]), FILE_CODES, 0.0)
    assert score.tolist() == [1.0, 0.9]
