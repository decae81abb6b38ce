"""Answers that break a rule their notebook states, for the grading corpus
(tests/test_grading_corpus.py): each returns the right values and breaks only the rule,
and must lose exactly the points of its own tests. Answers that change different cells
share one submission, so that each lesson costs one kernel.

* lesson 07: an ``attention_one_pass`` that takes ``block`` as the number of blocks (it
  reads T_k / block keys a step), beside a ``tiled_attention`` that counts a tile above
  the diagonal as skipped but computes it anyway;
* lesson 08: ``sinusoidal_positions`` and ``rope`` with Python loops, where the notebook
  says to use none.
"""
from __future__ import annotations

from grading_corpus import Expect, Lesson, Sample

ONE_PASS_BLOCKS_AS_A_COUNT = '''def attention_one_pass(q, K, V, block):
    """Attention of one query, reading the keys in `block` blocks."""
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    size = -(-K.shape[0] // block)            # `block` blocks of ceil(T_k / block) keys
    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    for j in range(0, K.shape[0], size):
        scores = K[j:j + size] @ q / np.sqrt(q.shape[0])
        m_new = max(m, scores.max())
        p = np.exp(scores - m_new)
        s = s * np.exp(m - m_new) + p.sum()
        o = o * np.exp(m - m_new) + p @ V[j:j + size]
        m = m_new
    return o / s
'''

TILES_COMPUTED_ANYWAY = '''def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """Every tile computed and masked; those above the diagonal counted as skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    out = np.zeros(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(Q.shape[-1])
            if causal:
                if j0 > i1 - 1:
                    skipped += 1
                S = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            p = np.exp(S - m_new)
            s = s * np.exp(m - m_new) + p.sum(axis=-1, keepdims=True)
            o = o * np.exp(m - m_new) + p @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
'''

TABLE_BY_LOOPS = '''import math


def sinusoidal_positions(T, d):
    """The table entry by entry."""
    T, d = position_sizes(T, d)
    table = np.zeros((T, d))
    for t in range(T):
        for i in range(d // 2):
            angle = t / 10000 ** (2 * i / d)
            table[t, 2 * i] = math.sin(angle)
            table[t, 2 * i + 1] = math.cos(angle)
    return table
'''

ROPE_BY_PAIRS = '''def rope(x, positions, base=10000.0):
    """One pair at a time."""
    x, positions, base = rope_inputs(x, positions, base)
    d = x.shape[-1]
    turned = np.empty_like(x)
    i = 0
    while i < d // 2:
        angle = positions * base ** (-2 * i / d)
        a, b = x[..., 2 * i], x[..., 2 * i + 1]
        turned[..., 2 * i] = a * np.cos(angle) - b * np.sin(angle)
        turned[..., 2 * i + 1] = a * np.sin(angle) + b * np.cos(angle)
        i += 1
    return turned
'''


def _answer(lesson: Lesson, target: str) -> str:
    return next(a for a, t in lesson.target.items() if t == target)


def broken_rule_samples(lessons: dict[str, Lesson]) -> list[Sample]:
    long, positions = lessons["07_long_attention"], lessons["08_positions"]
    one, tiles = _answer(long, "attention_one_pass"), _answer(long, "tiled_attention")
    table, turn = _answer(positions, "sinusoidal_positions"), _answer(positions, "rope")
    steps = long.notebook({**long.answers, one: ONE_PASS_BLOCKS_AS_A_COUNT,
                           tiles: TILES_COMPUTED_ANYWAY})
    loops = positions.notebook({**positions.answers, table: TABLE_BY_LOOPS, turn: ROPE_BY_PAIRS})
    by_hand = "asks you to do by hand"
    return [
        Sample("rules_steps_and_tiles", long.name, long.files(steps), long.expect({
            one: Expect(0.0, "failed", "reads more than `block` keys or values in one step"),
            tiles: Expect(0.0, "failed", "the tiles above the diagonal seem to be computed, "
                                         "then counted as skipped")}),
               why="attention_one_pass with block as the number of blocks; tiled_attention "
                   "computing the tiles it counts as skipped"),
        Sample("rules_loops", positions.name, positions.files(loops), positions.expect({
            table: Expect(0.0, "failed", by_hand), turn: Expect(0.0, "failed", by_hand)}),
               why="sinusoidal_positions and rope with loops where the notebook says none"),
    ]
