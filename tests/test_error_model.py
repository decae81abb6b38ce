"""The error model (``grader.lessons.error_model``): its rules edit the reference at named
sites only, its mutants are kept when they behave unlike the reference and each other,
and a mutant is named only when it behaves like the answer on every case.

Each answer below is written as a learner would, from scratch, with one mistake."""
import ast
import textwrap

import numpy as np
import pytest

from grader import lessons
from grader.learner.checks import LocalSubject, find_expectations
from grader.learner.engine import judge
from grader.learner.prose import WIDTH, wrapped
from grader.lessons.error_model import model_mistakes, mutants, rules
from grader.lessons.error_model.search import _functions, edits_of

EXACTLY = "your answer behaves exactly as if"


def verdict(name, answer):
    exp = lessons.expectations(name, False)
    with np.errstate(all="ignore"):
        return judge(exp, LocalSubject(answer, exp.info.driver, name), expectations_of=find_expectations)


def one_pass_without_sqrt(q, K, V, block):
    q, K, V = np.asarray(q, float), np.asarray(K, float), np.asarray(V, float)
    m, s, o = -np.inf, 0.0, np.zeros(V.shape[1])
    for j in range(0, len(K), block):
        x = K[j:j + block] @ q / q.shape[0]          # the square root forgotten
        new = max(m, x.max())
        p = np.exp(x - new)
        s = s * np.exp(m - new) + p.sum()
        o = o * np.exp(m - new) + p @ V[j:j + block]
        m = new
    return o / s


def one_pass_never_divided(q, K, V, block):
    q, K, V = np.asarray(q, float), np.asarray(K, float), np.asarray(V, float)
    m, s, o = -np.inf, 0.0, np.zeros(V.shape[1])
    for j in range(0, len(K), block):
        x = K[j:j + block] @ q / np.sqrt(q.shape[0])
        new = max(m, x.max())
        p = np.exp(x - new)
        s = s * np.exp(m - new) + p.sum()
        o = o * np.exp(m - new) + p @ V[j:j + block]
        m = new
    return o                                          # never divided by s


def tiled_skips_one_too_many(Q, K, V, block_q, block_k, causal=False):
    Q, K, V = np.asarray(Q, float), np.asarray(K, float), np.asarray(V, float)
    T_q, T_k = Q.shape[-2], K.shape[-2]
    out = np.zeros(np.broadcast_shapes(Q.shape[:-2], K.shape[:-2]) + (T_q, V.shape[-1]))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        m = np.full(out.shape[:-2] + (i1 - i0, 1), -np.inf)
        s = np.zeros_like(m)
        o = np.zeros(out.shape[:-2] + (i1 - i0, V.shape[-1]))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 >= i1 - 1:                # the diagonal's own key skipped too
                skipped += 1
                continue
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(Q.shape[-1])
            if causal:
                S = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], S, -np.inf)
            new = np.maximum(m, S.max(axis=-1, keepdims=True))
            shift = np.where(np.isfinite(new), new, 0)
            p = np.exp(S - shift)
            s = s * np.exp(m - shift) + p.sum(axis=-1, keepdims=True)
            o = o * np.exp(m - shift) + p @ V[..., j0:j1, :]
            m = new
        out[..., i0:i1, :] = o / s
    return out, skipped


