"""Lesson 07 exercises: the online softmax, one-pass and tiled attention, the KV cache and
the decoding step.

The cases are chosen so that every catalogued mistake shows itself:

* blocks whose maximum grows from one block to the next (so a sum or an output that is
  not rescaled is wrong), and blocks whose maximum does not (so it is right: a mistake
  must not be blamed on input that cannot show it);
* scores near -1000, where a running maximum that starts at 0 sends every exponential to
  0 and the output to 0 / 0;
* several blocks of different sizes, a last block that is shorter, a block of 1 and a
  block larger than the input, so that a division inside the loop shows;
* for the tiles, block_q != block_k, tiles that cross the diagonal and tiles wholly above
  it, and a count of skipped tiles that differs from the count of computed ones;
* for decoding, single tokens and blocks of new tokens (a prompt read in one go), with
  an empty cache and a filled one, so that attending before appending, a token that does
  not see itself, a token that sees one position ahead and causal rows taken from the
  top of the mask each give their own numbers;
* one large case per streamed exercise, run with a memory budget: a function that holds a
  score for every key (or every pair) at once, or a copy of every block of scores, needs
  far more than the budget allows;
* the exercises that ask for one pass hand their input over so that a second pass shows
  (``grader.learner.one_pass``): online_softmax_stats gets its blocks as a one-shot stream,
  attention_one_pass gets K and V as arrays that note which rows are read. The words of
  those messages travel with the driver, as data.

Every catalogued mistake is a core of ``reference.py`` with one knob set wrong (the
cache's, a class whose ``append`` has one knob set wrong).
"""
from __future__ import annotations

import functools

import numpy as np

from ...learner.compare import FLOAT32, FLOAT64
from ...learner.fixtures import learner_object, normal_blocks_fixture, normal_fixture
from ...learner.shortcuts import Rules
from .. import BadInput, Case, Exercise, Misconception, knob, register
from ..cases import attention_quantities, as_float32, as_lists, as_strided, normal, small_ints
from . import reference as ref

# ----------------------------------------------------------------------------- shared words

LIBRARY_ATTENTION = {
    "scaled_dot_product_attention": "torch.nn.functional.scaled_dot_product_attention",
    "multi_head_attention_forward": "torch.nn.functional.multi_head_attention_forward",
    "MultiheadAttention": "torch.nn.MultiheadAttention",
    "softmax": "a library softmax (torch.softmax, scipy.special.softmax, ...)",
    "log_softmax": "a library log_softmax",
    "logsumexp": "a library logsumexp",
}
ATTENTION_OBJECTS = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.functional.multi_head_attention_forward",
    "torch.nn.MultiheadAttention",
    "torch.softmax",
    "torch.nn.functional.softmax",
    "scipy.special.softmax",
    "scipy.special.logsumexp",
)
BY_HAND = ("The point of this exercise is the arithmetic that a library's attention hides: "
           "write it with NumPy.")

SUM_NOT_RESCALED = (
    "your running sum is not rescaled when a block brings a larger maximum. The sum so far "
    "was made of exp(x - m_old); once the maximum is m_new, each of those terms must become "
    "exp(x - m_new), which is the old sum times exp(m_old - m_new). Look at the input above: "
    "its maximum grows from one block to the next, and only then do you go wrong."
)
OUTPUT_NOT_RESCALED = (
    "your running sum is rescaled when the maximum grows, but your running output is not. "
    "The output so far is a sum of exp(s - m_old) times value rows, just like the running "
    "sum, so it needs the same factor exp(m_old - m_new) at the same moment."
)
MAX_STARTS_AT_0 = (
    "your running maximum starts at 0 instead of -inf. Then it is never below 0, and when "
    "every score is far below 0 (near -1000 in the input above) each exp(score - 0) "
    "underflows to 0: the sum is 0 and the division is 0 / 0. Start from -inf, which any "
    "first score replaces (np.exp(-np.inf) is exactly 0, so the first rescaling is harmless)."
)
DIVIDED_INSIDE = (
    "you divide by the running sum inside the loop, after every block, and then keep adding "
    "to the divided output as if it were not divided. With one block this is right, with "
    "more it is not. Keep the output unnormalised (a weighted sum of value rows, with the "
    "same scale as the running sum) and divide once, after the last block."
)
ALL_AT_ONCE = (
    "your result is right, but on the large input it needs more extra memory than the "
    "budget allows. The budget grows with the block size, not with the number of keys: "
    "something in your function holds a score (or a copy of K or V) for every key at once. "
    "Score one block of keys, fold it into the running maximum, sum and output, and let it "
    "go before the next block. Slices such as K[j:j + block] are views and cost nothing."
)
NOT_SCALED = (
    "your scores are not scaled: divide each q·k by sqrt(d_k), the length of the query and "
    "key vectors, as in lesson 02."
)


