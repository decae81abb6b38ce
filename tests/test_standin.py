"""A composite is judged on its own: a learner's helper that fails its own check is set
aside, and the reference's sealed results stand in for it (``grader.learner.standin``).

Each rule is fed something wrong as well as something right: a stand-in called with
another input refuses, a sealed table gives nothing to a reader who does not compute the
helper's input, a composite with its own bug still fails (with a note), and a helper
that passes its own check is never set aside.
"""
from __future__ import annotations

import json
import sys
import types

import numpy as np
import pytest

from grader.learner.prose import WIDTH

from grader.course import CheckCall, exercises_checked
from grader.grading.notebook.bridge import Session
from grader.grading.notebook.trusted import Checker
from grader.learner import codec
from grader.learner.checks import verdict
from grader.learner.shortcuts import SourceReader
from grader.learner.standin import MISMATCH, HelperInputMismatch, StandIn, seal
from grader.lessons import expectations, lesson_module, lesson_of, load_all

from conftest import ROOT
from grading_corpus import Lesson

from test_bridge import FakeKernel

ref = lesson_module("02_dot_product_attention", "reference")

NOTE = "the reference's results stood in for"


def flat(message: str) -> str:
    """A message read as one line: its prose is wrapped at the width of a notebook's output."""
    return " ".join(message.split())

STUBS = """
import numpy as np

def softmax(x, axis=-1):
    raise NotImplementedError()

def attention_scores(Q, K):
    raise NotImplementedError()
"""

COMPOSITE = """
def scaled_dot_product_attention(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    if V.ndim < 2 or K.shape[-2] != V.shape[-2] or Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q {Q.shape}, K {K.shape} and V {V.shape} do not fit together")
    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights @ V, weights
"""

# The composite's own bug: the pair in the wrong order.
SWAPPED = COMPOSITE.replace("return weights @ V, weights", "return weights, weights @ V")
# Another input for the helper: the softmax taken over the queries.
OVER_QUERIES = COMPOSITE.replace("axis=-1)", "axis=-2)")
# A composite that tries to read the stand-in's table instead of computing the scores.
READER = """
def scaled_dot_product_attention(Q, K, V):
    table = getattr(softmax, "_table", None) or {}
    boxes = [e["box"] for e in table.get("entries", ())]
    import base64
    raw = np.frombuffer(base64.b64decode(boxes[0]), dtype=np.uint8) if boxes else np.zeros(1)
    V = np.asarray(V, dtype=float)
    if V.ndim < 2:
        raise ValueError("V")
    w = np.resize(raw.astype(float) / 255, (np.shape(Q)[-2], np.shape(K)[-2]))
    return w @ V, w
"""


def namespace(*sources: str) -> dict:
    ns: dict = {}
    for source in sources:
        exec(compile(source, "/learner/cell.py", "exec"), ns)  # the test's own code
    return ns


# ----------------------------------------------------------------------------- the seal

