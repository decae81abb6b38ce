"""The check engine: one verdict and one message for an answer, from its expectations.

The order of work, the same for every exercise and wherever the check runs:

1. Forbidden shortcuts, read from the answer's code (``grader.learner.shortcuts``).
2. Every case, from the smallest input to the largest. Each input is a fresh copy, so an
   answer that changes its input is caught and told so.
3. A required name or loop the code never uses; a rule about how much the answer
   computes, measured as CPU time (``grader.learner.work``).
4. Inputs that must raise ``ValueError``.

On success the verdict is one line. On failure the message holds the smallest failing
input, the expected and the actual value, what differs, and a diagnosis: the catalogued
mistake that behaves like the answer on the cases, or a general hint. Tolerances are
documented in ``grader.learner.difference``.

The engine never calls an answer itself and never sees the reference. It gets
:class:`~grader.learner.cases.Expectations` (recorded in a notebook, or computed live by
the grader) and a *subject*: something that runs the answer on cases and reads its code
(in the notebook, the learner's function itself; at grading, a proxy whose calls cross
into the learner's sandboxed kernel as data). So the same rules give the same verdict and
the same message in a notebook, in the kit and in the grader.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Protocol

import numpy as np

from .cases import Case, ErrorInfo, Expectations, MistakeRecord, Outcome, Verdict
from .comparisons import Comparison, Difference
from .difference import to_numpy
from .wording import (case_title, describe_input, fitted, fmt_value, labelled, note_text,
                       shows_values, success_line)
from .relations import (FIRST_BAD_NUMBER, Found, Relation, across_cases, changed_positions,
                        dependence, output_part, probe_cases, raises_by_axes, relations,
                        rescaled_match, reshaped_input, Substitution, substituted)
from .shortcuts import Finding, missing_required_message, shortcut_message
from .prose import wrapped
from .standin import MISMATCH
from .work import Measured
from .work import message as work_message


class Subject(Protocol):
    """The answer under test, wherever it lives."""

    def problem(self) -> str:
        """Why the answer cannot be checked at all (not a function, say), or ""."""

    def run(self, cases: list[Case]) -> list[Outcome]:
        """The answer's outcome on each case."""

    def scan(self, rules) -> tuple[list[Finding], set[str]]:
        """Forbidden uses in the answer's code, and the required names it uses."""

    def helper(self, name: str, exp: Expectations) -> "Subject | None":
        """The learner's graded part ``name`` (a helper this answer runs), as a subject to
        judge against ``exp``, its own expectations; None if the learner has no ``name``.
        The engine judges it (:func:`judge` with ``expectations_of``): a subject never
        judges anything itself."""

    def work(self, work) -> Measured:
        """The CPU time of the call ``work.case`` against the same call with
        ``work.against`` (``grader.learner.cases.Work``), as measured where the subject
        lives: in a notebook by its own process, at grading from outside the sandbox."""


class _Helpers:
    """``subject``, with the learner's graded parts it runs judged here, each once, against
    the expectations ``expectations_of`` gives: the one door through which a lesson's
    expectations reach the engine (the recording in a notebook, the live reference at
    grading). Without a door, no helper can be vouched for (None)."""

    def __init__(self, subject: Subject, expectations_of: Callable[[str], Expectations] | None):
        self.subject, self.expectations_of, self.memo = subject, expectations_of, {}

    def __getattr__(self, attr):
        return getattr(self.subject, attr)

    def helper_passes(self, name: str) -> bool | None:
        """Whether the learner's ``name`` passes its own visible check as it is, its own
        helpers never set aside; None if the learner has no ``name``."""
        if name not in self.memo:
            self.memo[name] = self._judged(name)
        verdict = self.memo[name]
        return verdict if verdict is None or isinstance(verdict, bool) else verdict.passed

    def helper_diagnosis(self, name: str) -> str:
        """The diagnosis of the learner's ``name``'s own failing check, if it has one: what
        the learner would read in that check's cell."""
        self.helper_passes(name)
        verdict = self.memo.get(name)
        if not isinstance(verdict, Verdict) or verdict.passed:
            return ""
        return verdict.cause

    def _judged(self, name: str) -> Verdict | bool | None:
        if self.expectations_of is None:
            return None
        try:
            exp = self.expectations_of(name)
        except Exception:  # noqa: BLE001 (no expectations for the helper: it cannot be vouched for)
            return False
        helper = self.subject.helper(name, exp)
        if helper is None:
            return None
        return judge(exp, helper, expectations_of=self.expectations_of, stand_ins=False)


