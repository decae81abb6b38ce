"""Diagnoses of mistakes that recur across lessons, written once.

Each lesson fills in the words of its own setting (the argument's name, the axis); the
explanation is the same wherever the mistake appears.
"""
from __future__ import annotations


def inverted_polarity(true_at: str, meaning: str = "") -> str:
    """A mask that is True exactly where it should be False. ``true_at``: where the
    learner's mask is True ("the padding", "the future keys"); ``meaning``: what True
    should select here."""
    should = f" Here that is {meaning}." if meaning else ""
    return (f"your mask is True at {true_at}: its polarity is inverted. In this course (and in "
            f"torch's scaled_dot_product_attention) True means *may attend*.{should} Only "
            f"nn.MultiheadAttention's boolean masks (key_padding_mask and attn_mask) use the "
            f"opposite polarity, True = ignore.")


def scaled_by_sqrt_d_model(features: str, fix: str) -> str:
    """Scores divided by √d_model (the width of the tokens) instead of the width of the
    vectors that are dotted. ``features``: that width ("d_k = W_q.shape[1]", "d_head");
    ``fix``: how to write the right scale."""
    return (f"you divided the scores by √d_model, the width of the tokens. The scores are dot "
            f"products of vectors with {features} features, so their spread grows like the "
            f"square root of that: divide by {fix}.")


def softmax_over_queries(axis: str, fix: str) -> str:
    """A softmax over the query axis instead of the key axis. ``axis``: how the learner
    wrote it ("axis=-2", "dim=-2"); ``fix``: the key axis in the lesson's words."""
    return (f"your softmax runs over the queries ({axis}), so each column of the weights sums "
            f"to 1. Row i holds the weights query i gives to the keys, and each row must sum to "
            f"1: take it over the keys, {fix}. (Over the queries, adding one more query would "
            f"change the weights of every other.)")


def transposed_with_dot_t(feature: str, fix: str) -> str:
    """K transposed with ``K.T`` on a batched array, where ``.T`` reverses every axis and
    not only the last two. ``feature``: the name of the feature axis ("d", "d_k");
    ``fix``: what to write instead."""
    return (f"you transposed K with `K.T`. On a batched array `.T` reverses every axis, so "
            f"[batch, T_k, {feature}] becomes [{feature}, T_k, batch] and the batch axes no "
            f"longer line up. {fix}")