# ============================================================================= online_softmax_stats

# The blocks come as a one-shot stream (grader.learner.one_pass): a second loop over them,
# or a block kept to be read again, fails with its own message. A copy of every block kept
# instead cannot be told from a number the answer needs, so the largest case is a stream
# of 2,097,152 scores made block by block, with the memory budget of one block: keeping a
# copy of each costs 16 MiB, several times what grading measures from outside.
STREAM_BLOCKS, STREAM_BLOCK = 512, 4096
STREAM_WHY = (
    "{name} must take one pass over the blocks, so the check hands them over as a stream: "
    "each block comes once, in order, and then it is gone, as scores are when they are "
    "computed block by block and never stored.")
ONE_PASS_STREAM = {"stream": 0, "say": {
    "ReadTwice": (
        "{name} reads the blocks twice.",
        STREAM_WHY + " A second loop over the blocks (the maximum in the first, the sum in the "
        "second) is the two-pass softmax of lesson 02, which needs the whole row at hand. Keep "
        "m and s up to date together, in one loop: when a block raises m, rescale s."),
    "BlockKept": (
        "{name} keeps the blocks to read them twice.",
        STREAM_WHY + " Keeping every block (in a list, or with list(...)) to go over them "
        "again is the two-pass softmax of lesson 02 with a list in the middle. Fold each "
        "block into m and s as it comes, and let it go."),
    "NotAList": (
        "{name} asks its blocks for a length or an index, but they come as a stream.",
        "the check hands the blocks over as a stream, as scores arrive when they are computed "
        "block by block: there is no length to ask for and no earlier block to go back to, "
        "only the next one. Read them with one for loop, each block once, in order. An empty "
        "stream shows itself after the loop: no block was read."),
}}
KEPT_EVERY_BLOCK = (
    "your result is right, but on the long stream your function needs more extra memory "
    "than the budget allows: it keeps every block, or a copy of each (b.copy(), list(b), "
    "np.array(b)), to read them again after the last one. That is the two-pass softmax "
    "with a list in the middle, and its memory grows with the row. Fold each block into m "
    "and s as it comes, and keep nothing else between blocks."
)

def stats_cases(rng, hidden):
    def blocks(*sizes, draw=small_ints, **kw):
        return [draw(rng, (n,), **kw) for n in sizes]

    cases = [
        Case(([np.array([2.0])],), note="one block of one score"),
        Case(([np.array([1.0, 3.0])],), note="one block"),
        Case(([np.array([3.0]), np.array([1.0])],), note="the maximum comes first"),
        Case(([np.array([1.0]), np.array([3.0])],), note="the maximum grows in the second block"),
        Case(([np.array([-3.0, -1.0]), np.array([-2.0])],), note="every score is negative"),
        Case((blocks(3, 2, 4),), note="three blocks"),
        Case(([np.array([0.5, -np.inf]), np.array([2.0, -np.inf, 1.0])],),
             note="masked scores (-inf) in the blocks"),
        Case(([np.array([-1000.0, -1001.0]), np.array([-999.0]), np.array([-1000.5])],),
             note="large values: scores near -1000"),
        Case(([np.array([1000.0, 999.0]), np.array([-1000.0]), np.array([1001.0])],),
             note="large values: scores near +1000"),
        Case((blocks(5, 1, 3, 7, draw=normal, scale=3.0),), note="blocks of different sizes"),
    ]
    if hidden:
        cases += [
            Case((blocks(1, 1, 1, 1, 1),), note="blocks of one score"),
            Case((blocks(9),), note="one block"),
            Case((blocks(2, 6, 3, draw=normal, scale=10.0),), note="blocks of different sizes"),
            Case(([np.sort(small_ints(rng, (6,)))[i:i + 2] for i in range(0, 6, 2)],),
                 note="the maximum grows in every block"),
            Case(([-1000.0 + small_ints(rng, (3,)), -1000.0 + small_ints(rng, (4,))],),
                 note="large values: scores near -1000"),
            Case(([normal(rng, (4,)) - 50.0, normal(rng, (2,)) - 40.0],),
                 note="every score is negative"),
        ]
    last = cases[-1]
    as_32 = Case(([b.astype(np.float32) for b in last.args[0]],), note="float32 blocks",
                 tol=FLOAT32)
    as_list = Case(([b.tolist() for b in last.args[0]],), note="blocks as Python lists")
    as_ints = Case(([np.round(b).astype(np.int64) for b in last.args[0]],),
                   note="blocks of integer scores")
    n, size = STREAM_BLOCKS, STREAM_BLOCK
    seed = int(rng.integers(0, 10_000))
    long_stream = Case((normal_blocks_fixture(seed, n, size, scale=3.0),),
                       note=f"{n} blocks of {size:,} scores, with a memory budget",
                       build={"memory_budget": memory_budget(size, 2), "late": []})
    return cases + [as_32, as_list, as_ints, long_stream]