# ----------------------------------------------------------------------------- diagnosis

def _agrees(cmp: Comparison, case: Case, mine: Outcome, theirs: Outcome,
            expected: Outcome) -> tuple[bool, bool]:
    """(does the mistake behave like the answer here, is that agreement telling). A
    mistake not run on the case (``theirs`` None) neither agrees nor disagrees."""
    if theirs is None:
        return True, False
    if mine.error is not None or theirs.error is not None:
        same = (mine.error is not None and theirs.error is not None
                and mine.error.type == theirs.error.type)
        # Raising where the reference returns a result is telling (a missing batch axis,
        # a check on the wrong axis) only when the error says the same thing: many
        # different mistakes raise a ValueError on the same input.
        return same, same and mine.error.gist == theirs.error.gist
    same = cmp.differ(theirs.value, mine.value, case, against_reference=False) is None
    telling = same and expected.error is None and \
        cmp.differ(expected.value, theirs.value, case, against_reference=True) is not None
    return same, telling


def holds_a_number(value) -> bool:
    """Whether a value holds anything but NaN and inf: a finite number somewhere, or
    something that is not a number."""
    if isinstance(value, dict):
        return any(holds_a_number(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(holds_a_number(v) for v in value)
    try:
        array = np.asarray(to_numpy(value))
    except Exception:  # noqa: BLE001 (not numbers: nothing to be NaN)
        return True
    return not np.issubdtype(array.dtype, np.number) or bool(np.isfinite(array).any())


def diagnose(exp: Expectations, cmp: Comparison, outcomes: list[Outcome],
             failing: int, exact: bool = False) -> MistakeRecord | None:
    """The catalogued mistake that best explains the answer's outcomes, if any: it must
    behave like the answer on the failing case and on at least 80% of all cases, show at
    least one result the reference does not give, and never go wrong where the answer is
    right (an answer may hold a second mistake, but not lack the first one's effect).
    With ``exact``, the same among the error model's mistakes, which must behave like the
    answer on every case they were run on, and give a wrong result that holds a number
    on one at least (an error, NaN or inf alone come from too many mistakes to name one)."""
    best, best_score = None, (0.0, 0)
    right = [o.error is None and e.error is None and
             cmp.differ(e.value, o.value, c, against_reference=True) is None
             for c, o, e in zip(exp.cases, outcomes, exp.expected)]
    for mistake in exp.mistakes:
        if mistake.exact != exact:
            continue
        theirs = mistake.outcomes
        same, _ = _agrees(cmp, exp.cases[failing], outcomes[failing], theirs[failing],
                          exp.expected[failing])
        if not same or any(r and not _agrees(cmp, c, o, t, e)[0] for r, c, o, t, e in zip(
                right, exp.cases, outcomes, theirs, exp.expected)):
            continue
        agree = informative = 0
        for case, mine, wrong, expected in zip(exp.cases, outcomes, theirs, exp.expected):
            s, t = _agrees(cmp, case, mine, wrong, expected)
            agree += s
            informative += t and (not exact or wrong.error is None and holds_a_number(wrong.value))
        score = (agree / len(exp.cases), informative)
        if informative and score[0] >= (1.0 if mistake.exact else 0.8) and \
                (best is None or score > best_score):
            best, best_score = mistake, score
    return best


# ----------------------------------------------------------------------------- messages

def _hint(exp: Expectations) -> str:
    """The exercise's hint, for a failure that nothing names."""
    return f"Hint: {exp.info.hint}" if exp.info.hint else ""


def _wrong_value_message(exp, cmp, case, expected, outcome, diff: Difference, mistake,
                         relation: Relation | None, first_bad: str, blame: str = "") -> str:
    name = exp.info.name
    remark = f". {diff.remark.rstrip('.')}" if diff.remark and mistake is None else ""
    if mistake is not None:
        diag = f"Diagnosis: {mistake.message}"
    elif relation is not None:
        diag = f"Diagnosis: {relation.text}{first_bad}"
    elif diff.diagnoses:
        diag = f"Diagnosis: {diff.text.rstrip('.')}."
    else:
        diag = ""
    if blame and diag:  # said with the diagnosis: it may be where the difference comes from
        diag = f"{diag}\n{blame[0].upper()}{blame[1:]}"
    else:
        diag = diag or (f"Diagnosis: {blame}" if blame else _hint(exp) if diff.hint else "")
    want, got, (right, also) = cmp.show_pair(expected.value, outcome.value, case, diff)
    if also and not right:  # said once, where the differences are named
        remark = f"{remark}; {note_text(([], also))}"
    elif right or also:
        got = f"{got}\n    ({note_text((right, also))})"
    gave = exp.info.driver.result_title(name)
    says_what_differs = not (diff.diagnoses and mistake is None and relation is None)
    return "\n".join([f"{name} is not right yet.", ""] + ([diag, ""] if diag else []) + [
        f"Smallest input where it goes wrong{case_title(case)}:",
        describe_input(case),
        *([f"What differs: {diff.text.rstrip('.')}{remark}."] if says_what_differs else []),
        *([] if says_what_differs and not shows_values() else
          [*labelled("Expected:", want), *labelled(gave, got)]),
    ])


# Relations that say where or how the result differs but not what made it so: an edit of
# the error model that behaves like the answer on every case is named before them. (A
# result "transposed" is one: the edit names the step that transposed it. NaN is not: it
# names the overflow or the 0/0 and the line that made it, which is what a lesson's rule
# on large scores asks to be told.)
SAYS_ONLY_WHERE = frozenset({Found.PART, Found.PREFIX, Found.DEPENDS, Found.SHIFTED, Found.MISSES,
                             Found.MISSES_OWN, Found.SEES, Found.IGNORES, Found.ORDER, Found.AXES})


CONFIRMING = 2  # further failing cases a relation must also hold on, when there are any


def _relation(exp: Expectations, cmp: Comparison, subject: Subject, outcomes: list[Outcome],
              failing: int, diff: Difference) -> tuple[Relation | None, str]:
    """What the answer's result is: an argument reshaped with no axis moved, if it is on
    the first failing cases; else the first relation that holds between the result and
    the expected one on the failing case and, in the same form (``Relation.key``), on 2
    of the next 3 failing cases (or all, if fewer); else, in order, the scores rescaled,
    an argument substituted, what the probes find, and what the cases show side by side.
    For NaN or inf, also where the answer's code makes the first one (the case run again
    with floating-point errors raised)."""
    order = _failing(exp, cmp, outcomes, failing)
    reshaped = [reshaped_input(exp.cases[i], outcomes[i].value, exp.expected[i].value)
                for i in order[:CONFIRMING]]
    if reshaped and all(r is not None and r.key == reshaped[0].key for r in reshaped):
        return reshaped[0], ""
    found = _related(exp, cmp, failing, outcomes[failing], diff)
    later = [i for i in order if i > failing][:CONFIRMING + 1] if found else []
    held: dict[str, int] = {}
    for i in later:  # one of them may be too small to show it (one query: no axis to sum)
        other = cmp.differ(exp.expected[i].value, outcomes[i].value, exp.cases[i])
        for key in {r.key or r.kind for r in _related(exp, cmp, i, outcomes[i], other)}:
            held[key] = held.get(key, 0) + 1
    if later:
        found = [r for r in found if held.get(r.key or r.kind, 0) >= min(CONFIRMING, len(later))]
    if not found:
        meta, got, tol = exp.cases[failing].meta, outcomes[failing].value, exp.cases[failing].tol
        scaled = rescaled_match(meta.scaled, got, tol) if meta.scaled else None
        return (scaled or _substituted(exp, outcomes, failing) or
                _probed(exp, subject, outcomes, failing) or
                across_cases(exp.cases, exp.expected, outcomes)), ""
    found = found[0]
    if found.kind != Found.NAN:
        return found, ""
    own = _probed(exp, subject, outcomes, failing)  # NaN where a position sees nothing
    if own is not None and own.kind == Found.MISSES_OWN:
        return own, ""
    case = exp.cases[failing]
    rerun = subject.run([case.with_build(first_bad_number=True)])
    err = rerun[0].error if rerun else None
    if err is None or err.type != FIRST_BAD_NUMBER or not err.where:
        return found, ""
    return found, f" The first one is made here ({err.message}):\n  at {err.where}"


def _failing(exp: Expectations, cmp: Comparison, outcomes: list[Outcome],
             first: int) -> list[int]:
    """The cases from ``first`` on whose results (not errors) differ from the expected."""
    return [i for i in range(first, len(exp.cases))
            if outcomes[i].error is None and exp.expected[i].error is None and
            cmp.differ(exp.expected[i].value, outcomes[i].value, exp.cases[i]) is not None]


def _substituted(exp: Expectations, outcomes: list[Outcome], failing: int) -> Relation | None:
    """The substitution (``Case.meta.swaps``) the answer's result matches, on the
    failing case or a later probed case (a transposition needs a square input, which the
    smallest case may not have), and on every other case it was recorded for."""
    def gives(swap, j) -> bool | None:
        """Whether the substitution ``swap`` gives the answer's result on case ``j`` (None:
        not recorded there)."""
        for recorded in exp.cases[j].meta.swaps or ():
            if tuple(recorded[:3]) == tuple(swap[:3]):
                return outcomes[j].error is None and \
                    substituted([recorded], outcomes[j].value, exp.cases[j].tol) is not None
        return None

    for i in range(failing, len(exp.cases)):
        swaps, outcome = exp.cases[i].meta.swaps, outcomes[i]
        if not swaps or outcome.error is not None:
            continue
        for swap in swaps:
            found = substituted([swap], outcome.value, exp.cases[i].tol)
            if found is None:
                continue
            # It must explain the case shown: two arguments equal there swap to the same
            # result, so a swap of them cannot be why that case goes wrong; and it must give
            # the answer's result on every other case it was recorded for.
            if swap[0] == Substitution.SWAP and gives(swap, failing) is None and \
                    _equal_there(exp.cases[failing], swap[1], swap[2]):
                continue
            if any(gives(swap, j) is False for j in range(len(exp.cases)) if j != i):
                continue
            return found
    return None


def _equal_there(case, a: str, b: str) -> bool:
    """Whether the arguments named ``a`` and ``b`` hold the same array on ``case``."""
    names = case.names or ()
    if a not in names or b not in names:
        return False
    i, j = names.index(a), names.index(b)
    if max(i, j) >= len(case.args):
        return False
    x, y = to_numpy(case.args[i]), to_numpy(case.args[j])
    return isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.shape == y.shape and \
        bool(np.array_equal(x, y))


def _probed(exp: Expectations, subject: Subject, outcomes: list[Outcome],
            failing: int) -> Relation | None:
    """The dependence relation on the failing probed cases (``Case.meta.depends``): the
    answer is run again with one row of an argument changed at a time, and what changes is
    compared with what the reference changes. What the first such case shows must hold, in
    the same form, on the next one too, if there is one: a softmax saturated by one case's
    numbers, or a single key that takes every weight, can hide a dependence that is there.
    Cases whose probed arguments have more than one row come first (with one row, an
    argument never read and a row missed at its own position look alike). Last rows never
    read need no second case."""
    cmp = exp.info.compare
    probed = [i for i in range(failing, len(exp.cases))
              if exp.cases[i].meta.depends and outcomes[i].error is None and
              (i == failing or exp.expected[i].error is not None or
               cmp.differ(exp.expected[i].value, outcomes[i].value, exp.cases[i]) is not None)]
    rows = {i: len({row for _, row, _ in exp.cases[i].meta.depends}) for i in probed}
    probed = [i for i in probed if rows[i] > 1] + [i for i in probed if rows[i] <= 1]
    if not probed:
        return None
    found = _probe(exp, subject, outcomes, probed[0])
    if found is None or found.key.endswith(":suffix"):
        return found
    if len(probed) > 1:
        again = _probe(exp, subject, outcomes, probed[1])
        return found if again is not None and again.key == found.key else None
    return found if found.kind == Found.IGNORES else None  # no second case: only what is plain


def _probe(exp: Expectations, subject: Subject, outcomes: list[Outcome],
           i: int) -> Relation | None:
    case, outcome = exp.cases[i], outcomes[i]
    depends = case.meta.depends
    if not depends or outcome.error is not None:
        return None
    names = tuple(dict.fromkeys(name for name, _, _ in depends))
    probes = probe_cases(case, names)
    if [(n, r) for n, r, _ in probes] != [(n, r) for n, r, _ in depends]:
        return None
    results = subject.run([p for _, _, p in probes])
    mine = {(n, r): None if res.error is not None else
            changed_positions(outcome.value, res.value, case.tol)
            for (n, r, _), res in zip(probes, results)}
    sizes = {n: np.shape(case.args[case.names.index(n)])[-2]
             for n in names if np.ndim(case.args[case.names.index(n)]) >= 2}
    out = output_part(outcome.value)
    positions = out.shape[-2] if out is not None and out.ndim >= 2 else 1
    return dependence({(n, r): list(moved) for n, r, moved in depends}, mine, sizes, positions)


def _related(exp: Expectations, cmp: Comparison, i: int, outcome: Outcome,
             diff: Difference) -> list[Relation]:
    pair = cmp.related(exp.expected[i].value, outcome.value, diff)
    if pair is None:
        return []
    case = exp.cases[i]
    return relations(pair[0], pair[1], case.tol, case.quantities, exp.info.outputs,
                     exp.info.axes)


def not_implemented_message(name: str, error: ErrorInfo) -> str:
    if error.helper:
        return (f"{name} calls your {error.helper}, which is not implemented yet. Finish "
                f"{error.helper} first; {name} is checked with it.")
    return (f"{name} is not implemented yet: replace `raise NotImplementedError()` with your "
            f"code, then run this cell again.")


def _error_message(exp: Expectations, case: Case, outcome: Outcome, mistake,
                   blame: str = "") -> str:
    err = outcome.error
    name = exp.info.name
    if err.not_implemented:
        return not_implemented_message(name, err)
    where = f"\n  at {err.where}" if err.where else ""
    if mistake is not None:
        diag = [f"Diagnosis: {mistake.message}"] + ([f"{blame[0].upper()}{blame[1:]}"] if blame else [])
    elif blame:
        diag = [f"Diagnosis: {blame}"]
    else:
        diag = [_hint(exp)] if exp.info.hint else []
        if err.is_a("ValueError"):
            diag += ["This input is valid: the reference returns a result for it. If the "
                     "ValueError comes from one of your own checks, its condition is too "
                     "strict; otherwise look at the shapes your code combines."]
        elif err.type == "IndexError":
            diag += ["Check the ranges you loop over and the shapes you index with; this input "
                     "may not be square."]
    return "\n".join([f"{name} raised {err.type}: {err.message}{where}", ""] +
                     ([*diag, ""] if diag else []) +
                     [f"It raised on this input{case_title(case)}:", describe_input(case)])


def _mutation_message(exp: Expectations, case: Case, outcome: Outcome) -> str:
    names = list(case.names) + list(case.kwargs)
    value = None
    if outcome.mutated in names:
        i = names.index(outcome.mutated)
        value = case.args[i] if i < len(case.args) else case.kwargs[outcome.mutated]
    if type(value).__module__.startswith("torch"):
        fix = "Build a new tensor (`x = x + a`, not `x += a`), or work on `x.clone()`."
    else:
        fix = "Build a new array (`x = x + a`, not `x += a`), or work on `x.copy()`."
    return "\n".join([
        f"{exp.info.name} changed its input `{outcome.mutated}` in place.",
        "A function like this must leave its arguments as they were: the caller may use them",
        f"again. {fix}",
        "",
        f"Input{case_title(case)}:",
        describe_input(case),
    ])


def _bad_input_message(exp: Expectations, bad, case: Case, outcome: Outcome) -> str:
    if outcome.error is None:
        got = "returned a result"
    elif outcome.error.is_a("ValueError"):
        got = "raised ValueError with an empty message"
    else:
        got = f"raised {outcome.error.type} ({outcome.error.message})"
    return "\n".join([
        f"{exp.info.name} should reject this input with a ValueError, because {bad.why}.",
        f"Instead it {got}.",
        "",
        "Input:",
        describe_input(case),
        "",
        "Raise ValueError with a message of your own that says what is wrong (which",
        "argument, and what it holds), so the caller sees the problem instead of a wrong answer.",
    ])


# ----------------------------------------------------------------------------- the verdict

def judge(exp: Expectations, subject: Subject, *,
          expectations_of: Callable[[str], Expectations] | None = None,
          stand_ins: bool = True) -> Verdict:
    """The verdict on ``subject`` for the exercise ``exp`` describes.

    ``expectations_of(name)`` gives the visible expectations of another graded part, so
    that the learner's helpers this answer runs are judged here too (:class:`_Helpers`):
    set aside when they fail, and named. With ``stand_ins`` False, a failing helper is
    never set aside: whether the answer works as it is, which is what a composite calling
    it needs."""
    info = exp.info
    subject = subject if isinstance(subject, _Helpers) else _Helpers(subject, expectations_of)
    own = info.driver.judge(exp, subject)
    if own is not None:  # a kind that judges its own way (a value the learner typed)
        return own
    problem = subject.problem()
    if problem:
        return Verdict(False, problem)
    rules = info.rules
    if rules is not None:
        findings, used = subject.scan(rules)
        if findings:
            return Verdict(False, shortcut_message(info.name, findings, rules))
    cmp = info.compare
    cases = exp.cases
    for case in cases:
        case.names = case.names or info.arg_names
    outcomes = subject.run(cases)
    failure = _first_failure(exp, cmp, cases, outcomes, subject)
    set_aside: list[str] = []
    if failure is not None and exp.stand_ins and stand_ins:
        set_aside = [h for h in exp.helpers() if subject.helper_passes(h) is not True]
        if set_aside:
            stood = exp.with_stand_ins(set_aside)
            again = subject.run(stood)
            unreached = _unreached(exp, again, set_aside)
            if unreached and len(unreached) == len(_sealed(exp, set_aside)):
                # No stand-in was used, so none earns anything: the first run's verdict.
                failure = _not_reached(failure, info.name, unreached, subject)
                set_aside = []
            else:
                failure = _stood_in_failure(exp, cmp, stood, again, set_aside, subject)
    if failure is not None:
        return _with_culprits(failure, info, subject, set_aside)
    if rules is not None and rules.required and not used:
        return Verdict(False, missing_required_message(info.name, rules))
    if info.work is not None and hasattr(subject, "work"):
        found = subject.work(info.work)
        if not found.kept(info.work):
            return Verdict(False, work_message(info.name, info.work, found))
    bad_cases = [bad.case for bad in info.bad_inputs]
    for case in bad_cases:
        case.names = case.names or info.arg_names
    run_bad = _without(exp, set_aside, bad_cases) if set_aside else bad_cases
    bad_outcomes = subject.run(run_bad) if bad_cases else []
    for bad, case, outcome in zip(info.bad_inputs, bad_cases, bad_outcomes):
        if set_aside and outcome.error is not None and outcome.error.type == MISMATCH:
            continue  # it relies on a helper set aside to reject the input: that helper's check
        if outcome.error is not None and outcome.error.not_implemented:
            return Verdict(False, not_implemented_message(info.name, outcome.error),
                           raised_by=outcome.error.helper)
        if outcome.error is not None and outcome.error.is_a("ValueError") \
                and outcome.error.message.strip():
            continue
        return Verdict(False, fitted(lambda: _bad_input_message(exp, bad, case, outcome)))
    passed = success_line(info.name, cases, len(info.bad_inputs), exp.hidden)
    if set_aside:
        said = [(h, subject.helper_diagnosis(h)) for h in set_aside]
        told = "".join(f" {h}'s own check says: {d}" for h, d in said if d)
        return Verdict(True, wrapped(f"{passed}\n  {_set_aside_note(set_aside)}{told}"),
                       stood_in=tuple(set_aside))
    return Verdict(True, passed)


def _first_failure(exp: Expectations, cmp: Comparison, cases: list[Case],
                   outcomes: list[Outcome], subject: Subject,
                   set_aside: list[str] = ()) -> Verdict | None:
    """The failing verdict on the first case that goes wrong, or None. With no catalogued
    mistake and no relation, the diagnosis names the learner's graded parts this one runs
    that fail their own checks (``ExerciseInfo.uses``), if any."""
    name = exp.info.name
    for i, (case, expected, outcome) in enumerate(zip(cases, exp.expected, outcomes)):
        err = outcome.error
        if err is not None and err.not_implemented:
            return Verdict(False, not_implemented_message(name, err), raised_by=err.helper)
        said = None if err is None else exp.info.driver.failure(name, case, err)
        if said is not None:  # an error the driver raises itself (an input read twice)
            return Verdict(False, said)
        if err is not None:
            mistake = diagnose(exp, cmp, outcomes, i) or diagnose(exp, cmp, outcomes, i, exact=True)
            by_axes = None if mistake else _safely(raises_by_axes, cases, outcomes, i)
            blamed = _culprits(exp.info, subject, set_aside, err.helper)
            blame = _blame(exp.info.name, blamed)
            if by_axes is not None:
                blame = f"{by_axes.text}" + (f"\n{blame[0].upper()}{blame[1:]}" if blame else "")
            return Verdict(False,
                           fitted(lambda: _error_message(exp, case, outcome, mistake, blame)),
                           mistake=mistake.name if mistake else "", raised_by=err.helper,
                           blamed=blamed, relation=str(by_axes.kind) if by_axes else "",
                           cause=mistake.message if mistake else by_axes.text if by_axes else "")
        if outcome.mutated:
            return Verdict(False, fitted(lambda: _mutation_message(exp, case, outcome)))
        diff = cmp.differ(expected.value, outcome.value, case, against_reference=True)
        if diff:
            mistake = diagnose(exp, cmp, outcomes, i)
            relation, first_bad = (None, "") if mistake is not None else \
                (_safely(_relation, exp, cmp, subject, outcomes, i, diff) or (None, ""))
            if mistake is None and (relation is None or relation.kind in SAYS_ONLY_WHERE):
                # An edit of the reference that behaves like the answer on every case
                # names the cause, where a relation of these kinds names only what differs.
                mistake = diagnose(exp, cmp, outcomes, i, exact=True)
                if mistake is not None:
                    relation, first_bad = None, ""
            blamed = _culprits(exp.info, subject, set_aside)
            blame = _blame(exp.info.name, blamed)
            cause = mistake.message if mistake is not None else \
                f"{relation.text}{first_bad}" if relation is not None else \
                f"{diff.text.rstrip('.')}." if diff.diagnoses else ""
            return Verdict(False, fitted(lambda: _wrong_value_message(
                exp, cmp, case, expected, outcome, diff, mistake, relation, first_bad, blame)),
                           mistake=mistake.name if mistake else "",
                           relation=str(relation.kind) if relation else "", blamed=blamed,
                           cause=" ".join(cause.split()))
    return None


def _safely(find, *args):
    """``find(*args)``, or None if it raises: a relation that cannot be worked out names
    nothing, and never keeps the check from its verdict."""
    try:
        return find(*args)
    except Exception:  # noqa: BLE001 (any input a learner's result may hold)
        return None


def _culprits(info, subject: Subject, set_aside, raised_by: str = "") -> tuple[str, ...]:
    """The learner's graded parts ``info`` runs (``uses``) that fail their own checks."""
    return tuple(h for h in info.uses if h not in set_aside and h != raised_by
                 and subject.helper_passes(h) is False)


def _blame(name: str, failing: tuple[str, ...]) -> str:
    if not failing:
        return ""
    one = len(failing) == 1
    names = failing[0] if one else ", ".join(failing[:-1]) + f" and {failing[-1]}"
    return (f"your {names} {'fails its own check' if one else 'fail their own checks'}, "
            f"and {name} runs {'it' if one else 'them'}, with no stand-in possible here: the "
            f"difference may come from there. Make {'that check' if one else 'those checks'} "
            f"pass first.")


def _first(message: str, note: str) -> str:
    """``message`` with ``note`` in front of its diagnosis, after the headline: a failing
    part is named before anything else is said."""
    head, sep, rest = message.partition("\n\n")
    return f"{head}\n\n{note}" + (f"\n\n{rest}" if sep else "")


def _without(exp: Expectations, helpers: list[str], cases: list[Case]) -> list[Case]:
    """``cases`` run with stand-ins that know no result: any call on one of ``helpers``
    raises, so a composite is judged on what it checks itself."""
    empty: dict = {}
    for tables in exp.stand_ins:
        for h, table in tables.items():
            if h in helpers:
                known = empty.setdefault(h, {**table, "salt": "", "entries": [], "calls": [],
                                             "builds": []})
                for build in table.get("builds", ()):  # a module: built as on any case
                    if build not in known["builds"]:
                        known["builds"].append(build)
    return [c.with_build(stand_ins=empty) for c in cases]


def _with_culprits(failure: Verdict, info, subject: Subject, set_aside: list[str]) -> Verdict:
    """``failure``, ending with the learner's graded parts it runs that fail their own
    checks (``info.uses``) when its diagnosis is about something else (a catalogued mistake
    or a relation): the difference may be theirs, not this exercise's."""
    if failure.blamed:
        return failure
    failing = _culprits(info, subject, set_aside, failure.raised_by)
    if not failing:
        return failure
    note = _blame(info.name, failing)
    return dataclasses.replace(failure, message=_first(failure.message, f"{note[0].upper()}{note[1:]}"),
                               blamed=failing)


def _names(helpers: list[str]) -> str:
    return helpers[0] if len(helpers) == 1 else ", ".join(helpers[:-1]) + f" and {helpers[-1]}"


def _set_aside_note(helpers: list[str]) -> str:
    if len(helpers) == 1:
        return (f"Your {helpers[0]} fails its own check, so the reference's results stood in "
                f"for it wherever this function calls it: one mistake costs only its own points.")
    return (f"Your {_names(helpers)} fail their own checks, so the reference's results stood in "
            f"for them wherever this function calls them: one mistake costs only its own points.")


def _own_code_note(name: str, helpers: list[str]) -> str:
    one = len(helpers) == 1
    return (f"Your {_names(helpers)} {'fails its own check' if one else 'fail their own checks'}, "
            f"so the reference's results stood in for {'it' if one else 'them'} here: what "
            f"follows is about {name}'s own code.")


def _unreached_note(name: str, helpers: list[str]) -> str:
    one = len(helpers) == 1
    it, its = ("it", "its") if one else ("them", "their")
    return (f"Your {_names(helpers)} {'fails its own check' if one else 'fail their own checks'}. "
            f"The check put the reference's results in {its} place, but your {name} never "
            f"reached {it} where the reference calls {_names(helpers)} (it may do that work "
            f"itself, or hold a copy the check cannot replace), so what follows may come from "
            f"your {_names(helpers)}: make {'that check' if one else 'those checks'} pass first.")


def _sealed(exp: Expectations, helpers: list[str]) -> list[str]:
    """Those of ``helpers`` the reference calls on some case (whose stand-ins can be
    reached at all)."""
    return [h for h in helpers if any((tables.get(h) or {}).get("entries") for tables in exp.stand_ins)]


def _unreached(exp: Expectations, outcomes: list[Outcome], helpers: list[str]) -> list[str]:
    """The set-aside helpers the reference calls on some case whose stand-ins the answer
    never called (the kernel's word, which only words the message: the verdict fails
    either way)."""
    called = {h for o in outcomes for h in o.reached}
    return [h for h in _sealed(exp, helpers) if h not in called]


def _stood_in_failure(exp: Expectations, cmp: Comparison, cases: list[Case],
                      outcomes: list[Outcome], helpers: list[str],
                      subject: Subject) -> Verdict | None:
    """The verdict of the run with ``helpers`` set aside: None if it passes; a diagnosis
    if the composite gives a helper an input the reference never gives it; else the
    composite's own failure, with a note that the helpers were set aside."""
    name = exp.info.name
    for case, outcome in zip(cases, outcomes):
        err = outcome.error
        if err is not None and err.type == MISMATCH:
            helper = err.helper
            where = f"\n  at {err.where}" if err.where else ""
            return Verdict(False, "\n".join([
                f"{name} is not right yet.", "",
                f"Diagnosis: {name} gives {helper} an input the reference never gives it: "
                f"{err.message}.{where}",
                "Your own " + helper + " fails its own check, so the reference's results stood "
                "in for it; they are known only for the inputs the reference passes.",
                "",
                f"Smallest input where it goes wrong{case_title(case)}:",
                describe_input(case),
            ]), raised_by=helper, stood_in=tuple(helpers))
    failure = _first_failure(exp, cmp, cases, outcomes, subject, helpers)
    if failure is None:
        return None
    present = [h for h in helpers if subject.helper_passes(h) is False]
    missed = [h for h in _unreached(exp, outcomes, present)]
    if missed:  # a failing helper it reaches another way may be the cause
        message, blamed = _first(failure.message, _unreached_note(name, missed)), tuple(missed)
    elif present:
        message, blamed = _first(failure.message, _own_code_note(name, present)), failure.blamed
    else:
        message, blamed = failure.message, failure.blamed
    return dataclasses.replace(failure, message=message, stood_in=tuple(helpers), blamed=blamed)


def _not_reached(failure: Verdict, name: str, unreached: list[str], subject) -> Verdict:
    """The first run's ``failure``, when the stand-ins of ``unreached`` were never called:
    the learner's own helpers among them (written, and failing) are named first, since
    the difference may be theirs."""
    present = [h for h in unreached if subject.helper_passes(h) is False]
    if not present:
        return failure
    return dataclasses.replace(failure, message=_first(failure.message, _unreached_note(name, present)),
                               blamed=tuple(present))


__all__ = ["Subject", "Verdict", "diagnose", "fmt_value", "judge", "not_implemented_message"]
