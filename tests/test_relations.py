"""Relations (grader/learner/relations.py) and the engine's use of them: each relation is
fed a result it must name and one it must not, and the engine is shown deciding from
data, never from the words of a note or a message."""
from fractions import Fraction

import numpy as np
import pytest
import torch

from grader import lessons
from grader.learner.cases import Case, ErrorInfo, ExerciseInfo, Expectations, Outcome
from grader.learner.checks import LocalSubject, find_expectations
from grader.learner.difference import FLOAT32, FLOAT64
from grader.learner.engine import judge
from grader.learner.wording import MESSAGE_LINES
from grader.learner.relations import relate
from grader.learner.standin import MISMATCH

RNG = np.random.default_rng(5)
SCORES = RNG.normal(size=(3, 4))
Q4 = {"√d_k": 2.0, "d_k": 4, "T_k": 4}


def kind(expected, got, **kw):
    found = relate(expected, got, kw.pop("tol", FLOAT64), **kw)
    return (found.kind, found.text) if found else (None, "")


def test_a_factor_that_is_a_quantity_of_the_case_is_named():
    k, text = kind(SCORES, SCORES * 4, quantities=Q4)
    assert k == "scale" and "4 = d_k" in text and "multiplying by √d_k" in text
    k, text = kind(SCORES, SCORES * 2, quantities=Q4)
    assert k == "scale" and "2 = √d_k" in text and "division by √d_k missing" in text
    k, text = kind(SCORES, SCORES / 2, quantities=Q4)
    assert "1/√d_k" in text
    k, text = kind(SCORES, SCORES * 1.37, quantities=Q4)
    assert k == "scale" and "1.37 times" in text and "d_k" not in text


def test_no_scale_is_claimed_from_one_number_or_a_result_that_is_not_proportional():
    assert kind(np.array([2.0]), np.array([8.0]), quantities=Q4)[0] is None
    assert kind(3.0, 12.0, quantities=Q4)[0] is None
    noisy = SCORES * 4 + RNG.normal(size=SCORES.shape) * 0.1
    assert kind(SCORES, noisy, quantities=Q4)[0] is None


def test_axes_reversed_shifted_and_reordered_values_are_named():
    assert kind(SCORES, SCORES.T)[0] == "axes"
    cube = RNG.normal(size=(2, 3, 4))
    k, text = kind(cube, np.swapaxes(cube, 0, 1))
    assert k == "axes" and "axes 0 and 1 swapped" in text
    assert kind(SCORES, SCORES[::-1])[0] == "reordered"
    assert kind(SCORES, np.roll(SCORES, 1, axis=0))[0] == "reordered"
    rows = RNG.normal(size=(5, 2))
    later = np.vstack([RNG.normal(size=(1, 2)), rows[:-1]])
    assert kind(rows, later)[0] == "shifted"
    shuffled = SCORES.ravel()[RNG.permutation(SCORES.size)].reshape(SCORES.shape)
    assert kind(SCORES, shuffled)[0] == "order"
    assert kind(SCORES, SCORES + RNG.normal(size=SCORES.shape))[0] is None


def test_weights_normalised_along_the_wrong_axis_are_named():
    x = np.exp(RNG.normal(size=(3, 3)))
    rows, cols = x / x.sum(-1, keepdims=True), x / x.sum(0, keepdims=True)
    k, text = kind(rows, cols)
    assert k == "normalised" and "axis -2" in text and "axis -1" in text
    assert kind(rows, rows * 0.9 + 0.1 / 3)[0] != "normalised"


def test_a_prefix_that_is_right_is_named_with_the_block_size():
    want = RNG.normal(size=(9, 2))
    got = want.copy()
    got[4:] += 1.5 * RNG.normal(size=(5, 2))
    k, text = kind(want, got, quantities={"block": 4})
    assert k == "prefix" and "from 4 (= block) on" in text


def test_wrong_only_on_the_last_shorter_block_is_named_as_left_over():
    want = RNG.normal(size=(6, 2))
    got = want.copy()
    got[4:] = 0.0
    k, text = kind(want, got, quantities={"d_k": 2, "block": 4})
    assert k == "prefix" and "the last 2 positions, left over after whole blocks of block = 4" \
        in text
    # Whole blocks only (8 = 2 × 4), or a quantity that divides the length: not left over.
    k, text = kind(np.ones((8, 1)), np.r_[np.ones((4, 1)), np.zeros((4, 1))],
                   quantities={"block": 4})
    assert k == "prefix" and "left over" not in text
    k, text = kind(np.ones((6, 1)), np.r_[np.ones((3, 1)), np.zeros((3, 1))],
                   quantities={"block": 3})
    assert "left over" not in text


