"""Lesson 07 exercises: the online softmax, one-pass and tiled attention, the KV cache and
decoding. The cases show every catalogued mistake (a maximum that grows between blocks, scores
near ±1000, uneven blocks, tiles across the diagonal, an empty or a filled cache); one large case
per streamed exercise runs with a memory budget, and the one-pass drivers
(``learner.py``: ``OnePass``) carry their words as data. A mistake is a core of ``reference.py``
with one knob set wrong (for the cache, a class whose ``append`` is)."""
from __future__ import annotations

import functools

import numpy as np

from ...learner.difference import FLOAT32, FLOAT64
from ...learner.drivers import Object
from ...learner.fixtures import learner_object, normal_fixture
from ...learner.shortcuts import Rules
from .. import LESSONS, BadInput, Build, Case, Exercise, Misconception, Stated, Work, knob
from ..stated import BAD_INPUTS, MEMORY, ONE_PASS, SOURCE_SCAN, VALUES, WORK
from ..drawing import attention_quantities, as_float32, as_lists, as_strided, normal, small_ints
from . import reference as ref
from .learner import Observed, OnePass, normal_blocks_fixture

LESSON = LESSONS.of(__name__)  # every exercise here registers through it


# The lesson's words on the given lines, for each function that has them.
KEEP_THE_CHECKS = Stated("The first lines of each function, which check the input, are given; "
                         "keep them.", BAD_INPUTS, "should reject this input with a ValueError")


def bad(*args, why: str, **kwargs) -> BadInput:
    return BadInput(Case(args, kwargs), why)


def ones(*shapes) -> tuple:
    return tuple(map(np.ones, shapes))


def memory_budget(block_entries: int, kept_entries: int) -> int:
    """The extra bytes a streamed function may hold: 32 KiB for Python itself, plus 8 float64
    arrays the size of a block and 4 the size of what is kept between blocks."""
    return 32 * 1024 + 8 * (8 * block_entries + 4 * kept_entries)


ATTENTION_RULES = Rules(
    names={"scaled_dot_product_attention": "torch.nn.functional.scaled_dot_product_attention",
           "multi_head_attention_forward": "torch.nn.functional.multi_head_attention_forward",
           "MultiheadAttention": "torch.nn.MultiheadAttention",
           "softmax": "a library softmax (torch.softmax, scipy.special.softmax, ...)",
           "log_softmax": "a library log_softmax", "logsumexp": "a library logsumexp"},
    objects=("torch.nn.functional.scaled_dot_product_attention",
             "torch.nn.functional.multi_head_attention_forward", "torch.nn.MultiheadAttention",
             "torch.softmax", "torch.nn.functional.softmax", "scipy.special.softmax",
             "scipy.special.logsumexp"),
    why="The point of this exercise is the arithmetic that a library's attention hides: write "
    "it with NumPy.")

MAX_STARTS_AT_0 = (
    "your running maximum starts at 0 instead of -inf, so it is never below 0: with every score "
    "near -1000, as above, each exp(score - 0) underflows to 0, the sum is 0 and the division is "
    "0 / 0. Start from -inf, which any first score replaces (np.exp(-np.inf) is 0, so the first "
    "rescaling is harmless).")
DIVIDED_INSIDE = (
    "you divide by the running sum inside the loop, after every block, then keep adding to the "
    "divided output as if it were not: right with one block, wrong with more. Keep the output "
    "unnormalised (on the scale of the running sum) and divide once, after the last block.")


def too_much_memory(right: str, holds: str, fix: str) -> str:
    return (f"your {right} right, but on the large input your function needs more extra memory "
            f"than the budget allows: {holds}. {fix}")


# ============================================================================= online_softmax_stats

# The blocks come as a one-shot stream. A copy of every block kept cannot be told from a number
# the answer needs, so the largest case streams 2,097,152 scores with the budget of one block.
STREAM_BLOCKS, STREAM_BLOCK = 512, 4096
# And 4,096 blocks of 16, with the budget of one such block: a pair of numbers kept per block
# (a list of each block's m and s) is past it.
MANY_BLOCKS = 1 << 12
STREAM = ("the check hands the blocks over as a stream, as scores arrive when computed block by "
          "block: each comes once, in order, and then it is gone. ")