register(Exercise(
    name="online_softmax_stats",
    outputs=("m", "s"),
    reference=ref.online_softmax_stats,
    cases=stats_cases,
    misconceptions=[
        Misconception("sum not rescaled", knob(ref._online_stats, rescale_sum=False),
                      SUM_NOT_RESCALED),
        Misconception("maximum starts at 0", knob(ref._online_stats, start=0.0),
                      MAX_STARTS_AT_0.replace(" and the division is 0 / 0", "")),
        Misconception("every block kept", knob(ref._online_stats, keep=True),
                      KEPT_EVERY_BLOCK),
        Misconception(
            "sum of exp(x)", knob(ref._online_stats, shift=False),
            "your sum adds up exp(x) itself. The sum that goes with the maximum m is the sum of "
            "exp(x - m): the two-pass softmax of lesson 02 subtracts m before exponentiating, "
            "and with scores near 1000, exp(x) alone overflows to inf.",
        ),
    ],
    bad_inputs=[
        BadInput(Case(([],)), "there is no block at all"),
        BadInput(Case(([np.array([1.0]), np.array([])],)), "block 1 is empty"),
        BadInput(Case(([np.ones((2, 2))],)), "block 0 is 2-D, not a row of scores"),
        BadInput(Case(([np.array([1.0, np.nan])],)), "block 0 holds NaN"),
    ],
    rules=Rules(
        names={"concatenate": "np.concatenate", "hstack": "np.hstack",
               "logsumexp": "a library logsumexp", "softmax": "a library softmax"},
        objects=("numpy.concatenate", "numpy.hstack", "scipy.special.logsumexp"),
        why="Read each block once and keep two numbers, the running maximum and the running "
        "sum: joining the blocks into one row is the two-pass softmax this exercise replaces.",
    ),
    arg_names=("scores_blocks",),
    driver={"kind": "call", "one_pass": ONE_PASS_STREAM},
    hint=("After each block, m must be the largest score seen so far and s the sum of "
          "exp(x - m) over every score seen so far. Check both after each block of the input "
          "above, by hand."),
    seed=701,
))


# ============================================================================= attention_one_pass

# The measured cases are large enough that holding a score for every key (or pair) costs
# several times what grading can measure from outside (grader.grading.bridge.OS_FLOOR).
ONE_PASS_KEYS, ONE_PASS_BLOCK, ONE_PASS_WIDTH = 1 << 20, 4096, 2


def memory_budget(block_entries: int, kept_entries: int) -> int:
    """The extra bytes a streamed function may hold: a fixed 32 KiB for Python itself,
    plus room for 8 float64 arrays the size of a block and 4 the size of what is kept
    between blocks (the running statistics and output)."""
    return 32 * 1024 + 8 * (8 * block_entries + 4 * kept_entries)