def test_sign_offset_and_nan_are_named():
    assert kind(SCORES, -SCORES)[0] == "sign"
    assert kind(SCORES, SCORES + 0.75)[0] == "offset"
    bad = SCORES.copy()
    bad[1, 2] = np.nan
    k, text = kind(SCORES, bad)
    assert k == "nan" and "(1, 2)" in text


def test_swapped_outputs_are_named_by_their_names():
    k, text = kind((2.0, 1.5), (1.5, 2.0), outputs=("m", "s"))
    assert k == "swapped" and "(s, m)" in text and "(m, s)" in text
    assert kind((2.0, 1.5), (2.0, 1.7), outputs=("m", "s"))[0] is None


def test_the_right_numbers_of_the_wrong_type_are_named():
    exact = np.array([[Fraction(1, 3), Fraction(2, 3)]], dtype=object)
    k, text = kind(exact, np.array([[1 / 3, 2 / 3]]))
    assert k == "type" and "Fraction" in text
    assert kind(exact, np.array([[0.3, 0.7]]))[0] is None
    assert kind(0.25, torch.tensor(0.25))[0] == "type"
    assert kind(0.25, torch.tensor(0.5))[0] is None
    k, text = kind(SCORES.astype(np.float32), SCORES, tol=FLOAT32)
    assert k == "type" and "float64" in text


def test_a_cache_that_an_append_does_not_change_is_named():
    want = {"after call 1": {"keys": np.ones((1, 2)), "len": 1},
            "after call 2": {"keys": np.ones((2, 2)), "len": 2}}
    stale = {"after call 1": {"keys": np.ones((1, 2)), "len": 1},
             "after call 2": {"keys": np.ones((1, 2)), "len": 1}}
    k, text = kind(want, stale)
    assert k == "stale" and "after call 2" in text
    counts = [{"len": 1}, {"len": 2}]
    assert kind([{"len": 2}, {"len": 5}], counts)[0] == "counts calls"
    assert kind([{"len": 2}, {"len": 5}], [{"len": 3}, {"len": 4}])[0] is None


def live(name, source):
    space = {}
    exec(compile("import numpy as np\n" + source, f"<{name}>", "exec"), space)
    exp = lessons.expectations(name, False)
    return judge(exp, LocalSubject(space[name], exp.info.driver, name), expectations_of=find_expectations)


def test_scores_multiplied_by_the_scale_are_told_so_in_a_short_message():
    verdict = live("attention_scores", "def attention_scores(Q, K):\n"
                   "    return Q @ np.swapaxes(K, -1, -2) * np.sqrt(K.shape[-1])\n")
    assert not verdict.passed and verdict.relation == "scale" and not verdict.mistake
    assert "= d_k times the expected one" in verdict.message
    lines = verdict.message.splitlines()
    assert lines.index("Diagnosis: " + lines[2][len("Diagnosis: "):]) == 2
    assert len(lines) < MESSAGE_LINES


def test_a_nan_names_the_line_of_the_learners_code_that_makes_it():
    space = {}
    exec(compile("import numpy as np\n"
                 "def weights(x):\n"
                 "    e = np.exp(x)\n"
                 "    return e / e.sum()\n", "<weights>", "exec"), space)
    x = np.array([1000.0, 1.0, 999.0])
    want = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
    exp = Expectations(ExerciseInfo("weights", ("x",)), False, [Case((x,))], [Outcome(want)], [])
    with np.errstate(all="ignore"):
        verdict = judge(exp, LocalSubject(space["weights"], exp.info.driver, "weights"), expectations_of=find_expectations)
    assert verdict.relation == "nan", verdict.message
    assert "The first one is made here (overflow encountered in exp):\n  at line 3 of your code" \
        in verdict.message
    assert "overflow" in verdict.message


def test_a_relation_true_on_one_case_only_is_not_claimed():
    # Scaled by 4 on the smallest case only: a coincidence of one case, not the mistake.
    verdict = live("attention_scores", """def attention_scores(Q, K):
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    return S * 4 if S.size <= 3 else S + 1
""")
    assert not verdict.passed and verdict.relation == ""