def outer_from_one(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(1, A.shape[1]):                    # the first term left out
        C = C + np.outer(A[:, p], B[p, :])
    return C


def rows_with_the_wrong_counter(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for p in range(A.shape[1]):
            C[i] += A[i, p] * B[i]                       # row i of B where row p belongs
    return C


def cols_mixing_rows_of_a(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    C = np.zeros((A.shape[0], B.shape[1]))
    for j in range(B.shape[1]):
        for p in range(A.shape[1]):
            C[:, j] += B[p, j] * A[p, :]                 # a row of A where column p belongs
    return C


def attention_returning_the_scores(Q, K, V):
    Q, K, V = (np.asarray(a, float) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, scores                            # the scores where the weights belong


def prefix_average_backwards(X):
    X = np.asarray(X, float)
    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    return W.T @ X                                        # each token with the ones after it


def row_scores_keys_first(X_rows, W_Q, W_K, W_V):
    from fractions import Fraction
    F = np.vectorize(Fraction, otypes=[object])
    X, WQ, WK, WV = (F(np.asarray(a)) for a in (X_rows, W_Q, W_K, W_V))
    Q, K, V = X @ WQ.T, X @ WK.T, X @ WV.T
    S = K @ Q.T                                           # the column convention's layout
    scaled = np.vectorize(lambda s: Fraction(s.numerator // (2 * s.denominator)), otypes=[object])(S)
    P = np.vectorize(lambda s: Fraction(3) ** int(s), otypes=[object])(scaled)
    A = P / P.sum(axis=1, keepdims=True)
    return {"Q": Q, "K": K, "V": V, "scores": S, "scaled": scaled, "A": A, "Z": A @ V}


def rope_scores_without_base(Q, K, positions_q, positions_k, base=10000.0):
    def turn(x, positions, base=10000.0):
        x = np.asarray(x, float)
        d = x.shape[-1]
        angles = np.asarray(positions, float)[:, None] * base ** (-np.arange(0, d, 2) / d)
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = a * np.cos(angles) - b * np.sin(angles)
        out[..., 1::2] = a * np.sin(angles) + b * np.cos(angles)
        return out
    q, k = turn(Q, positions_q), turn(K, positions_k)     # base never passed on, twice
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(np.shape(Q)[-1])


def stats_moving_the_maximum_first(blocks):
    m, s = -np.inf, 0.0
    for block in blocks:
        block = np.asarray(block, float)
        m = max(m, block.max())                  # the maximum moved on before the rescale
        s = s * np.exp(m - m) + np.exp(block - m).sum()
    return float(m), float(s)


def outer_over_the_rows(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[0]):                  # the rows of A, not its columns
        C = C + A[:, p, None] * B[None, p, :]
    return C


@pytest.mark.parametrize("name, answer, words", [
    ("online_softmax_stats", stats_moving_the_maximum_first,
     "used the new running maximum where it needs `m`"),
    ("matmul_outer", outer_over_the_rows, "read the length of axis 0 where it needs axis 1"),
    ("rope_scores", rope_scores_without_base,
     "the turned queries and the turned keys were not given `base`"),
    ("tiled_attention", tiled_skips_one_too_many, "the test for a tile wholly above the diagonal"),
    ("attention_one_pass", one_pass_never_divided, "the final division by the running sum"),
    ("matmul_outer", outer_from_one, "the loop over p started one step late"),
    ("matmul_rows", rows_with_the_wrong_counter, "indexed `B` with the counter of another loop"),
    ("matmul_cols", cols_mixing_rows_of_a, "took a row of `A` where it needs a column"),
    ("scaled_dot_product_attention", attention_returning_the_scores,
     "used the scores where it needs the weights"),
    ("prefix_average", prefix_average_backwards, "were transposed (rows and columns swapped)"),
    # a relation would say only that the result is transposed: the edit says which step
    ("row_convention_attention", row_scores_keys_first, "the scores came out transposed"),
])
def test_an_answer_with_one_edit_is_told_the_edit_and_the_site(name, answer, words):
    v = verdict(name, answer)
    assert not v.passed and EXACTLY in v.message and words in v.message, v.message
    assert v.mistake in {m.name for m in model_mistakes(lessons.get(name))}


def test_an_answer_that_matches_an_edit_on_most_cases_only_is_not_told_it():
    """Exact means every case it was run on: the same outcomes with one case right are
    not named by it, where a catalogued mistake (80% of the cases) could still be."""
    from grader.learner import agent
    from grader.learner.engine import diagnose

    exp = lessons.expectations("attention_one_pass", False)
    mutant = next(m for m in exp.mistakes if m.exact and "square root" in m.message)
    mine = agent.run(one_pass_without_sqrt, exp.info.driver, exp.cases)
    failing = next(i for i, (o, e) in enumerate(zip(mine, exp.expected))
                   if exp.info.compare.differ(e.value, o.value, exp.cases[i]) is not None)
    assert diagnose(exp, exp.info.compare, mine, failing, exact=True) is mutant
    last = max(i for i, t in enumerate(mutant.outcomes) if t is not None and i != failing
               and exp.info.compare.differ(exp.expected[i].value, t.value, exp.cases[i]) is not None)
    mine[last] = exp.expected[last]
    assert diagnose(exp, exp.info.compare, mine, failing, exact=True) is None


def test_only_sites_are_edited_and_each_edit_says_where():
    ref = lessons.get("attention_one_pass").reference
    found = mutants(ref)
    assert found and all(m.site and m.message.startswith(EXACTLY) for m in found)
    for fn in _functions(ref):
        for site, edit, code, line in edits_of(fn):
            source = textwrap.dedent("".join(open(code.co_filename).readlines()[line - 2:line - 1]))
            # the same edit made at two sites names both, the first one where it is made
            said = f"# site: {site}"
            assert source.strip() == said or edit.twice and said.startswith(source.strip() + " and "), \
                (fn.__name__, line, source)


def test_another_graded_function_is_never_edited_for_a_composite():
    """run_ablation runs train and token_similarity: their mistakes are theirs to name."""
    ref = lessons.get("run_ablation").reference
    names = {fn.__name__ for fn in _functions(ref)}
    assert "train" not in names and "token_similarity" not in names


def test_the_mutants_come_in_the_same_order_in_every_process():
    import subprocess
    import sys

    code = ("from grader import lessons; from grader.lessons.error_model import mutants;"
            "print([m.name for m in mutants(lessons.get('tiled_attention').reference)])")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout for seed in ("1", "2")}
    assert len(runs) == 1 and runs != {""}


def test_a_mutant_wrong_only_as_nan_or_inf_is_not_kept(monkeypatch):
    """NaN and inf come from too many mistakes for one edit to be named by them; an edit
    that behaves like the reference everywhere is no mistake at all."""
    from grader.lessons import error_model
    from grader.lessons.error_model.search import Mutant

    ref = lessons.get("softmax").reference

    def fake(name, impl):
        return Mutant(rules.SIGN, name, (), impl, "test")

    made = [fake("nan only", lambda x, axis=-1: np.full(np.shape(x), np.nan)),
            fake("as the reference", ref),
            fake("a number off", lambda x, axis=-1: ref(x, axis) * 2)]
    monkeypatch.setattr(error_model, "mutants", lambda reference: made)
    kept = [m.name for m in error_model._kept(lessons.get("softmax"), made)]
    assert kept == ["sign flipped in a number off"]


def test_a_mutant_that_gives_another_value_when_run_again_is_not_kept():
    """Memory a mutant never writes (``np.empty``) or a draw gives another value on every
    run: what it gave at release would not be what it gives at grading."""
    from grader.lessons import error_model
    from grader.lessons.error_model.search import Mutant

    ref = lessons.get("softmax").reference
    rng = np.random.default_rng(0)
    made = [Mutant(rules.SIGN, "noise", (), lambda x, axis=-1: ref(x, axis) + rng.random(), "test"),
            Mutant(rules.SIGN, "steady", (), lambda x, axis=-1: ref(x, axis) + 1, "test")]
    kept = [m.name for m in error_model._kept(lessons.get("softmax"), made)]
    assert kept == ["sign flipped in steady"]


def test_two_sites_no_case_tells_apart_are_both_named():
    """Naming one of two edits that behave alike would send half the learners to the
    wrong place: the first is kept, with the second, and the message names both."""
    from grader.lessons import error_model
    from grader.lessons.error_model.search import Mutant

    ref = lessons.get("softmax").reference
    twice = lambda x, axis=-1: ref(x, axis) * 2  # noqa: E731
    made = [Mutant(rules.SIGN, "the shift", (), twice, "test"),
            Mutant(rules.SIGN, "the shift", (), lambda x, axis=-1: ref(x, axis) * 2.0, "test"),
            Mutant(rules.LEFT_OUT, "the sum", (("what", "the divisor"),), lambda x, axis=-1: 2 * ref(x, axis), "test")]
    kept = error_model._kept(lessons.get("softmax"), made)
    assert [(k.mutant.site, k.alias.site if k.alias else None) for k in kept] == [("the shift", "the sum")]
    message = error_model.both(kept[0].mutant, kept[0].alias)
    assert "a sign in the shift were flipped, or as if the divisor of the sum were left out" in message
    assert "Or, in the second place: Put it back." in message


def test_grading_takes_the_stored_mutants_and_tells_them_apart_only_if_the_entry_does_not_hold(
        monkeypatch):
    from grader.lessons import error_model

    ex = lessons.get("softmax")
    found = mutants(ex.reference)
    entry = {"fingerprint": error_model.fingerprint(ex, found),
             "kept": [[3, found[3].name], [1, found[1].name]]}

    def never(*_):
        raise AssertionError("the stored entry holds: nothing is told apart again")

    monkeypatch.setattr(error_model, "stored", lambda: {"softmax": entry})
    monkeypatch.setattr(error_model, "_kept", never)
    monkeypatch.setattr(error_model, "_KEPT", {})
    monkeypatch.setattr(error_model, "_FRESH", {})
    assert [m.name for m in error_model.model_mistakes(ex)] == [found[3].name, found[1].name]
    assert error_model.stale_entries() == []

    # The lesson's files or its mutants changed since release: decided afresh, and reported.
    monkeypatch.setattr(error_model, "stored", lambda: {"softmax": {**entry, "fingerprint": "0"}})
    monkeypatch.setattr(error_model, "_KEPT", {})
    monkeypatch.setattr(error_model, "_kept", lambda ex, found: [error_model._Kept(found[2])])
    assert [m.name for m in error_model.model_mistakes(ex)] == [found[2].name]
    assert error_model.stale_entries() == ["softmax"]
    assert error_model._FRESH["softmax"]["kept"] == [[2, found[2].name]]
    assert error_model.fingerprint(ex, found[1:]) != entry["fingerprint"]


def test_release_check_reports_an_exercise_whose_kept_mutants_were_decided_afresh(monkeypatch):
    from grader import course, release
    from grader.lessons import error_model

    monkeypatch.setattr(error_model, "stale_entries", lambda: ["matmul_dot"])
    problems = release.stale_files(course.course_root(), ["01_matmul_views"])
    assert any("kept.json has no current entry for matmul_dot" in p for p in problems), problems


def test_every_stored_entry_names_a_mutant_of_its_exercise():
    from grader.lessons import error_model

    for name, entry in error_model.stored().items():
        found = mutants(lessons.get(name).reference)
        for i, mutant_name, *alias in entry["kept"]:
            assert found[i].name == mutant_name, (name, i)
            assert all(0 <= a < len(found) and found[a].site != found[i].site for a in alias), (name, i)


def test_rules_word_the_same_edit_the_same_way_everywhere():
    one = rules.WRAPPER.message("the scale of the scores", {"words": "square root"})
    other = rules.WRAPPER.message("the norm of the keys", {"words": "square root"})
    assert one.replace("the scale of the scores", "X") == other.replace("the norm of the keys", "X")


def test_an_edit_that_changes_nothing_is_never_a_mistake():
    # softmax's reference: every kept mutant gives some other value on a visible case.
    exp = lessons.expectations("softmax", False)
    for m in model_mistakes(lessons.get("softmax")):
        from grader.learner import agent
        outs = agent.run(m.impl, exp.info.driver, exp.cases)
        assert any(o.error is None and exp.info.compare.differ(e.value, o.value, c) is not None
                   for c, o, e in zip(exp.cases, outs, exp.expected)), m.name


def test_siblings_are_names_made_side_by_side_or_parameters_named_for_q_k_and_v():
    fn = ast.parse(textwrap.dedent("""
        def f(Q, K, V, positions_q, positions_k, x):
            q, k, v = x @ W_q, x @ W_k, x @ W_v
            return q
    """)).body[0]
    found = rules.siblings(fn)
    assert set(found["q"]) == {"k", "v"} and set(found["W_q"]) == {"W_k", "W_v"}
    assert set(found["Q"]) == {"K", "V"} and found["positions_q"] == ("positions_k",)
    assert "x" not in found


def test_prose_is_wrapped_and_values_and_code_are_not():
    long = "Diagnosis: " + "the running sum is not rescaled when the maximum grows " * 3
    array = "Expected: [" + ", ".join(["1.2345"] * 20) + "]"
    code = "  at line 3 of your code: `" + "x = y + " * 9 + "z`"
    out = wrapped("\n".join([long, array, code]))
    lines = out.splitlines()
    assert all(len(line) <= WIDTH for line in lines if not line.startswith("Expected"))
    assert array in lines and " ".join(long.split()) == " ".join(out.split("\nExpected")[0].split())
    assert any(line.strip().startswith("`x = y +") and line.rstrip().endswith("z`") for line in lines)


def test_a_step_left_out_or_done_after_the_next_one_and_a_default_written_out():
    fn = ast.parse(textwrap.dedent("""
        def f(x, base=10000.0):
            y = x * 2
            z = y + base
            return z
    """)).body[0]
    body = fn.body
    edits = list(rules.statement_edits(body, 0, "the sum"))
    names = [e.rule.name for e in edits]
    assert "step left out" in names and "two steps in the other order" in names
    order = next(e for e in edits if e.rule is rules.OUT_OF_ORDER)
    assert [type(s).__name__ for s in order.new] == ["Assign", "Assign", "Return"]
    assert order.new[0] is body[1] and "were done after the sum" in order.rule.message("the double", order.detail)
    assert rules.defaults(fn) == {"base": 10000.0}
    name = body[1].value.right
    (edit,) = rules.constant_edits(name, rules.defaults(fn))
    assert edit.new.value == 10000.0 and "used 10000 where it needs `base`" in \
        edit.rule.message("the sum", edit.detail)
    assert not list(rules.statement_edits(body, 2))  # a return is never left out


def test_wrapping_never_takes_a_message_over_the_line_limit():
    from grader.learner.wording import MESSAGE_LINES

    near = "\n".join(["line"] * (MESSAGE_LINES - 3) + ["word " * 60])
    assert len(wrapped(near).splitlines()) < MESSAGE_LINES or wrapped(near) == near
    assert wrapped(near) == near  # wrapped, it would run to 26 lines: shown as written


def test_minus_infinity_is_read_in_every_spelling_and_a_value_is_named_by_its_site():
    for text in ("-np.inf", "-math.inf", "-torch.inf", 'float("-inf")', "float('-Infinity')"):
        assert rules._is_minus_inf(ast.parse(text, mode="eval").body), text
    for text in ("np.inf", 'float("inf")', "0.0", "-1e9"):
        assert not rules._is_minus_inf(ast.parse(text, mode="eval").body), text
    fill = ast.parse('s.masked_fill(blocked, float("-inf"))', mode="eval").body
    (zero,) = [e for node in ast.walk(fill) for e in rules.expression_edits(node) if e.rule is rules.ZERO_FOR_INF]
    assert "the masked scores used 0 where it needs minus infinity" in zero.rule.message("the masked scores", {})
    start = ast.parse("-np.inf", mode="eval").body
    assert [e.rule for e in rules.start_edits(start)] == [rules.START]  # a running maximum starts from it
    fn = ast.parse(textwrap.dedent("""
        def f(x):
            # site: the scores
            scores = x * 2
            # site: the weights
            weights = scores + 1
            # site: the returned pair
            return scores, weights
    """)).body[0]
    sites = {4: "the scores", 6: "the weights", 8: "the returned pair"}
    known = rules.values(fn, sites)
    assert known == {"scores": (4, "the scores"), "weights": (6, "the weights"), "x": (2, "`x`", True)}
    returned = fn.body[-1].value.elts[1]
    (edit,) = rules.value_edits(returned, 8, known)
    message = edit.rule.message("the returned pair", edit.detail)
    assert "used the scores where it needs the weights" in message and "`" not in message
    # a parameter is replaced by a value computed before, never put in another's place; and
    # a value is never replaced by one computed after it
    x = fn.body[0].value.left
    assert [e.detail for e in rules.value_edits(x, 6, known)] == [{"new": "the scores", "old": "`x`"}]
    assert not list(rules.value_edits(x, 4, known))
    assert all(e.detail["new"] != "`x`" for e in rules.value_edits(returned, 8, known))


def test_a_loop_counter_a_row_for_a_column_and_a_transpose_are_offered_where_they_fit():
    fn = ast.parse(textwrap.dedent("""
        def f(A, B):
            for i in range(2):
                for p in range(3):
                    y = A[i, p] * B[p, :] + A[:, p] @ B
    """)).body[0]
    assert rules.counters(fn) == ("i", "p")
    subs = [n for n in ast.walk(fn) if isinstance(n, ast.Subscript)]
    counter = [ast.unparse(e.new) for n in subs for e in rules.counter_edits(n, ("i", "p"))]
    assert {"A[p, p]", "A[i, i]", "B[i, :]", "A[:, i]"} <= set(counter)
    flips = {ast.unparse(e.new): e.detail for n in subs for e in rules.expression_edits(n)
             if e.rule is rules.ROW_COLUMN}
    assert flips == {"B[:, p]": {"array": "`B`", "got": "column", "want": "row"},
                     "A[p, :]": {"array": "`A`", "got": "row", "want": "column"}}
    product = next(n for n in ast.walk(fn) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult))
    added = [ast.unparse(e.new) for e in rules.expression_edits(product) if e.rule is rules.TRANSPOSED]
    assert added == ["A[:, p].swapaxes(-1, -2) @ B", "A[:, p] @ B.swapaxes(-1, -2)"]
    already = ast.parse("Q @ K.T", mode="eval").body
    assert [ast.unparse(e.new) for e in rules.expression_edits(already) if e.rule is rules.TRANSPOSED] \
        == ["Q.swapaxes(-1, -2) @ K.T"]