ONE_PASS_STREAM = {"stream": 0, "say": {
    "ReadTwice": ("{name} reads the blocks twice.", STREAM + "A second loop over them (the "
                  "maximum in the first, the sum in the second) is lesson 02's two-pass softmax. "
                  "Keep m and s up to date together, in one loop: when a block raises m, "
                  "rescale s."),
    "BlockKept": ("{name} keeps the blocks to read them twice.", STREAM + "Keeping every block (in "
                  "a list, or with list(...)) to go over them again is lesson 02's two-pass "
                  "softmax with a list in the middle. Fold each block into m and s as it comes."),
    "NotAList": ("{name} asks its blocks for a length or an index, but they come as a stream.",
                 STREAM + "There is no length and no earlier block, only the next one: read them "
                 "with one for loop. An empty stream shows itself after the loop: no block read.")}}


def stats_cases(rng, hidden):
    def ints(*sizes, draw=small_ints, **kw):
        return [draw(rng, (n,), **kw) for n in sizes]

    rows = lambda *rows: [np.array(r, dtype=float) for r in rows]  # noqa: E731
    plans = [(rows([2]), "one block of one score"), (rows([1, 3]), "one block"),
             (rows([3], [1]), "the maximum comes first"),
             (rows([1], [3]), "the maximum grows in the second block"),
             (rows([-3, -1], [-2]), "every score is negative"), (ints(3, 2, 4), "three blocks"),
             (rows([0.5, -np.inf], [2, -np.inf, 1]), "masked scores (-inf) in the blocks"),
             (rows([-1000, -1001], [-999], [-1000.5]), "large values: scores near -1000"),
             (rows([1000, 999], [-1000], [1001]), "large values: scores near +1000"),
             (ints(5, 1, 3, 7, draw=normal, scale=3.0), "blocks of different sizes")]
    if hidden:
        plans += [(ints(1, 1, 1, 1, 1), "blocks of one score"), (ints(9), "one block"),
                  (ints(2, 6, 3, draw=normal, scale=10.0), "blocks of different sizes"),
                  ([np.sort(small_ints(rng, (6,)))[i:i + 2] for i in range(0, 6, 2)],
                   "the maximum grows in every block"),
                  ([-1000.0 + b for b in ints(3, 4)], "large values: scores near -1000"),
                  ([normal(rng, (4,)) - 50.0, normal(rng, (2,)) - 40.0],
                   "every score is negative")]
    last = plans[-1][0]
    stream = normal_blocks_fixture(int(rng.integers(0, 10_000)), STREAM_BLOCKS, STREAM_BLOCK,
                                   scale=3.0)
    cases = [Case((b,), note=note) for b, note in plans] + [
        Case(([b.astype(np.float32) for b in last],), note="float32 blocks", tol=FLOAT32),
        Case(([b.tolist() for b in last],), note="blocks as Python lists"),
        Case(([np.round(b).astype(np.int64) for b in last],), note="blocks of integer scores"),
        Case((stream,), note=f"{STREAM_BLOCKS} blocks of {STREAM_BLOCK:,} scores, with a memory "
             "budget", build=Build(memory_budget=memory_budget(STREAM_BLOCK, 2), late=[]))]
    many = normal_blocks_fixture(int(rng.integers(0, 10_000)), MANY_BLOCKS, 16, scale=3.0)
    return cases + [Case((many,), note=f"{MANY_BLOCKS:,} blocks of 16 scores, with a memory budget",
                         build=Build(memory_budget=memory_budget(16, 2), late=[]))]