def test_a_case_note_never_decides_the_diagnosis():
    info = ExerciseInfo("f", ("x",))
    cases = [Case((np.arange(3.0),), note="large values: this note says large")]
    exp = Expectations(info, False, cases, [Outcome(np.arange(3.0))], [])

    class Shifted:
        def problem(self): return ""
        def run(self, cases): return [Outcome(np.arange(3.0) + np.array([0.0, 0.0, 5.0]))]
        def scan(self, rules): return [], set()
        def helper(self, name, exp): return None

    verdict = judge(exp, Shifted())
    assert "overflow" not in verdict.message and "small numbers" not in verdict.message


def test_the_helper_of_a_mismatch_is_read_from_data_not_from_its_message():
    info = ExerciseInfo("g", ("x",))
    case = Case((np.ones(2),))
    exp = Expectations(info, False, [case], [Outcome(np.ones(2))], [],
                       [{"softmax": {"params": ["x"], "salt": "", "entries": [], "calls": []}}])

    helper_exp = Expectations(ExerciseInfo("softmax", ("x",)), False, [case], [Outcome(np.ones(2))], [])

    class WrongHelper:  # the learner's softmax, which fails its own check
        def problem(self): return ""
        def scan(self, rules): return [], set()
        def helper(self, name, exp): return None
        def run(self, cases): return [Outcome(np.zeros(2)) for _ in cases]

    class Composite:
        def __init__(self): self.runs = 0
        def problem(self): return ""
        def scan(self, rules): return [], set()
        def helper(self, name, exp): return WrongHelper()

        def run(self, cases):
            self.runs += 1
            if self.runs == 1:
                return [Outcome(np.zeros(2))]
            # The message starts with another name and a "(": only the field names it.
            return [Outcome(error=ErrorInfo(MISMATCH, "decoy(array 2) is called", "", "softmax"))]

    verdict = judge(exp, Composite(), expectations_of=lambda name: helper_exp)
    assert "gives softmax an input" in verdict.message and "gives decoy" not in verdict.message
    assert verdict.raised_by == "softmax" and verdict.stood_in == ("softmax",)


@pytest.mark.parametrize("name", ["attention_scores", "scaled_dot_product_attention"])
def test_a_right_answer_gets_no_relation(name):
    ref = lessons.get(name).reference
    exp = lessons.expectations(name, False)
    verdict = judge(exp, LocalSubject(ref, exp.info.driver, name), expectations_of=find_expectations)
    assert verdict.passed and verdict.relation == "" and verdict.mistake == ""


def test_an_extra_axis_a_missing_broadcast_and_an_average_over_an_axis_are_named():
    v = RNG.normal(size=(3,))
    k, text = kind(v, v[None, :])
    assert k == "extra axis" and "an extra axis of length 1" in text
    mask = np.tril(np.ones((3, 3), dtype=bool)) & np.array([True, True, False])
    assert kind(np.broadcast_to(mask[-1], (3, 3)).copy(), mask[-1:])[0] == "extra axis"
    k, text = kind(mask, mask[-1:])  # the rows differ: nothing broadcasts, one row is kept
    assert k == "part" and "holds only the last 1 of the expected 3 rows" in text
    heads = RNG.random((1, 2, 3, 3))
    k, text = kind(heads, heads.mean(axis=1))
    assert k == "reduced" and "averaged over axis -3" in text
    assert kind(heads, heads[:, 0])[0] is None


def test_rows_kept_in_part_laid_out_again_or_interleaved_are_named():
    want = RNG.normal(size=(4, 6))
    k, text = kind(want, want[:2])
    assert k == "part" and "only the first 2 of the expected 4 rows: the later ones" in text
    assert kind(want, want[1:3])[0] != "part"  # rows from the middle: not a first or last part
    k, text = kind(want, want.reshape(-1))
    assert k == "reshaped" and "in the shape 24 where 4×6 belongs" in text
    assert kind(want, want.T.reshape(-1))[0] != "reshaped"  # another order: not a reshape
    dealt = want.reshape(4, 3, 2).swapaxes(-1, -2).reshape(4, 6)  # 3 blocks of 2, dealt out
    k, text = kind(want, dealt)
    assert k == "interleaved" and "the expected 3 blocks of 2 are dealt out" in text
    assert kind(want, want[:, ::-1])[0] != "interleaved"
    heads = RNG.normal(size=(2, 3, 5, 2))  # [B, h, T, d]: axes h and d read as one, dealt out
    flat = np.moveaxis(heads, (1, 3), (2, 3)).reshape(2, 5, 6)
    dealt = np.moveaxis(flat.reshape(2, 5, 2, 3).swapaxes(-1, -2).reshape(2, 5, 3, 2),
                        (2, 3), (1, 3))
    k, text = kind(heads, dealt, axes={"": ("B", "h", "T", "d")})
    assert k == "interleaved" and "along axes h and d read as one" in text