def one_pass_cases(rng, hidden):
    def qkv(t_k, d_k, d_v, draw=small_ints, **kw):
        return draw(rng, (d_k,), **kw), draw(rng, (t_k, d_k), **kw), draw(rng, (t_k, d_v), **kw)

    rising = np.sort(normal(rng, (6, 1), 2.0), axis=0)
    cases = [
        Case(qkv(1, 1, 1) + (1,), note="one key"),
        Case((np.array([1.0]), np.array([[1.0], [3.0]]), np.array([[2.0], [-1.0]]), 1),
             note="blocks of 1: the maximum grows in the second block"),
        Case(qkv(3, 2, 2) + (2,), note="a last block that is shorter"),
        Case(qkv(4, 2, 1) + (4,), note="one block: block = T_k"),
        Case(qkv(3, 1, 2) + (10,), note="a block larger than T_k"),
        Case((np.array([1.0]), rising, normal(rng, (6, 2)), 2),
             note="the maximum grows in every block"),
        Case((np.array([1.0]), -1000.0 + small_ints(rng, (5, 1)), small_ints(rng, (5, 2)), 2),
             note="large values: scores near -1000"),
        Case((np.array([1.0]), 1000.0 + small_ints(rng, (5, 1)), small_ints(rng, (5, 2)), 2),
             note="large values: scores near +1000"),
        Case(qkv(7, 3, 2, normal) + (3,), note="random values, blocks of 3"),
    ]
    if hidden:
        for t_k, block in [(8, 1), (9, 4), (5, 5), (12, 5), (6, 7)]:
            cases.append(Case(qkv(t_k, 3, 4, normal, scale=2.0) + (block,), note="random values"))
        cases.append(Case((np.array([2.0]), -500.0 + normal(rng, (7, 1)), normal(rng, (7, 3)), 3),
                          note="large values: scores near -1000"))
        cases.append(Case((np.array([1.0, 1.0]), np.sort(normal(rng, (9, 2), 3.0), axis=0),
                           normal(rng, (9, 1)), 2), note="the maximum grows in every block"))
    last = cases[-1]
    cases += [as_float32(last), as_lists(last), as_strided(last)]
    n, d, block = ONE_PASS_KEYS, ONE_PASS_WIDTH, ONE_PASS_BLOCK
    seed = int(rng.integers(0, 10_000))
    cases.append(Case(
        (normal(rng, (d,)), normal_fixture(seed, (n, d)), normal_fixture(seed + 1, (n, d)), block),
        note=f"{n:,} keys in blocks of {block}, with a memory budget",
        build={"memory_budget": memory_budget(block, 2 * d + 2)}))
    return cases


def one_pass(**wrong):
    return knob(ref._one_pass, **wrong)


# K and V come as arrays that note which rows are read (grader.learner.one_pass): a row
# read again after later rows were (more than a block before) is a second pass.
ONE_PASS_ROWS = {"rows": [1, 2], "block": 3, "say": {
    "ReadTwice": (
        "{name} reads keys or values twice: it must read K and V in one pass.",
        "the check hands K and V over as arrays that note which rows your function reads. The "
        "current block may be read as often as the step needs, but once later rows have been "
        "read, going back to earlier ones is a second pass. A loop over the keys for the "
        "maximum, then another for the sums and the output, reads K twice; so does scoring "
        "every key first. Keep m, s and the output up to date in one loop over the blocks, "
        "rescaling s and the output when m grows."),
}, "shown": "(K and V handed to your function as arrays that note which rows are read)"}


register(Exercise(
    name="attention_one_pass",
    probes=("K", "V"),
    quantities=lambda q, K, V, block: {**attention_quantities(q, K), "block": block},
    reference=ref.attention_one_pass,
    cases=one_pass_cases,
    misconceptions=[
        Misconception("sum not rescaled", one_pass(rescale_sum=False), SUM_NOT_RESCALED),
        Misconception("output not rescaled", one_pass(rescale_output=False), OUTPUT_NOT_RESCALED),
        Misconception("maximum starts at 0", one_pass(start=0.0), MAX_STARTS_AT_0),
        Misconception("divided inside the loop", one_pass(normalise="each block"), DIVIDED_INSIDE),
        Misconception("every score at once", one_pass(stream=False), ALL_AT_ONCE),
        Misconception("scores not scaled", one_pass(scaled=False), NOT_SCALED),
    ],
    bad_inputs=[
        BadInput(Case((np.ones(3), np.ones((4, 2)), np.ones((4, 1)), 2)),
                 "q has d_k = 3 but the keys have 2 features"),
        BadInput(Case((np.ones(2), np.ones((4, 2)), np.ones((3, 1)), 2)),
                 "K has 4 keys but V has 3 rows"),
        BadInput(Case((np.ones(2), np.ones((4, 2)), np.ones((4, 1)), 0)),
                 "block = 0 is not a block size"),
        BadInput(Case((np.ones((1, 2)), np.ones((4, 2)), np.ones((4, 1)), 2)),
                 "q is 2-D: this function takes one query"),
    ],
    rules=Rules(names=LIBRARY_ATTENTION, objects=ATTENTION_OBJECTS, why=BY_HAND),
    arg_names=("q", "K", "V", "block"),
    driver={"kind": "call", "one_pass": ONE_PASS_ROWS},
    hint=("Keep three things between blocks: the running maximum m, the running sum s of "
          "exp(score - m), and the running output, the sum of exp(score - m) times each value "
          "row. When a block raises m, both s and the output are multiplied by exp(m_old - "
          "m_new); the output is divided by s once, at the end. Redo the input above block by "
          "block."),
    seed=702,
))