stats = functools.partial(knob, ref._online_stats)
LESSON.register(Exercise(
    name="online_softmax_stats", outputs=("m", "s"), reference=ref.online_softmax_stats,
    cases=stats_cases, arg_names=("scores_blocks",), seed=701,
    driver=OnePass(**ONE_PASS_STREAM),
    misconceptions=[
        Misconception("every block kept", stats(keep=True), too_much_memory(
            "result is", "it keeps every block, or a copy of each (b.copy(), list(b), "
            "np.array(b)), to read them again after the last one, the two-pass softmax with a "
            "list in the middle, whose memory grows with the row", "Fold each block into m and "
            "s as it comes, and keep nothing else between blocks.")),
        Misconception("a summary kept per block", stats(summaries=True), too_much_memory(
            "result is", "it keeps each block's own maximum and sum (in a list, to merge them "
            "after the last block), and that list grows with the number of blocks", "Merge each "
            "block into the running m and s as it comes: the running pair is all you keep.")),
        Misconception("sum of exp(x)", stats(shift=False), (
            "your sum adds up exp(x) itself. The sum that goes with the maximum m is the sum of "
            "exp(x - m): lesson 02's two-pass softmax subtracts m before exponentiating, and "
            "with scores near 1000, exp(x) alone overflows to inf.")),
    ],
    bad_inputs=[bad([], why="there is no block at all"),
                bad([np.array([1.0]), np.array([])], why="block 1 is empty"),
                bad([np.ones((2, 2))], why="block 0 is 2-D, not a row of scores"),
                bad([np.array([1.0, np.nan])], why="block 0 holds NaN")],
    rules=Rules(
        names={"concatenate": "np.concatenate", "hstack": "np.hstack",
               "logsumexp": "a library logsumexp", "softmax": "a library softmax"},
        objects=("numpy.concatenate", "numpy.hstack", "scipy.special.logsumexp"),
        why="Read each block once and keep two numbers, the running maximum and the running "
        "sum: joining the blocks into one row is the two-pass softmax this exercise replaces."),
    hint=("After each block, m must be the largest score seen so far and s the sum of "
          "exp(x - m) over every score seen so far. Check both after each block of the input "
          "above, by hand."),
    stated=(Stated("going over the blocks a second time (a second loop, or a list of the blocks "
                   "kept to read again) fails with a message that says so", ONE_PASS, "twice"),
            Stated("A stream has no `len()` and no index", ONE_PASS,
                   "asks its blocks for a length or an index"),
            Stated("keeping only $m$ and $s$", MEMORY, "extra memory"),
            Stated("Joining the blocks back into one row is not accepted either", SOURCE_SCAN,
                   "asks you to do by hand"),
            KEEP_THE_CHECKS),
))


# ============================================================================= attention_one_pass

# Large enough that holding a score for every key (or pair) costs several times what grading
# can measure from outside (grader.grading.notebook.bridge.OS_FLOOR).
ONE_PASS_KEYS, ONE_PASS_BLOCK, ONE_PASS_WIDTH = 1 << 20, 4096, 2


def one_pass_cases(rng, hidden):
    def qkv(t_k, d_k, d_v, draw=small_ints, **kw):
        return draw(rng, (d_k,), **kw), draw(rng, (t_k, d_k), **kw), draw(rng, (t_k, d_v), **kw)

    rising = np.sort(normal(rng, (6, 1), 2.0), axis=0)
    plans = [
        (qkv(1, 1, 1) + (1,), "one key"),
        ((np.array([1.0]), np.array([[1.0], [3.0]]), np.array([[2.0], [-1.0]]), 1),
         "blocks of 1: the maximum grows in the second block"),
        (qkv(3, 2, 2) + (2,), "a last block that is shorter"),
        (qkv(4, 2, 1) + (4,), "one block: block = T_k"),
        (qkv(3, 1, 2) + (10,), "a block larger than T_k"),
        ((np.array([1.0]), rising, normal(rng, (6, 2)), 2), "the maximum grows in every block"),
        ((np.array([1.0]), -1000.0 + small_ints(rng, (5, 1)), small_ints(rng, (5, 2)), 2),
         "large values: scores near -1000"),
        ((np.array([1.0]), 1000.0 + small_ints(rng, (5, 1)), small_ints(rng, (5, 2)), 2),
         "large values: scores near +1000"),
        ((np.array([1.0, 0.0, 0.0, 0.0]), np.array([[2000.0, 1, 0, 0], [-2000.0, 0, 1, 0], [1998.0, 0, 0, 1]]),
          np.array([[1.0], [2.0], [3.0]]), 1), "large values: a block far below the maximum so far"),
        (qkv(7, 3, 2, normal) + (3,), "random values, blocks of 3")]
    if hidden:
        plans += [(qkv(t_k, 3, 4, normal, scale=2.0) + (block,), "random values")
                  for t_k, block in [(8, 1), (9, 4), (5, 5), (12, 5), (6, 7)]]
        plans += [((np.array([2.0]), -500.0 + normal(rng, (7, 1)), normal(rng, (7, 3)), 3),
                   "large values: scores near -1000"),
                  ((np.array([1.0, 1.0]), np.sort(normal(rng, (9, 2), 3.0), axis=0),
                    normal(rng, (9, 1)), 2), "the maximum grows in every block")]
    cases = [Case(args, note=note) for args, note in plans]
    cases += [as_float32(cases[-1]), as_lists(cases[-1]), as_strided(cases[-1])]
    n, d, block = ONE_PASS_KEYS, ONE_PASS_WIDTH, ONE_PASS_BLOCK
    seed = int(rng.integers(0, 10_000))
    cases.append(Case(
        (normal(rng, (d,)), normal_fixture(seed, (n, d)), normal_fixture(seed + 1, (n, d)), block),
        note=f"{n:,} keys in blocks of {block}, with a memory budget",
        build=Build(memory_budget=memory_budget(block, 2 * d + 2))))
    return cases