def test_nan_only_on_the_rows_expected_to_be_zeros_is_named():
    want = np.array([[0.25, 0.75], [0.0, 0.0], [0.5, 0.5]])
    got = want.copy()
    got[1] = np.nan
    k, text = kind(want, got)
    assert k == "nan rows" and "on every row where the expected one is all zeros" in text
    got[0, 0] = np.nan  # NaN elsewhere too: the plain NaN relation
    assert kind(want, got)[0] == "nan"


def test_a_square_that_sums_to_one_both_ways_does_not_hide_the_wrong_axis():
    want = np.full((2, 2), 0.5)
    got = np.array([[0.75, 0.75], [0.25, 0.25]])
    k, text = kind(want, got)
    assert k == "normalised" and "along axis -2 (down each column)" in text and \
        "along axis -1 (along each row)" in text
    assert kind(want, np.full((2, 2), 0.25))[0] != "normalised"


def test_a_position_that_never_sees_its_own_row_is_named():
    from grader.learner.relations import dependence

    causal = {("X", r): list(range(r, 3)) for r in range(3)}
    strict = {("X", r): list(range(r + 1, 3)) for r in range(3)}
    found = dependence(causal, strict, {"X": 3}, 3)
    assert found.kind == "misses own" and "no position sees its own row of X" in found.text
    # Missing more than its own position, or nothing read at all: said otherwise.
    fewer = {("X", 0): [2], ("X", 1): [], ("X", 2): []}
    assert dependence(causal, fewer, {"X": 3}, 3).kind != "misses own"
    assert dependence(causal, {k: [] for k in causal}, {"X": 3}, 3).kind == "ignores"


def test_a_list_of_loss_tensors_is_named_and_a_wrong_loss_is_not():
    want = [0.5, 0.25]
    k, text = kind(want, [torch.tensor(0.5), torch.tensor(0.25)])
    assert k == "type" and "tensors" in text and ".item()" in text
    assert kind(want, [torch.tensor(0.5), torch.tensor(0.3)])[0] != "type"


def test_dependence_names_what_is_ignored_never_read_or_seen_too_early():
    from grader.learner.relations import dependence

    causal = {("K", 0): [0, 1, 2], ("K", 1): [1, 2], ("K", 2): [2]}
    assert dependence(causal, {key: [] for key in causal}).kind == "ignores"
    sees = dependence(causal, {("K", 0): [0, 1, 2], ("K", 1): [0, 1, 2], ("K", 2): [2]})
    assert sees.kind == "sees" and "position 0" in sees.text
    short = dependence(causal, {("K", 0): [0, 1, 2], ("K", 1): [1, 2], ("K", 2): []},
                       {"K": 3})
    assert short.kind == "misses" and "the last row of K" in short.text
    assert dependence(causal, dict(causal)) is None
    vector = {("K", 0): [0], ("K", 1): [0]}
    assert dependence(vector, {("K", 0): [0], ("K", 1): []}, {"K": 3}, positions=1) is None


def test_an_answer_that_raises_on_one_number_of_axes_is_told_so():
    from grader.learner.cases import ErrorInfo
    from grader.learner.relations import raises_by_axes

    names = ("A", "B")
    cases = [Case((np.ones((2, 2)), np.ones((2, 2))), names=names),
             Case((np.ones((2, 2)), np.ones((3, 2, 2))), names=names),
             Case((np.ones((3, 2, 2)), np.ones((3, 2, 2))), names=names)]
    boom = Outcome(error=ErrorInfo("ValueError", "no"))
    found = raises_by_axes(cases, [Outcome(1), boom, Outcome(1)], 1)
    assert found.kind == "axes count" and "A has 2 axes and B has 3 axes" in found.text
    # Raising on one shape and working on the same shape elsewhere: not about the axes.
    assert raises_by_axes(cases, [boom, boom, boom], 1) is None
    assert raises_by_axes(cases[:2] + [cases[1]], [Outcome(1), boom, Outcome(1)], 1) is None