def test_a_stand_in_gives_the_result_for_the_reference_input_however_it_is_spelled():
    S = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    table = seal("softmax", ref.softmax, [((S,), {"axis": -1})], salt="s")
    stand_in = StandIn("softmax", table)
    want = ref.softmax(S)
    # The same call written three ways, and the scores computed in another order.
    again = (S * 3.0) / 3.0 + 0.0
    for got in (stand_in(S), stand_in(S, -1), stand_in(x=S, axis=-1), stand_in(again)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("call", [
    lambda f, S: f(S, axis=0),                 # another axis
    lambda f, S: f(S * (1 + 1e-3)),            # other numbers
    lambda f, S: f(S.T),                       # another shape
    lambda f, S: f(S[:, :2]),
])
def test_a_stand_in_refuses_any_other_input_and_says_what_the_reference_passes(call):
    S = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    stand_in = StandIn("softmax", seal("softmax", ref.softmax, [((S,), {"axis": -1})], salt="s"))
    with pytest.raises(HelperInputMismatch, match=r"the reference calls softmax\(array 2×3, -1\)"):
        call(stand_in, S)


def test_a_sealed_table_holds_no_result_in_the_clear():
    S = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    table = seal("softmax", ref.softmax, [((S,), {"axis": -1})], salt="s")
    text = json.dumps(table)
    plain = codec.dumps(ref.softmax(S))
    assert plain not in text
    for piece in json.loads(plain).values() if isinstance(json.loads(plain), dict) else ():
        assert not isinstance(piece, str) or len(piece) < 8 or piece not in text


def test_the_recording_carries_stand_ins_for_each_composite_case():
    exp = expectations("scaled_dot_product_attention")
    assert exp.helpers() == ["attention_scores", "softmax"]
    assert len(exp.stand_ins) == len(exp.cases)
    # A plain exercise has none.
    assert expectations("softmax").stand_ins == []


# ------------------------------------------------------------------------- the check, in a notebook

def test_a_right_composite_passes_when_its_helpers_are_not_written_and_says_so():
    ns = namespace(STUBS, COMPOSITE)
    assert not verdict("softmax", ns["softmax"]).passed
    for hidden in (False, True):
        v = verdict("scaled_dot_product_attention", ns["scaled_dot_product_attention"],
                    hidden=hidden)
        assert v.passed, v.message
        assert "Your attention_scores and softmax fail their own checks" in v.message, v.message


def test_a_right_composite_passes_with_a_wrong_helper():
    wrong = STUBS.replace("def softmax(x, axis=-1):\n    raise NotImplementedError()",
                          "def softmax(x, axis=-1):\n    return np.exp(x) / np.exp(x).sum()")
    ns = namespace(wrong, COMPOSITE)
    v = verdict("scaled_dot_product_attention", ns["scaled_dot_product_attention"])
    assert v.passed and NOTE in flat(v.message), v.message


def test_a_right_composite_says_what_its_failing_helpers_own_check_says():
    wrong = STUBS.replace("def softmax(x, axis=-1):\n    raise NotImplementedError()",
                          "def softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n    return e / e.sum(axis=axis)")
    ns = namespace(wrong, COMPOSITE)
    own = verdict("softmax", ns["softmax"])
    said = " ".join(own.message.split("Diagnosis: ", 1)[1].split("\n\n", 1)[0].split())
    v = verdict("scaled_dot_product_attention", ns["scaled_dot_product_attention"])
    assert v.passed and f"softmax's own check says: {said}" in flat(v.message), v.message
    assert all(len(line) <= WIDTH for line in v.message.splitlines()), v.message


def test_a_composite_with_its_own_bug_fails_with_its_own_message_and_the_note():
    ns = namespace(STUBS, SWAPPED)
    v = verdict("scaled_dot_product_attention", ns["scaled_dot_product_attention"])
    assert not v.passed
    assert "Diagnosis:" in v.message and NOTE in flat(v.message), v.message
    assert "not implemented" not in v.message


def test_a_composite_that_gives_its_helper_another_input_is_told_so():
    ns = namespace(STUBS, OVER_QUERIES)
    v = verdict("scaled_dot_product_attention", ns["scaled_dot_product_attention"])
    assert not v.passed
    assert "gives softmax an input the reference never gives it" in v.message, v.message
    assert "softmax(array 2×3, -2)" in v.message and "softmax(array 2×3, -1)" in v.message


def test_a_composite_that_reads_the_table_instead_of_computing_earns_nothing():
    ns = namespace(STUBS, READER)
    v = verdict("scaled_dot_product_attention", ns["scaled_dot_product_attention"])
    assert not v.passed, v.message


def test_a_helper_that_passes_its_own_check_is_never_set_aside():
    right = _solution_namespace(Lesson("02_dot_product_attention", ROOT))["softmax"]
    ns = namespace(STUBS, SWAPPED)
    ns["softmax"] = right
    assert verdict("softmax", ns["softmax"]).passed
    v = verdict("scaled_dot_product_attention", ns["scaled_dot_product_attention"])
    assert not v.passed
    # attention_scores is still a stub, so it is set aside; softmax is not.
    assert "Your attention_scores fails its own check" in v.message, v.message


def _only_definitions(text: str) -> bool:
    """Whether a cell only imports and defines (a given helper such as lesson 05's
    attention_shapes), so that running it computes nothing."""
    import ast

    try:
        body = ast.parse(text).body
    except SyntaxError:
        return False
    return bool(body) and all(isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef,
                                                ast.ClassDef)) for node in body)


def _solution_namespace(lesson: Lesson) -> dict:
    """The notebook's first code cell (its imports), the given cells that only define, and
    every solution cell, run in order."""
    first = next(c for c in lesson.source["cells"] if c["cell_type"] == "code")
    text = "".join(first["source"]) if isinstance(first["source"], list) else first["source"]
    setup = "\n".join(l for l in text.splitlines() if not l.startswith("%"))
    # A module of its own, as a notebook's __main__: a class defined here finds its
    # neighbours (the learner's other classes) through its module.
    module = types.ModuleType(f"learner_{lesson.name}")
    sys.modules[module.__name__] = module
    ns = vars(module)
    exec(compile(setup, "/learner/setup.py", "exec"), ns)  # the course's own solutions
    for cell in lesson.source["cells"]:
        given = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        graded = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and not (graded.get("solution") or graded.get("grade")) \
                and _only_definitions(given):
            exec(compile(given, "/learner/given.py", "exec"), ns)
    for gid, code in lesson.answers.items():
        try:
            exec(compile(code, "/learner/answer.py", "exec"), ns)
        except NameError:  # a typed answer that needs the notebook's other cells
            assert lesson.exercise.get(gid) not in load_all() or \
                not load_all()[lesson.exercise[gid]].driver.calls_answer, gid
    return ns