# K and V note which rows are read: a row read again after later rows (more than a block
# before) is a second pass, and a read of more than a block of rows at once is too many for
# one step (block taken as the number of blocks, or every key scored at once).
ONE_PASS_ROWS = {"rows": [1, 2], "block": 3, "say": {"ReadTwice": (
    "{name} reads keys or values twice: it must read K and V in one pass.",
    "the check hands K and V over as arrays that note which rows your function reads. The "
    "current block may be read as often as the step needs, but going back to earlier rows once "
    "later ones were read is a second pass. A loop over the keys for the maximum, then another "
    "for the sums and the output, reads K twice; so does scoring every key first. Keep m, s and "
    "the output up to date in one loop over the blocks, rescaling s and the output when m "
    "grows."), "TooManyRows": (
    "{name} reads more than `block` keys or values in one step.",
    "the check hands K and V over as arrays that note which rows are read, and a step reads at "
    "most `block` rows: `block` is the number of keys a step reads (the last block may be "
    "shorter), not the number of blocks. Scoring every key at once reads all T_k rows in one "
    "step, and so does a copy of K or V. Slice K[j:j + block] and V[j:j + block] in a loop "
    "over j in steps of block.")},
    "shown": "(K and V handed to your function as arrays that note which rows are read)"}

one_pass = functools.partial(knob, ref._one_pass)
LESSON.register(Exercise(
    name="attention_one_pass", scales="q", probes=("K", "V"), reference=ref.attention_one_pass,
    quantities=lambda q, K, V, block: {"block": block, **attention_quantities(q, K)},
    cases=one_pass_cases, arg_names=("q", "K", "V", "block"), seed=702,
    driver=OnePass(**ONE_PASS_ROWS), rules=ATTENTION_RULES,
    misconceptions=[
        Misconception("maximum starts at 0", one_pass(start=0.0), MAX_STARTS_AT_0),
        Misconception("divided inside the loop", one_pass(normalise="each block"), DIVIDED_INSIDE),
        Misconception("every score at once", one_pass(stream=False), too_much_memory(
            "result is", "it holds a score (or a copy of K or V) for every key at once, while the "
            "budget grows with the block size", "Score one block of keys, fold it into m, s and "
            "the output, and let it go. Slices such as K[j:j + block] are views: they cost "
            "nothing.")),
    ],
    bad_inputs=[bad(*ones(3, (4, 2), (4, 1)), 2, why="q has d_k = 3 but the keys have 2 features"),
                bad(*ones(2, (4, 2), (3, 1)), 2, why="K has 4 keys but V has 3 rows"),
                bad(*ones(2, (4, 2), (4, 1)), 0, why="block = 0 is not a block size"),
                bad(*ones((1, 2), (4, 2), (4, 1)), 2,
                    why="q is 2-D: this function takes one query")],
    hint=("Keep three things between blocks: the running maximum m, the running sum s of "
          "exp(score - m), and the running output, the sum of exp(score - m) times each value "
          "row. When a block raises m, both s and the output are multiplied by exp(m_old - "
          "m_new); the output is divided by s once, at the end. Redo the input above block by "
          "block."),
    stated=(Stated("the keys and values are read `block` rows at a time", ONE_PASS,
                   "reads more than `block` keys or values in one step"),
            Stated("going back to earlier ones is a second pass", ONE_PASS,
                   "reads keys or values twice"),
            Stated("Between blocks keep only $m$, $s$ and $o$, so the extra memory is "
                   "$O(\\text{block} + d_v)$ whatever $T_k$", MEMORY, "extra memory"),
            Stated("Library softmax and attention functions are not accepted here.", SOURCE_SCAN,
                   "asks you to do by hand"),
            KEEP_THE_CHECKS),
))


# ============================================================================= tiled_attention

TILED_T, TILED_BLOCK, TILED_WIDTH = 2048, 128, 2  # d_v = 1: the recorded outputs stay small


