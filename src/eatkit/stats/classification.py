"""Multilabel classification metrics for fine-tuning (seed 004, Tables 3-4): mAP and micro-F1."""

from __future__ import annotations

from typing import Any

import numpy as np

from eatkit.errors import EatkitError


def _labels_and_scores(y_true: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y_true)
    s = np.asarray(scores, dtype=np.float64)
    if y.shape != s.shape or y.ndim != 2:
        raise EatkitError(f"labels {y.shape} and scores {s.shape} must be (n, labels) arrays of one shape")
    if not np.isin(y, (0, 1)).all():
        raise EatkitError("labels must be 0 or 1")
    if not np.isfinite(s).all():
        raise EatkitError("scores have non-finite values")
    return y.astype(bool), s


def average_precisions(y_true: Any, scores: Any) -> np.ndarray:
    """Average precision of each label (column): Σ_k (R_k - R_{k-1}) P_k over the distinct score
    thresholds in decreasing order (tied scores enter together; scikit-learn's definition). NaN for a
    label with no positive example.

    >>> average_precisions([[1], [0], [1], [0]], [[0.9], [0.8], [0.7], [0.1]]).round(4)
    array([0.8333])
    """
    y, s = _labels_and_scores(y_true, scores)
    out = np.full(y.shape[1], np.nan)
    for j in range(y.shape[1]):
        positives = int(y[:, j].sum())
        if positives == 0:
            continue
        order = np.argsort(-s[:, j], kind="stable")
        ys, ss = y[order, j], s[order, j]
        tp = np.cumsum(ys)
        last = np.r_[np.flatnonzero(np.diff(ss)), len(ss) - 1]   # the end of each group of tied scores
        precision = tp[last] / (last + 1)
        recall = tp[last] / positives
        out[j] = float(np.sum(np.diff(np.r_[0.0, recall]) * precision))
    return out


def mean_average_precision(y_true: Any, scores: Any) -> float:
    """mAP: the mean of :func:`average_precisions` over the labels that have a positive example.

    >>> mean_average_precision([[1, 0], [0, 1], [1, 0]], [[0.9, 0.2], [0.3, 0.7], [0.6, 0.8]])
    0.75
    """
    ap = average_precisions(y_true, scores)
    return float(np.nanmean(ap)) if np.isfinite(ap).any() else float("nan")


def micro_f1(y_true: Any, predicted: Any) -> float:
    """Micro-averaged F1 over all (example, label) decisions: 2 TP / (2 TP + FP + FN).

    >>> micro_f1([[1, 0], [0, 1]], [[1, 1], [0, 0]])
    0.5
    """
    y, p = _labels_and_scores(y_true, predicted)
    p = p.astype(bool)
    tp = np.count_nonzero(y & p)
    wrong = np.count_nonzero(y ^ p)
    return float(2 * tp / (2 * tp + wrong)) if tp + wrong else float("nan")