COMPOSITES = [(name, ex) for name, ex in sorted(load_all().items()) if ex.calls is not None]


def solution_runs() -> dict[str, set[str]]:
    """Each exercise -> the other graded parts of its lesson its solution runs (by name)."""
    import ast

    from grader.course import assignments

    exercises, found = load_all(), {}
    for assignment in assignments(ROOT):
        lesson = Lesson(assignment, ROOT)
        # The lesson's own graded parts, and those of earlier lessons its notebook checks
        # again (lesson 09's model runs the learner's parts of lessons 04 to 08).
        graded = {n for n in exercises if lesson_of(n) == assignment} | \
            set(exercises_checked(lesson.source))
        for gid, code in lesson.answers.items():
            name = lesson.exercise.get(gid)
            if name in exercises:
                try:
                    named = {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}
                except SyntaxError:
                    continue
                found[name] = (named & graded) - {name}
    return found


def undeclared(runs: dict[str, set[str]], exercises) -> list[str]:
    """The exercises whose solution runs other graded parts that they declare neither as
    ``calls`` (stand-ins) nor as ``uses`` (named when they fail)."""
    return sorted(name for name, others in runs.items() if others and exercises[name].calls is None
                  and not others <= set(exercises[name].uses))


def test_every_solution_that_runs_another_graded_part_declares_it():
    """A new lesson's composite is found from its solution, not from a list kept here."""
    runs = solution_runs()
    assert not undeclared(runs, load_all())
    assert {name for name, _ in COMPOSITES} <= {name for name, others in runs.items() if others}
    assert len(COMPOSITES) >= 7


def test_the_declaration_check_sees_a_composite_that_declares_nothing():
    from types import SimpleNamespace

    exercises = {"f": SimpleNamespace(calls=None, uses=()), "g": SimpleNamespace(calls=None, uses=("h",)),
                 "k": SimpleNamespace(calls=object(), uses=())}
    assert undeclared({"f": {"h"}, "g": {"h", "m"}, "k": {"h"}}, exercises) == ["f", "g"]


@pytest.mark.parametrize("name, ex", COMPOSITES, ids=[n for n, _ in COMPOSITES])
def test_each_solution_composite_passes_with_every_helper_a_stub(name, ex):
    """The course's own solution, as a learner's, unlocks every stand-in: judged with all
    its helpers unwritten, it passes on the visible and the hidden cases."""
    ns = _solution_namespace(Lesson(lesson_of(name), ROOT))
    helpers = expectations(name).helpers()
    for helper in helpers:
        exec(compile(f"def {helper}(*args, **kwargs):\n    raise NotImplementedError()\n",
                     "/learner/stub.py", "exec"), ns)
    for hidden in (False, True):
        v = verdict(name, ns[name], hidden=hidden)
        assert v.passed, v.message
        assert NOTE in flat(v.message), v.message


# ----------------------------------------------------------------------------- the check at grading

def graded(source: str, hidden: bool):
    kernel = FakeKernel(source)
    reader = SourceReader()
    reader.read(source, "<cell answer>")
    call = CheckCall("scaled_dot_product_attention", "scaled_dot_product_attention", hidden)
    return Checker._check(call, Session(kernel, 0, 1e18), reader.scope())


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_at_grading_a_right_composite_earns_its_points_beside_a_stub_helper(hidden):
    v = graded(STUBS + COMPOSITE, hidden)
    assert v.passed, v.message
    assert NOTE in flat(v.message)


@pytest.mark.parametrize("source", [STUBS + SWAPPED, STUBS + OVER_QUERIES, STUBS + READER],
                         ids=["own bug", "other input", "reads the table"])
def test_at_grading_a_wrong_composite_still_fails_beside_a_stub_helper(source):
    v = graded(source, True)
    assert not v.passed, v.message
    assert MISMATCH not in v.message.splitlines()[0]


# ----------------------------------------------------------------------------- modules