def tiled_cases(rng, hidden):
    def tile(batch, t_q, t_k, d_k, d_v, bq, bk, note, causal=True, draw=small_ints, **kw):
        args = tuple(draw(rng, batch + s, **kw) for s in ((t_q, d_k), (t_k, d_k), (t_k, d_v)))
        return Case(args + (bq, bk), {} if causal is None else {"causal": causal}, note=note)

    cases = [
        tile((), 1, 1, 1, 1, 1, 1, "one query, one key", None),
        tile((), 2, 2, 1, 1, 1, 1, "causal, tiles of 1×1"),
        tile((), 3, 3, 1, 2, 2, 2, "causal: a tile that crosses the diagonal"),
        tile((), 3, 5, 2, 1, 2, 2, "T_q ≠ T_k, not causal", None),
        tile((), 4, 4, 2, 2, 2, 2, "causal, 2×2 tiles"),
        tile((), 5, 5, 2, 1, 2, 3, "causal, block_q < block_k"),
        tile((), 5, 5, 1, 2, 3, 2, "causal, block_q > block_k"),
        tile((), 4, 4, 2, 2, 4, 4, "causal, one tile"),
        tile((2,), 4, 4, 3, 2, 2, 2, "batch axes"),
        Case((normal(rng, (2, 1, 4, 2)), normal(rng, (4, 2)), normal(rng, (4, 3)), 3, 2),
             {"causal": True}, note="batch axes broadcast"),
        Case((np.ones((3, 1)), np.array([[-1000.0], [-1001.0], [-999.0]]), small_ints(rng, (3, 2)),
              2, 2), note="large values: scores near -1000"),
        Case((np.ones((4, 1)), np.array([[-2.0], [1.0], [5.0], [900.0]]),
              small_ints(rng, (4, 2)), 2, 1), note="the maximum grows across tiles, up to 900"),
        tile((), 7, 7, 3, 2, 3, 2, "random values", draw=normal)]
    if hidden:
        cases += [tile((), t, t, 2, 3, bq, bk, "random values", causal, normal, scale=2.0)
                  for t, bq, bk, causal in [(6, 2, 4, True), (8, 3, 3, True), (9, 4, 2, True),
                                            (7, 1, 3, True), (6, 5, 5, False), (8, 8, 1, True)]]
        cases += [tile((3,), 5, 5, 2, 2, 2, 3, "batch axes", draw=normal),
                  tile((), 4, 6, 2, 2, 3, 4, "T_q ≠ T_k, not causal", None, normal)]
    cases += [as_float32(cases[-1]), as_lists(cases[-1]), as_strided(cases[-1])]
    t, d, b = TILED_T, TILED_WIDTH, TILED_BLOCK
    seed = int(rng.integers(0, 10_000))
    return cases + [Case(
        (normal_fixture(seed, (t, d)), normal_fixture(seed + 1, (t, d)),
         normal_fixture(seed + 2, (t, 1)), b, b), {"causal": True},
        note=f"causal, {t:,} tokens in {b}×{b} tiles, with a memory budget",
        build=Build(memory_budget=memory_budget(b * b, t + b * 3)))]


# The causal tiles above the diagonal add exp(-inf) = 0 to every row, so whether they were
# computed shows only in the time the call takes. With n tiles a side, skipping them leaves
# n(n + 1)/2 of the n² tiles; computing them all takes the full call's n². The keys are wide
# (d_k = 2048) so that a tile's product outweighs whatever else is done per tile (masking,
# the running softmax, Python's own steps), whatever the style. Measured from outside a
# sandboxed kernel (benchmarks/tiled_work_ratio.py; the median of 5 pairs, on 2 cores with
# a load average of 8 to 10, with and without two more busy processes): a causal run took
# 0.53 to 0.76 of the full run's CPU time (loops over query or key blocks, torch, a loop
# over rows, a whole mask sliced per tile), one that computes the tiles above the diagonal
# 0.90 to 1.33 (the whole tile, or only its scores). In the answer's own process, as in a
# notebook: 0.50 to 0.63, and 0.95 to 1.33. A ratio above the limit is measured again.
WORK_T, WORK_BLOCK, WORK_WIDTH = 512, 32, 2048