# ============================================================================= tiled_attention

TILED_T, TILED_BLOCK, TILED_WIDTH = 2048, 128, 2  # d_v = 1: the recorded outputs stay small


def tiled_cases(rng, hidden):
    def qkv(batch, t_q, t_k, d_k, d_v, draw=small_ints, **kw):
        return (draw(rng, batch + (t_q, d_k), **kw), draw(rng, batch + (t_k, d_k), **kw),
                draw(rng, batch + (t_k, d_v), **kw))

    cases = [
        Case(qkv((), 1, 1, 1, 1) + (1, 1), note="one query, one key"),
        Case(qkv((), 2, 2, 1, 1) + (1, 1), {"causal": True}, note="causal, tiles of 1×1"),
        Case(qkv((), 3, 3, 1, 2) + (2, 2), {"causal": True},
             note="causal: a tile that crosses the diagonal"),
        Case(qkv((), 3, 5, 2, 1) + (2, 2), note="T_q ≠ T_k, not causal"),
        Case(qkv((), 4, 4, 2, 2) + (2, 2), {"causal": True}, note="causal, 2×2 tiles"),
        Case(qkv((), 5, 5, 2, 1) + (2, 3), {"causal": True}, note="causal, block_q < block_k"),
        Case(qkv((), 5, 5, 1, 2) + (3, 2), {"causal": True}, note="causal, block_q > block_k"),
        Case(qkv((), 4, 4, 2, 2) + (4, 4), {"causal": True}, note="causal, one tile"),
        Case(qkv((2,), 4, 4, 3, 2) + (2, 2), {"causal": True}, note="batch axes"),
        Case((normal(rng, (2, 1, 4, 2)), normal(rng, (4, 2)), normal(rng, (4, 3)), 3, 2),
             {"causal": True}, note="batch axes broadcast"),
        Case((np.ones((4, 1)), np.array([[-2.0], [1.0], [5.0], [900.0]]),
              small_ints(rng, (4, 2)), 2, 1), note="the maximum grows across tiles, up to 900"),
        Case(qkv((), 7, 7, 3, 2, normal) + (3, 2), {"causal": True}, note="random values"),
    ]
    if hidden:
        for t, bq, bk, causal in [(6, 2, 4, True), (8, 3, 3, True), (9, 4, 2, True),
                                  (7, 1, 3, True), (6, 5, 5, False), (8, 8, 1, True)]:
            cases.append(Case(qkv((), t, t, 2, 3, normal, scale=2.0) + (bq, bk), {"causal": causal},
                              note="random values"))
        cases.append(Case(qkv((3,), 5, 5, 2, 2, normal) + (2, 3), {"causal": True},
                          note="batch axes"))
        cases.append(Case(qkv((), 4, 6, 2, 2, normal) + (3, 4), note="T_q ≠ T_k, not causal"))
    last = cases[-1]
    cases += [as_float32(last), as_lists(last), as_strided(last)]
    t, d, b = TILED_T, TILED_WIDTH, TILED_BLOCK
    seed = int(rng.integers(0, 10_000))
    cases.append(Case(
        (normal_fixture(seed, (t, d)), normal_fixture(seed + 1, (t, d)),
         normal_fixture(seed + 2, (t, 1)), b, b), {"causal": True},
        note=f"causal, {t:,} tokens in {b}×{b} tiles, with a memory budget",
        build={"memory_budget": memory_budget(b * b, t + b * 3)}))
    return cases


def tiles(**wrong):
    return knob(ref._tiled, **wrong)