def test_a_module_that_runs_a_failing_graded_part_stands_it_in_and_says_so():
    """A Block built inside TinyTransformer is stood in for when it fails its own check
    (tests/test_standin_reach.py tries every way of building it): the model passes, and
    says that the reference's results stood in for the Block."""
    ns = _solution_namespace(Lesson("06_residual_ablation", ROOT))
    right = verdict("TinyTransformer", ns["TinyTransformer"])
    assert right.passed and "Block" not in right.message, right.message
    exec(compile("class Block(Block):\n"
                 "    def forward(self, x):\n"
                 "        return 2 * super().forward(x)\n", "/learner/block.py", "exec"), ns)
    assert not verdict("Block", ns["Block"]).passed
    v = verdict("TinyTransformer", ns["TinyTransformer"])
    assert v.passed and v.stood_in == ("Block",), v.message
    assert "Your Block fails its own check, so the reference's results stood in" in v.message
    assert all(len(line) <= WIDTH for line in v.message.splitlines()), v.message


def test_a_part_no_stand_in_can_replace_is_named_first_and_said_to_be_so():
    """decode_step runs the learner's own KVCache, which no stand-in replaces: a failure
    names it, before the rest of the message, and says no stand-in was possible."""
    from grader.learner.engine import _with_culprits
    from grader.learner.cases import Verdict
    from types import SimpleNamespace

    class Subject:
        def helper_passes(self, name):
            return name != "KVCache"

    info = SimpleNamespace(name="decode_step", uses=("KVCache",))
    failure = Verdict(False, "decode_step is not right yet.\n\nDiagnosis: something.\n\nSmallest input ...")
    v = _with_culprits(failure, info, Subject(), [])
    lines = v.message.splitlines()
    assert lines[2].startswith("Your KVCache fails its own check, and decode_step runs it, with no "
                               "stand-in possible here"), v.message
    assert lines[4] == "Diagnosis: something." and v.blamed == ("KVCache",)
    assert _with_culprits(failure, info, SimpleNamespace(helper_passes=lambda n: True), []) is failure


# ----------------------------------------------------------------------------- helpers of helpers

SELF_ATTENTION = """
def self_attention(X, W_q, W_k, W_v):
    X = np.asarray(X, dtype=float)
    shapes = [np.shape(W) for W in (W_q, W_k, W_v)]
    if X.ndim < 2 or any(len(s) != 2 or s[0] != X.shape[-1] for s in shapes) \\
            or shapes[0][1] != shapes[1][1]:
        raise ValueError(f"X {X.shape} and the weights do not fit together")
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)
"""


def test_a_helper_that_passes_only_with_its_own_helpers_set_aside_is_set_aside_too():
    """scaled_dot_product_attention passes its own check beside a stub softmax (softmax is
    set aside there), but inside self_attention it runs the stub: so it is set aside."""
    ns = namespace(STUBS, COMPOSITE, SELF_ATTENTION)
    assert verdict("scaled_dot_product_attention", ns["scaled_dot_product_attention"]).passed
    for hidden in (False, True):
        v = verdict("self_attention", ns["self_attention"], hidden=hidden)
        assert v.passed, v.message
        assert "Your scaled_dot_product_attention fails its own check" in v.message, v.message


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_at_grading_a_helper_of_a_helper_is_set_aside_too(hidden):
    source = STUBS + COMPOSITE + SELF_ATTENTION
    kernel = FakeKernel(source)
    reader = SourceReader()
    reader.read(source, "<cell answer>")
    call = CheckCall("self_attention", "self_attention", hidden)
    v = Checker._check(call, Session(kernel, 0, 1e18), reader.scope())
    assert v.passed, v.message
    assert "Your scaled_dot_product_attention fails its own check" in v.message, v.message


def test_an_error_named_like_a_stand_ins_does_not_excuse_a_bad_input():
    """Only a real set-aside excuses a bad input that reaches a helper: an answer that
    raises its own HelperInputMismatch on a bad input, with every helper right, fails."""
    right = _solution_namespace(Lesson("02_dot_product_attention", ROOT))
    forged = """
class HelperInputMismatch(Exception):
    pass

def scaled_dot_product_attention(Q, K, V):
    if np.ndim(V) < 2:
        raise HelperInputMismatch("softmax(...) is called, but the reference calls nothing")
    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights @ V, weights
"""
    exec(compile(forged, "/learner/forged.py", "exec"), right)
    v = verdict("scaled_dot_product_attention", right["scaled_dot_product_attention"])
    assert not v.passed and "should reject this input with a ValueError" in v.message, v.message