def test_an_operand_with_no_batch_axis_is_called_a_single_matrix():
    from grader.learner.relations import raises_by_axes

    names = ("A", "B")
    cases = [Case((np.ones((2, 2)), np.ones((3, 2, 2))), names=names),
             Case((np.ones((3, 2, 2)), np.ones((3, 2, 2))), names=names)]
    boom = Outcome(error=ErrorInfo("ValueError", "no"))
    found = raises_by_axes(cases, [boom, Outcome(1)], 0)
    assert "A has 2 axes (a single matrix: no batch axis) and B has 3 axes" in found.text
    # Where the working cases give A two axes too, two axes are not what differs.
    cases.append(Case((np.ones((2, 2)), np.ones((2, 2))), names=names))
    found = raises_by_axes(cases, [boom, Outcome(1), Outcome(1)], 0)
    assert found is not None and "single matrix" not in found.text


def test_a_result_that_depends_on_an_argument_the_expected_one_does_not_is_named():
    from grader.learner.relations import across_cases

    names = ("d_model", "n_heads")
    cases = [Case((4, 1), names=names), Case((4, 2), names=names), Case((8, 2), names=names)]
    want = [Outcome(80), Outcome(80), Outcome(288)]
    found = across_cases(cases, want, [Outcome(80), Outcome(160), Outcome(576)])
    assert found.kind == "depends" and "changes with n_heads: 80 for n_heads = 1 and 160 for " \
        "n_heads = 2 (with d_model = 4)" in found.text and "it is 80 for both" in found.text
    found = across_cases(cases, [Outcome(1), Outcome(2), Outcome(3)],
                         [Outcome(1), Outcome(1), Outcome(2)])
    assert found.kind == "ignores" and "does not change with n_heads" in found.text
    # Right answers, answers wrong alike everywhere, and arrays: nothing to say.
    assert across_cases(cases, want, want) is None
    assert across_cases(cases, want, [Outcome(81), Outcome(81), Outcome(289)]) is None
    arrays = [Case((np.ones(2), 1), names=("x", "n")), Case((np.ones(2), 2), names=("x", "n"))]
    assert across_cases(arrays, [Outcome(1), Outcome(1)], [Outcome(1), Outcome(2)]) is None


def test_operands_read_transposed_are_named_where_they_are_square():
    from grader.learner.relations import substituted, substitutions

    A, B = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.0, 1.0], [5.0, -1.0]])
    case = Case((A, B), names=("A", "B"))
    swaps = [(kind, used, instead, c.args[0] @ c.args[1])
             for kind, used, instead, c in substitutions(case, ("A", "B"))]
    assert [s[:2] for s in swaps] == [("transposed", "A"), ("transposed", "B"),
                                      ("transposed together", "A and B"), ("swap", "A"),
                                      ("swap", "B")]
    found = substituted(swaps, A @ B.T, FLOAT64)
    assert found.key == "transposed:B" and "with B transposed" in found.text
    assert "with A and B transposed: your code reads their rows" in \
        substituted(swaps, A.T @ B.T, FLOAT64).text
    assert substituted(swaps, A @ B, FLOAT64) is None  # the right result is no substitution
    assert substituted(swaps, A @ B + 1, FLOAT64) is None
    # A symmetric matrix reads the same either way: nothing to say about it.
    assert [s[1] for s in substitutions(Case((A + A.T, B), names=("A", "B")), ("A", "B"))
            if s[0] != "swap"] == ["B"]


def test_a_graded_part_failing_its_check_is_said_with_the_diagnosis():
    """A decode_step right in itself, on a cache that keeps the newest rows first: the
    relation names the order, and the failing KVCache is said with it, before the input."""
    from heldout import judge as judge_answer
    from heldout_answers import L07, Wrong

    source = L07 + """
class KVCache:
    def __init__(self):
        self.rows = []

    def __len__(self):
        return len(self.rows)

    def append(self, k, v):
        k, v = key_value_rows(k, v)
        self.rows[:0] = list(zip(k, v))

    @property
    def keys(self):
        return np.array([k for k, _ in self.rows]) if self.rows else None

    @property
    def values(self):
        return np.array([v for _, v in self.rows]) if self.rows else None


def decode_step(x_t, cache, W_q, W_k, W_v):
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)
    X = np.atleast_2d(x)
    t = len(cache)
    cache.append(X @ W_k, X @ W_v)
    K, V = cache.keys, cache.values
    S = (X @ W_q) @ K.T / np.sqrt(W_q.shape[1])
    S = np.where(np.arange(len(K))[None, :] <= (t + np.arange(len(X)))[:, None], S, -np.inf)
    E = np.exp(S - S.max(-1, keepdims=True))
    out = E / E.sum(-1, keepdims=True) @ V
    return out[0] if np.ndim(x) == 1 else out
"""
    verdict = judge_answer(Wrong("newest-first", "decode_step", "", source, ()))
    assert not verdict.passed and verdict.blamed == ("KVCache",), verdict.message
    head = verdict.message.split("Smallest input")[0]
    assert "Diagnosis: in cache.keys, your result is the expected one in reverse order" in head
    assert "Your KVCache fails its own check, and decode_step runs it" in head, verdict.message
    assert verdict.message.count("KVCache fails its own check") == 1