register(Exercise(
    name="tiled_attention",
    probes=("K", "V"),
    quantities=attention_quantities,
    reference=ref.tiled_attention,
    cases=tiled_cases,
    misconceptions=[
        Misconception(
            "diagonal tile dropped", tiles(skip="from the block's start"),
            "your causal skip also drops the tiles that cross the diagonal: it skips a tile as "
            "soon as its first key is not before the block's first query. Such a tile still "
            "holds keys that some of its queries may see (key j for query i when j <= i), so a "
            "row can lose keys it needs, and the first rows lose every key. Skip a tile only "
            "when its first key comes after the block's *last* query; compute the tile that "
            "crosses the diagonal and mask inside it.",
        ),
        Misconception(
            "masked, not skipped", tiles(skip=None),
            "your output is right, but no tile was skipped: you computed the tiles above the "
            "diagonal and masked them. A tile whose keys all come after all its queries "
            "contributes exp(-inf) = 0 to every row, so it can be left out entirely, never "
            "computed; that is where the saving comes from. Skip those tiles and count them.",
        ),
        Misconception(
            "diagonal tile not masked", tiles(mask_inside=False),
            "the tiles above the diagonal are skipped, but inside a tile that crosses the "
            "diagonal every key is used: query i also sees keys j > i of that tile, the "
            "future. Mask inside such a tile with lesson 04's rule (key j allowed for query i "
            "when j <= i), using the tile's positions in the whole sequence, not within the "
            "tile.",
        ),
        Misconception(
            "computed tiles counted", tiles(count="computed"),
            "your output is right, but the number you return counts the tiles you computed. "
            "The function returns the number of tiles it *skipped* (0 when causal=False).",
        ),
        Misconception("output not rescaled", tiles(rescale_output=False), OUTPUT_NOT_RESCALED),
        Misconception("sum not rescaled", tiles(rescale_sum=False), SUM_NOT_RESCALED),
        Misconception("divided inside the loop", tiles(normalise="each block"), DIVIDED_INSIDE),
        Misconception(
            "every score at once", tiles(stream=False),
            "your output and your count are right, but on the large input your function needs "
            "far more extra memory than the budget allows: it holds a score for every (query, "
            "key) pair at once, T_q × T_k numbers. Work one tile at a time: the memory should "
            "grow with block_q × block_k (plus the output), not with T_q × T_k.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((np.ones((3, 2)), np.ones((4, 3)), np.ones((4, 1)), 2, 2)),
                 "Q has d_k = 2 but K has d_k = 3"),
        BadInput(Case((np.ones((3, 2)), np.ones((4, 2)), np.ones((4, 1)), 2, 2), {"causal": True}),
                 "causal=True with 3 queries and 4 keys"),
        BadInput(Case((np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 1)), 0, 2)),
                 "block_q = 0 is not a block size"),
        BadInput(Case((np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 1)), 2, 2), {"causal": "yes"}),
                 "causal must be True or False"),
    ],
    rules=Rules(names=LIBRARY_ATTENTION, objects=ATTENTION_OBJECTS, why=BY_HAND),
    arg_names=("Q", "K", "V", "block_q", "block_k"),
    hint=("Each block of queries runs the online softmax of attention_one_pass over its row of "
          "tiles, for all its rows at once: a running maximum, sum and output per row. With "
          "causal=True, leave out the tiles whose keys all come after all their queries (and "
          "count them), and mask inside a tile that crosses the diagonal. Draw the tiles of "
          "the input above on paper."),
    seed=703,
))


# ============================================================================= KVCache

def _show(a, indent: int = 10) -> str:
    """``a`` on one line where it fits in 60 characters, else row by row."""
    text = np.array2string(np.asarray(a), precision=4, suppress_small=True, separator=", ",
                           max_line_width=80)
    one = " ".join(text.split()).replace("[ ", "[")
    return one if len(one) <= 60 else text.replace("\n", "\n" + " " * indent)


def cache_steps(appends: list[tuple[np.ndarray, np.ndarray]]) -> dict:
    """The ``build`` of a KVCache case: a new cache, then one ``append(k, v)`` per pair,
    each shown in the message as the code that makes it (the message writes the label,
    "cache", and " = " before the first line)."""
    lines = ["KVCache()"]
    for i, (k, v) in enumerate(appends, 1):
        what = "one position" if np.ndim(k) == 1 else f"a block of {len(k)} positions"
        lines.append(f"cache.append(k, v)    # call {i}, {what}:")
        shown_k, shown_v = _show(k, 10), _show(v, 10)
        if "\n" in shown_k or "\n" in shown_v or len(shown_k) + len(shown_v) > 70:
            lines += [f"    k = {shown_k}", f"    v = {shown_v}"]
        else:  # one line for a small pair
            lines.append(f"    k = {shown_k}, v = {shown_v}")
    lines.append("after each call the check reads cache.keys, cache.values and len(cache)")
    return {"args": [], "kwargs": {}, "calls": [["append", [k, v]] for k, v in appends],
            "describe": "\n  ".join(lines), "label": "cache"}