def tiled_work() -> Work:
    t, b, d = WORK_T, WORK_BLOCK, WORK_WIDTH
    case = Case((normal_fixture(7031, (t, d)), normal_fixture(7032, (t, d)),
                 normal_fixture(7033, (t, 1)), b, b), {"causal": True},
                note=f"causal, {t} tokens with d_k = {d}, in {b}×{b} tiles")
    return Work(case, {"causal": False}, most=0.85,
                rule="the causal tiles above the diagonal are skipped, never computed",
                found=("your causal run took as much work as the full one ({ratio:.2f} of its "
                       "CPU time, where skipping the tiles above the diagonal leaves about "
                       "half): the tiles above the diagonal seem to be computed, then counted "
                       "as skipped. Decide that a tile is skipped before computing anything of "
                       "it, and then leave it out."))


tiles = functools.partial(knob, ref._tiled)
LESSON.register(Exercise(
    name="tiled_attention", scales="Q", probes=("K", "V"),
    quantities=lambda Q, K, V, block_q, block_k, *rest, **kw: {
        "block_q": block_q, "block_k": block_k, **attention_quantities(Q, K)},
    reference=ref.tiled_attention, cases=tiled_cases, rules=ATTENTION_RULES, seed=703,
    work=tiled_work(),
    arg_names=("Q", "K", "V", "block_q", "block_k"),
    misconceptions=[
        Misconception("diagonal tile dropped", tiles(skip="from the block's start"), (
            "your causal skip also drops the tiles that cross the diagonal: it skips a tile as "
            "soon as its first key is not before the block's first query. Such a tile still holds "
            "keys some of its queries may see (key j for query i when j <= i), so a row can lose "
            "keys it needs, and the first rows lose every key. Skip a tile only when its first "
            "key comes after the block's *last* query; compute the tile that crosses the "
            "diagonal and mask inside it.")),
        Misconception("masked, not skipped", tiles(skip=None), (
            "your output is right, but no tile was skipped: you computed the tiles above the "
            "diagonal and masked them. A tile whose keys all come after all its queries adds "
            "exp(-inf) = 0 to every row, so it can be left out, never computed; that is where the "
            "saving comes from. Skip those tiles and count them.")),
        Misconception("diagonal tile not masked", tiles(mask_inside=False), (
            "the tiles above the diagonal are skipped, but inside a tile that crosses the "
            "diagonal every key is used: query i also sees keys j > i of that tile, the future. "
            "Mask inside such a tile with lesson 04's rule (key j allowed for query i when "
            "j <= i), using the tile's positions in the whole sequence, not within the tile.")),
        Misconception("computed tiles counted", tiles(count="computed"), (
            "your output is right, but the number you return counts the tiles you computed. The "
            "function returns the number of tiles it *skipped* (0 when causal=False).")),
        Misconception("divided inside the loop", tiles(normalise="each block"), DIVIDED_INSIDE),
        Misconception("every score at once", tiles(stream=False), too_much_memory(
            "output and your count are", "it holds a score for every (query, key) pair at once, "
            "T_q × T_k numbers", "Work one tile at a time: the memory should grow with block_q "
            "× block_k (plus the output), not with T_q × T_k.")),
    ],
    bad_inputs=[bad(*ones((3, 2), (4, 3), (4, 1)), 2, 2, why="Q has d_k = 2 but K has d_k = 3"),
                bad(*ones((3, 2), (4, 2), (4, 1)), 2, 2, causal=True,
                    why="causal=True with 3 queries and 4 keys"),
                bad(*ones((3, 2), (3, 2), (3, 1)), 0, 2, why="block_q = 0 is not a block size"),
                bad(*ones((3, 2), (3, 2), (3, 1)), 2, 2, causal="yes",
                    why="causal must be True or False")],
    hint=("Each block of queries runs the online softmax of attention_one_pass over its row of "
          "tiles, for all its rows at once: a running maximum, sum and output per row. With "
          "causal=True, leave out the tiles whose keys all come after all their queries (and "
          "count them), and mask inside a tile that crosses the diagonal. Draw the tiles of "
          "the input above on paper."),
    stated=(Stated("a tile counted as skipped must not be computed at all", WORK,
                   "the tiles above the diagonal seem to be computed, then counted as skipped"),
            Stated("under a memory budget that fits a few tiles and the output, but not all the "
                   "scores", MEMORY, "extra memory"),
            Stated("the number of tiles it skipped (0 when `causal=False`)", VALUES,
                   "tiles it *skipped*"),
            Stated("Library softmax and attention functions are not accepted here either.",
                   SOURCE_SCAN, "asks you to do by hand"),
            KEEP_THE_CHECKS),
))


# ============================================================================= KVCache