def test_an_argument_used_in_the_place_of_another_is_named_on_a_lesson():
    verdict = live("self_attention", """def self_attention(X, W_q, W_k, W_v):
    X = np.asarray(X, dtype=float)
    Q, K, V = X @ W_q, X @ W_k, X @ W_k
    S = Q @ K.T / np.sqrt(K.shape[-1])
    W = np.exp(S - S.max(-1, keepdims=True))
    W = W / W.sum(-1, keepdims=True)
    return W @ V, W
""")
    assert not verdict.passed and not verdict.mistake, verdict.message
    assert verdict.relation in ("substituted", "ignores"), verdict.message
    assert "W_v" in verdict.message.split("Smallest input")[0]


def test_a_relation_that_fails_to_compute_never_stops_the_check(monkeypatch):
    from grader.learner import engine

    def broken(*args, **kwargs):
        raise RuntimeError("a relation with a bug")

    monkeypatch.setattr(engine, "relations", broken)
    verdict = live("attention_scores", "def attention_scores(Q, K):\n"
                   "    return Q @ np.swapaxes(K, -1, -2) * np.sqrt(K.shape[-1])\n")
    assert not verdict.passed and verdict.relation == ""


TEXT_FIELDS = {"message", "note", "text", "gist", "hint"}
READERS = {"split", "startswith", "endswith", "find", "index", "count", "partition"}


def text_reads(source: str) -> list[str]:
    """Where ``source`` decides from words: ``x in <a>.message``, ``<a>.note.split(...)``,
    a regular expression run on a message, and the like."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and \
                any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            for side in node.comparators:
                if isinstance(side, ast.Attribute) and side.attr in TEXT_FIELDS:
                    found.append(f"line {node.lineno}: `in ….{side.attr}`")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            if node.func.attr in READERS and isinstance(target, ast.Attribute) and \
                    target.attr in TEXT_FIELDS:
                found.append(f"line {node.lineno}: `.{target.attr}.{node.func.attr}(…)`")
            if isinstance(target, ast.Name) and target.id == "re":
                found.append(f"line {node.lineno}: `re.{node.func.attr}(…)`")
    return found


def test_the_engine_decides_nothing_from_message_text():
    from pathlib import Path

    import grader.learner.engine as engine
    import grader.learner.relations as relations

    for module in (engine, relations):
        assert text_reads(Path(module.__file__).read_text()) == [], module.__name__
    # What the gate catches: the three readings the engine once made.
    planted = ('if case.note and "large" in case.note: pass\n'
               'helper = err.message.split("(", 1)[0]\n'
               'also = re.match("x", got)\n')
    assert len(text_reads(planted)) == 3


def test_a_large_result_is_searched_only_for_what_is_cheap_to_find():
    big = RNG.normal(size=(2048, 4))
    assert kind(big, np.roll(big, 7, axis=0))[0] is None  # no search over 2048 rotations
    assert kind(big, big * 3)[0] == "scale"
    small = big[:8]
    assert kind(small, np.roll(small, 3, axis=0))[0] == "reordered"


def test_a_substitution_is_never_named_where_the_two_arguments_are_equal_on_the_case_shown():
    """decode_step with its softmax over the new tokens (axis 0): on the smallest case W_q
    and W_k are both [[1.]], so W_k in W_q's place cannot be why it goes wrong there, though
    that swap happens to give the answer's result on a later case."""
    import causes
    from heldout import judge as judge_answer

    answer = next(w for w in causes.answers("f") if w.id == "f-07-decode-softmax-axis0")
    with np.errstate(all="ignore"):
        verdict = judge_answer(answer)
    assert not verdict.passed
    assert "passed in the place of" not in verdict.message, verdict.message
    shown = verdict.message.split("Smallest input", 1)[1]
    assert "W_q = [[1.]]" in shown and "W_k = [[1.]]" in shown, verdict.message