def kv_cases(rng, hidden):
    def pair(n, d_k, d_v, draw=small_ints):
        shape = (lambda d: (d,)) if n is None else (lambda d: (n, d))
        return draw(rng, shape(d_k)), draw(rng, shape(d_v))

    plans = [
        ("one position", [pair(None, 2, 1)]),
        ("two positions", [pair(None, 2, 1), pair(None, 2, 1)]),
        ("three positions, d_k ≠ d_v", [pair(None, 1, 3), pair(None, 1, 3), pair(None, 1, 3)]),
        ("a block of 3 positions, then one", [pair(3, 2, 2), pair(None, 2, 2)]),
        ("one position, then a block of 2", [pair(None, 3, 1), pair(2, 3, 1)]),
        ("random values",
         [pair(None, 2, 3, normal), pair(2, 2, 3, normal), pair(None, 2, 3, normal)]),
    ]
    if hidden:
        plans += [
            ("a block of 4 positions", [pair(4, 3, 2, normal)]),
            ("five positions", [pair(None, 2, 2, normal) for _ in range(5)]),
            ("blocks and positions",
             [pair(2, 1, 4), pair(None, 1, 4), pair(3, 1, 4), pair(None, 1, 4)]),
        ]
    plans.append(("float32", [tuple(a.astype(np.float32) for a in p) for p in plans[-1][1]]))
    return [Case((), note=note, build=cache_steps(appends),
                 tol=FLOAT32 if note == "float32" else FLOAT64)
            for note, appends in plans]


def cache_with(**wrong) -> type:
    """The reference cache with one knob of its ``append`` changed."""
    name = f"KVCache[{', '.join(f'{k}={v!r}' for k, v in wrong.items())}]"
    return type(name, (ref.KVCache,), {"__module__": __name__,
                                       "append": functools.partialmethod(ref._append, **wrong)})


register(Exercise(
    name="KVCache",
    reference=ref.KVCache,
    cases=kv_cases,
    misconceptions=[
        Misconception(
            "keys laid end to end", cache_with(join="flat"),
            "your cache lays the vectors end to end in one long 1-D array, so cache.keys has "
            "shape [t * d_k] instead of [t, d_k]. That is what np.concatenate does with 1-D "
            "vectors. Keep one row per position: turn a single key into a block of one row "
            "first (the given line does), then join blocks along axis 0.",
        ),
        Misconception(
            "only the last append kept", cache_with(keep="last"),
            "your cache keeps only what the last append gave it: the earlier positions are "
            "gone. The cache must grow, each append adding its rows after the ones already "
            "there.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((), build=cache_steps([(np.ones((2, 2)), np.ones((3, 1)))])),
                 "k holds 2 keys but v holds 3 values"),
        BadInput(Case((), build=cache_steps([(np.ones(2), np.ones(1)), (np.ones(3), np.ones(1))])),
                 "the second key has 3 features, the first had 2 (d_k changed)"),
        BadInput(Case((), build=cache_steps([(np.ones((1, 2, 2)), np.ones((1, 2, 1)))])),
                 "k is 3-D"),
    ],
    driver={"kind": "object", "observe": ["keys", "values", "len"]},
    hint=("After every append, cache.keys must hold one row per position appended so far, "
          "oldest first, and cache.values the matching rows; len(cache) is the number of "
          "rows. Both are read as attributes (cache.keys, not cache.keys()). Follow the calls "
          "above one at a time."),
    seed=704,
))


# ============================================================================= decode_step

def _cache_fixture(K_past, V_past):
    t = len(K_past)
    if t == 0:
        return learner_object("KVCache", describe="<a new KVCache of yours, empty>")
    return learner_object(
        "KVCache", [["append", [K_past, V_past]]],
        f"<a KVCache of yours, after one append of {t} position{'s' if t > 1 else ''}:\n"
        f"      keys   = {_show(K_past)}\n      values = {_show(V_past)}>")


def decode_case(rng, t0, n, d_model, d_k, d_v, draw, note, dtype=np.float64):
    """Token(s) at positions t0.. of a sequence, with the cache holding the keys and values
    of positions 0..t0-1 (``n``: None for one token, else a block of n)."""
    W_q, W_k, W_v = (draw(rng, (d_model, d)).astype(dtype) for d in (d_k, d_k, d_v))
    past = draw(rng, (t0, d_model)).astype(dtype)
    x_t = draw(rng, (d_model,) if n is None else (n, d_model)).astype(dtype)
    return Case((x_t, _cache_fixture(past @ W_k, past @ W_v), W_q, W_k, W_v), note=note,
                tol=FLOAT32 if dtype == np.float32 else FLOAT64)