def _show(a, indent: int = 10) -> str:
    """``a`` on one line where it fits in 60 characters, else row by row."""
    text = np.array2string(np.asarray(a), precision=4, suppress_small=True, separator=", ",
                           max_line_width=80)
    one = " ".join(text.split()).replace("[ ", "[")
    return one if len(one) <= 60 else text.replace("\n", "\n" + " " * indent)


def cache_steps(appends: list[tuple[np.ndarray, np.ndarray]]) -> Build:
    """A KVCache case's ``build``: a new cache, then ``append(k, v)`` per pair, each shown as
    the code that makes it (the message writes "cache = " before the first line)."""
    lines = ["KVCache()"]
    for i, (k, v) in enumerate(appends, 1):
        what = "one position" if np.ndim(k) == 1 else f"a block of {len(k)} positions"
        lines.append(f"cache.append(k, v)    # call {i}, {what}:")
        k, v = _show(k), _show(v)
        small = "\n" not in k + v and len(k) + len(v) <= 70
        lines += [f"    k = {k}, v = {v}"] if small else [f"    k = {k}", f"    v = {v}"]
    lines.append("after each call the check reads cache.keys, cache.values and len(cache)")
    return Build(args=[], kwargs={}, calls=[["append", [k, v]] for k, v in appends],
                 describe="\n  ".join(lines), label="cache")


def kv_cases(rng, hidden):
    def pair(n, d_k, d_v, draw=small_ints):
        return tuple(draw(rng, (d,) if n is None else (n, d)) for d in (d_k, d_v))

    plans = [
        ("one position", [pair(None, 2, 1)]),
        ("two positions", [pair(None, 2, 1), pair(None, 2, 1)]),
        ("three positions, d_k ≠ d_v", [pair(None, 1, 3) for _ in range(3)]),
        ("a block of 3 positions, then one", [pair(3, 2, 2), pair(None, 2, 2)]),
        ("one position, then a block of 2", [pair(None, 3, 1), pair(2, 3, 1)]),
        ("random values",
         [pair(None, 2, 3, normal), pair(2, 2, 3, normal), pair(None, 2, 3, normal)])]
    if hidden:
        plans += [("a block of 4 positions", [pair(4, 3, 2, normal)]),
                  ("five positions", [pair(None, 2, 2, normal) for _ in range(5)]),
                  ("blocks and positions",
                   [pair(2, 1, 4), pair(None, 1, 4), pair(3, 1, 4), pair(None, 1, 4)])]
    plans.append(("float32", [tuple(a.astype(np.float32) for a in p) for p in plans[-1][1]]))
    return [Case((), note=note, build=cache_steps(appends),
                 tol=FLOAT32 if note == "float32" else FLOAT64) for note, appends in plans]


def cache_with(**wrong) -> type:
    """The reference cache with one knob of its ``append`` changed."""
    name = f"KVCache[{', '.join(f'{k}={v!r}' for k, v in wrong.items())}]"
    return type(name, (ref.KVCache,), {"__module__": __name__,
                                       "append": functools.partialmethod(ref._append, **wrong)})


def bad_cache(*appends, why: str) -> BadInput:
    return BadInput(Case((), build=cache_steps([ones(*a) for a in appends])), why)