def decode_cases(rng, hidden):
    one = np.array([[1.0]])
    first = Case((np.array([1.0]), _cache_fixture(np.array([[2.0]]), np.array([[2.0]])), one,
                  one, one), note="one position cached")
    plans = [  # t0, n, d_model, d_k, d_v, draw, note
        (0, None, 2, 1, 1, small_ints, "the first token: the cache is empty"),
        (2, None, 2, 2, 1, small_ints, "two positions cached"),
        (3, None, 2, 1, 2, small_ints, "three positions cached"),
        (0, 3, 2, 2, 1, small_ints, "a prompt of 3 tokens read in one go"),
        (2, 2, 2, 1, 2, small_ints, "2 new tokens after 2 cached positions"),
        (4, None, 3, 2, 2, normal, "four positions cached, random values"),
        (3, 3, 3, 2, 2, normal, "3 new tokens after 3 cached positions, random values"),
    ]
    if hidden:
        plans += [
            (5, None, 4, 3, 2, normal, "five positions cached"),
            (0, None, 3, 2, 3, normal, "the first token: the cache is empty"),
            (1, 4, 3, 3, 2, normal, "4 new tokens after 1 cached position"),
            (0, 5, 2, 2, 2, normal, "a prompt of 5 tokens read in one go"),
            (6, 2, 4, 2, 3, normal, "2 new tokens after 6 cached positions"),
        ]
    cases = [first] + [decode_case(rng, *plan) for plan in plans]
    cases.append(decode_case(rng, 2, 2, 3, 2, 2, normal, "float32", np.float32))
    return cases


def decoder(**wrong):
    return knob(ref._decode, **wrong)


register(Exercise(
    name="decode_step",
    uses=("KVCache",),
    probes=("x_t", "W_q", "W_k", "W_v"),
    reference=ref.decode_step,
    cases=decode_cases,
    misconceptions=[
        Misconception(
            "appended after attending", decoder(append="after"),
            "you attend first and append the new key and value to the cache afterwards, so the "
            "new token attends to the earlier positions only, never to itself (and the first "
            "token finds an empty cache). Causal attention lets position t see positions "
            "0..t, itself included: append first, then attend over the whole cache.",
        ),
        Misconception(
            "a token does not see itself", decoder(sees="before itself"),
            "your new tokens are appended, but each one sees only the positions *before* its "
            "own: an off-by-one in which cached positions it may see. New token i sits at "
            "position t + i (t = the cached positions before the call) and may see positions "
            "0 to t + i, its own included, as in lesson 04's causal mask (j <= i, not j < i).",
        ),
        Misconception(
            "sees one position ahead", decoder(sees="one ahead"),
            "when several new tokens come at once, each of yours also sees the next one: an "
            "off-by-one in which cached positions it may see. New token i sits at position "
            "t + i and may see positions 0 to t + i, not t + i + 1.",
        ),
        Misconception(
            "causal rows taken from the top", decoder(offset=False),
            "your new tokens are placed at positions 0, 1, ... as if the cache were empty: "
            "the causal rule is applied without the cached positions in front. New token i "
            "sits at position t + i, where t is the number of positions cached before the "
            "call (len(cache) before appending), so it may see positions 0 to t + i: the "
            "*last* rows of lesson 04's causal mask, not the first ones.",
        ),
        Misconception(
            "cache not updated", decoder(append="never"),
            "your output is right, but the new keys and values never reach the cache: after "
            "the call, cache.keys and cache.values should hold one more row per new token. "
            "The next token needs them. Append them to the cache, then attend over the cache.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((np.ones(3), _cache_fixture(np.ones((1, 2)), np.ones((1, 1))),
                       np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 1)))),
                 "x_t has 3 features but W_q has 2 rows"),
        BadInput(Case((np.ones(2), _cache_fixture(np.zeros((0, 2)), np.zeros((0, 1))),
                       np.ones((2, 3)), np.ones((2, 2)), np.ones((2, 1)))),
                 "W_q gives queries of width 3 but W_k keys of width 2"),
        BadInput(Case((np.ones((1, 1, 2)), _cache_fixture(np.zeros((0, 2)), np.zeros((0, 1))),
                       np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 1)))),
                 "x_t is 3-D"),
    ],
    rules=Rules(names=LIBRARY_ATTENTION, objects=ATTENTION_OBJECTS, why=BY_HAND),
    driver={"kind": "call", "observe": {"arg": 1, "name": "cache", "attrs": ["keys", "values"]}},
    arg_names=("x_t", "cache", "W_q", "W_k", "W_v"),
    hint=("decode_step is checked with your own KVCache, so make sure KVCache passes first. "
          "Project the new token(s), append their keys and values, then let new token i, at "
          "position len(cache before the call) + i, attend over cached positions 0 up to its "
          "own. Afterwards the check also reads cache.keys and cache.values."),
    seed=705,
))