LESSON.register(Exercise(
    name="KVCache", reference=ref.KVCache, cases=kv_cases, seed=704,
    driver=Object(observe=["keys", "values", "len"]),
    misconceptions=[
    ],
    bad_inputs=[bad_cache(((2, 2), (3, 1)), why="k holds 2 keys but v holds 3 values"),
                bad_cache((2, 1), (3, 1),
                          why="the second key has 3 features, the first had 2 (d_k changed)"),
                bad_cache(((1, 2, 2), (1, 2, 1)), why="k is 3-D")],
    hint=("After every append, cache.keys must hold one row per position appended so far, "
          "oldest first, and cache.values the matching rows; len(cache) is the number of "
          "rows. Both are read as attributes (cache.keys, not cache.keys()). Follow the calls "
          "above one at a time."),
    stated=(Stated("`keys` and `values` (read as attributes, `cache.keys`)", VALUES,
                   "read as attributes"),
            Stated("`len(cache)` is $t$, the number of positions", VALUES, "['len']"),
            Stated("The given line turns both into blocks of rows and checks that there is one "
                   "value per key", BAD_INPUTS, "should reject this input with a ValueError")),
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
    """Token(s) at positions t0.. (``n``: None for one token, else a block of n), with the
    cache holding the keys and values of positions 0..t0-1."""
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
        (3, 3, 3, 2, 2, normal, "3 new tokens after 3 cached positions, random values")]
    if hidden:
        plans += [(5, None, 4, 3, 2, normal, "five positions cached"),
                  (0, None, 3, 2, 3, normal, "the first token: the cache is empty"),
                  (1, 4, 3, 3, 2, normal, "4 new tokens after 1 cached position"),
                  (0, 5, 2, 2, 2, normal, "a prompt of 5 tokens read in one go"),
                  (6, 2, 4, 2, 3, normal, "2 new tokens after 6 cached positions")]
    return [first] + [decode_case(rng, *plan) for plan in plans] + [
        decode_case(rng, 2, 2, 3, 2, 2, normal, "float32", np.float32)]


def bad_step(x_shape, past, w_shapes, why: str) -> BadInput:
    cache = _cache_fixture(*ones(*past))  # empty when past has 0 rows
    return BadInput(Case((np.ones(x_shape), cache, *ones(*w_shapes))), why)


POSITION = ("New token i sits at position t + i (t: the positions cached before the call, "
            "len(cache) before appending) and may see positions 0 to t + i")
decoder = functools.partial(knob, ref._decode)
LESSON.register(Exercise(
    name="decode_step", scales="W_q",
    quantities=lambda x_t, cache, W_q, *rest: {"√d_k": np.sqrt(np.shape(W_q)[1]),
                                               "d_k": np.shape(W_q)[1],
                                               "d_model": np.shape(W_q)[0]}, uses=("KVCache",), probes=("x_t", "W_q", "W_k", "W_v"),
    reference=ref.decode_step, cases=decode_cases, rules=ATTENTION_RULES, seed=705,
    driver=Observed(arg=1, name="cache", attrs=["keys", "values"]),
    arg_names=("x_t", "cache", "W_q", "W_k", "W_v"),
    misconceptions=[
        Misconception("appended after attending", decoder(append="after"), (
            "you attend first and append the new key and value to the cache afterwards, so the "
            "new token attends to the earlier positions only, never to itself (and the first "
            "token finds an empty cache). Causal attention lets position t see positions 0..t, "
            "itself included: append first, then attend over the whole cache.")),
        Misconception("a token does not see itself", decoder(sees="before itself"), (
            "your new tokens are appended, but each one sees only the positions *before* its "
            f"own: an off-by-one in which cached positions it may see. {POSITION}, its own "
            "included, as in lesson 04's causal mask (j <= i, not j < i).")),
        Misconception("sees one position ahead", decoder(sees="one ahead"), (
            "when several new tokens come at once, each of yours also sees the next one: an "
            f"off-by-one in which cached positions it may see. {POSITION}, not t + i + 1.")),
        # A rule reproduces it (a term of the positions of the new tokens left out), but a
        # relation names a swap of W_q and W_k before it: catalogued.
        Misconception("causal rows taken from the top", decoder(offset=False), (
            "your new tokens are placed at positions 0, 1, ... as if the cache were empty: the "
            f"causal rule is applied without the cached positions in front. {POSITION}: the "
            "*last* rows of lesson 04's causal mask, not the first ones.")),
    ],
    bad_inputs=[bad_step(3, ((1, 2), (1, 1)), ((2, 2), (2, 2), (2, 1)),
                         "x_t has 3 features but W_q has 2 rows"),
                bad_step(2, ((0, 2), (0, 1)), ((2, 3), (2, 2), (2, 1)),
                         "W_q gives queries of width 3 but W_k keys of width 2"),
                bad_step((1, 1, 2), ((0, 2), (0, 1)), ((2, 2), (2, 2), (2, 1)), "x_t is 3-D")],
    hint=("decode_step is checked with your own KVCache, so make sure KVCache passes first. "
          "Project the new token(s), append their keys and values, then let new token i, at "
          "position len(cache before the call) + i, attend over cached positions 0 up to its "
          "own. Afterwards the check also reads cache.keys and cache.values."),
    stated=(Stated("appends $k$ and $v$ to the cache, **before** attending", VALUES,
                   "you attend first and append"),
            Stated("it reads `cache.keys` and `cache.values` after the call", VALUES,
                   "cache.keys"),
            Stated("Library softmax and attention functions are not accepted here either.",
                   SOURCE_SCAN, "asks you to do by hand"),
            KEEP_THE_CHECKS),
))
