"""Running an answer on cases: with :mod:`grader.learner.drivers`, the only code that
calls a learner's code.

A *driver* (part of an exercise's description, :mod:`grader.learner.drivers`) says how
one case runs: a call, an object built and called method by method, or a module; a lesson
may add a kind of its own (:mod:`grader.learner.plugins`).
A case whose ``build`` holds ``"stand_ins"`` runs with those of the learner's helpers
replaced by the reference's sealed results (``grader.learner.standin``).

Fixtures that name another of the learner's classes (``learner_object``) are built from
the namespace the answer was defined in: the notebook's, or, at grading, the kernel's.

The same code runs in three places: in a notebook, on the learner's function; in the
grader, on the reference and on each catalogued mistake; and, at grading, inside the
learner's sandboxed kernel, where :func:`handle` answers the grader's requests. Cases
always travel as data (``grader.learner.codec``), so every run sees a fresh copy with
the same memory layout, and an answer that changes its input in place is caught. The
outcome is data too: a value, or an error's type, message and the learner's line.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
import traceback

import numpy as np

from . import codec
from .cases import Case, ErrorInfo, Outcome
from .drivers import Budgeted, Call, Driver, as_data, build_of, invoke
from .env import one_thread, quiet
from .fixtures import materialise
from .shortcuts import Rules, code_objects, functions_of, scan
from .standin import HelperInputMismatch, installed

MIME = "application/vnd.attention-course.reply+json"
MAX_OUTCOME = 8 * 2**20  # characters of one encoded outcome sent back to the grader


# ----------------------------------------------------------------------------- errors

def _library_dirs() -> tuple[str, ...]:
    """Where installed code lives: the standard library, every site-packages folder on
    the path (a kernel started without ``site``, as at grading, has its venv's only on
    ``sys.path``), and the course's own packages."""
    import sysconfig

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # grader/
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, here, os.path.dirname(os.__file__)}
    dirs |= {sysconfig.get_paths().get(k, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    dirs |= {p for p in sys.path if os.path.basename(p.rstrip("/")) in ("site-packages", "dist-packages")}
    courseware = sys.modules.get("courseware")
    if courseware is not None and getattr(courseware, "__file__", None):
        dirs.add(os.path.dirname(os.path.abspath(courseware.__file__)))
    return tuple(os.path.join(os.path.realpath(d), "") for d in dirs if d)


def _is_library(filename: str, libraries) -> bool:
    if filename.startswith("<frozen") or filename.startswith("<string>"):
        return True
    path = os.path.join(os.path.realpath(filename), "") if os.path.isabs(filename) else filename
    return path.startswith(libraries)


def error_info(exc: BaseException, answer) -> ErrorInfo:
    """``exc`` as data: the learner's innermost line that raised it, and the name of
    another of the learner's functions if the error came from there."""
    own = {code for fn in functions_of(answer) for code in code_objects(fn.__code__)}
    libraries = _library_dirs()
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code in own or not _is_library(code.co_filename, libraries):
            frames.append((code, tb.tb_lineno))
        tb = tb.tb_next
    where, helper = "", ""
    if frames and own:
        code, line = frames[-1]
        if code not in own:  # another function or class of the learner's (a helper)
            helper = code.co_qualname.split(".")[0]
            if helper.startswith("<"):
                helper = ""
        text = traceback.FrameSummary(code.co_filename, line, code.co_name).line or ""
        where = f"line {line} of your code: `{text.strip()}`" if text.strip() else \
            f"line {line} of your code"
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 (a learner's exception whose __str__ raises)
        message = ""
    if isinstance(exc, HelperInputMismatch):  # a stand-in's: which helper, as data
        helper = exc.helper
    bases = tuple(c.__name__ for c in type(exc).__mro__[1:]
                  if c.__module__ == "builtins" and c not in (Exception, BaseException, object))
    return ErrorInfo(type(exc).__name__, message[:20_000], where, helper, bases)


# ----------------------------------------------------------------------------- drivers

def _same_input(before, after) -> bool:
    from .difference import to_numpy

    before, after = to_numpy(before), to_numpy(after)
    if isinstance(before, np.ndarray) and isinstance(after, np.ndarray):
        if before.shape != after.shape:
            return False
        if before.dtype == object or after.dtype == object:
            return all(_same_input(b, a) for b, a in zip(before.flat, after.flat))
        return bool(np.array_equal(before, after, equal_nan=np.issubdtype(before.dtype, np.floating)))
    if isinstance(before, (list, tuple)) and isinstance(after, (list, tuple)):
        return len(before) == len(after) and all(_same_input(b, a) for b, a in zip(before, after))
    if isinstance(before, dict) and isinstance(after, dict):
        return before.keys() == after.keys() and all(_same_input(before[k], after[k]) for k in before)
    try:
        return bool(before == after)
    except Exception:  # noqa: BLE001 (objects without a usable ==)
        return True


def _mutated(pristine: dict, used: dict) -> str:
    names = list(pristine.get("names") or ())
    for i, (before, after) in enumerate(zip(pristine["args"], used["args"])):
        if isinstance(before, codec.Fixture):
            continue
        if not _same_input(before, after):
            return names[i] if i < len(names) else f"argument {i + 1}"
    for key, before in pristine["kwargs"].items():
        if not isinstance(before, codec.Fixture) and not _same_input(before, used["kwargs"].get(key)):
            return key
    return ""


def namespace_of(answer) -> dict:
    """Where ``answer`` was defined: a function's globals (through partials and
    wrappers), a class's module; ``{}`` if neither is found."""
    seen = answer
    for _ in range(20):
        if isinstance(seen, (functools.partial, functools.partialmethod)):
            seen = seen.func
        elif getattr(seen, "__wrapped__", None) is not None:
            seen = seen.__wrapped__
        else:
            break
    found = getattr(seen, "__globals__", None)
    if found is None and isinstance(seen, type):
        module = sys.modules.get(seen.__module__)
        found = vars(module) if module is not None else None
    return found if isinstance(found, dict) else {}


# A case measured from outside at grading (a memory budget) runs in two requests: its
# inputs are built first and kept here, then the grader resets the kernel's peak memory,
# and the second request sends the arguments listed in ``build.late`` and runs it.
# A case whose work is timed (grader.learner.work) is built once and run again and again
# (``again``), its CPU time measured around each request, until the grader drops it.
_STAGED: dict = {}


def stage(tree, namespace: dict, driver: Driver) -> None:
    data = codec.decode(tree)
    _STAGED.clear()
    # The arguments are handed over here, before the window: what a driver wraps them in
    # (arrays that note their reads) is not the answer's memory.
    args = driver.hand_over(list(materialise(data["args"], namespace)), data.get("names"))
    _STAGED["case"] = (data, args, materialise(data["kwargs"], namespace))


def run_staged(answer, driver: Call, late: dict, namespace: dict) -> Outcome:
    if "case" not in _STAGED:
        return Outcome(error=ErrorInfo("BridgeError", "no case was staged"))
    data, args, kwargs = _STAGED.pop("case")
    for index, tree in late.items():
        args[int(index)] = materialise(codec.decode(tree), namespace)
    try:
        value = invoke(answer, args, kwargs, data, driver, namespace)
    except Exception as exc:  # the learner's code may raise anything
        return Outcome(error=error_info(exc, answer))
    if _raw_bytes(value) * 4 // 3 > MAX_OUTCOME:
        return _too_large()
    if isinstance(value, Budgeted):
        return Outcome(value=as_data(value.value), within_budget=value.within)
    return Outcome(value=as_data(value))


def run_again(answer, driver: Call, kwargs: dict, namespace: dict) -> Outcome:
    """The staged case run once more, with ``kwargs`` in place of its own keyword
    arguments, and kept for the next run. Only whether it raised comes back: what counts
    is the time it took, measured from outside."""
    if "case" not in _STAGED:
        return Outcome(error=ErrorInfo("BridgeError", "no case was staged"))
    data, args, own = _STAGED["case"]
    try:
        invoke(answer, list(args), {**own, **materialise(kwargs, namespace)}, data, driver,
               namespace)
    except Exception as exc:  # the learner's code may raise anything
        return Outcome(error=error_info(exc, answer))
    return Outcome(value=None)


def run_one(answer, driver: Driver, tree, namespace: dict | None = None) -> Outcome:
    """Run ``answer`` on the case that ``tree`` (a case's kernel data, encoded) stands
    for; ``namespace``: where the learner's other classes are found (default: where
    ``answer`` was defined). Never raises, except for KeyboardInterrupt and SystemExit."""
    if not driver.calls_answer:
        return Outcome(value=as_data(answer))
    data = codec.decode(tree)
    pristine = codec.decode(tree)
    namespace = namespace_of(answer) if namespace is None else namespace
    reached: set = set()
    with contextlib.ExitStack() as stack:
        stand_ins = build_of(data).stand_ins
        if stand_ins:  # the learner's helpers set aside (grader.learner.standin)
            reached = stack.enter_context(installed(namespace, stand_ins))
        if driver.threads == 1:
            stack.enter_context(one_thread())
        if driver.quiet:
            stack.enter_context(quiet())
        try:
            value = driver.run(answer, data, namespace)
        except Exception as exc:  # the learner's code may raise anything
            return Outcome(error=error_info(exc, answer), reached=tuple(sorted(reached)))
    if _raw_bytes(value) * 4 // 3 > MAX_OUTCOME:  # refused before it is encoded
        return _too_large()
    return Outcome(value=as_data(value), mutated=_mutated(pristine, data),
                   reached=tuple(sorted(reached)))


def _too_large() -> Outcome:
    return Outcome(error=ErrorInfo(
        "ResultTooLarge", f"the result is more than {MAX_OUTCOME // 2**20} MB of data: far "
        "more than this exercise asks for"))


def run(answer, driver: Driver, cases: list[Case]) -> list[Outcome]:
    """``run_one`` on every case, in this process."""
    return [run_one(answer, driver, codec.encode(case.for_kernel())) for case in cases]


# ----------------------------------------------------------------------------- the bridge

def handle(namespace: dict, text: str) -> str:
    """Answer one request of the grader (a JSON text): run the learner's ``target`` from
    ``namespace`` with ``driver`` on each case, and scan it for shortcuts by ``rules``.
    The reply is JSON: one outcome per case, the findings, or what is missing."""
    import json

    request = json.loads(text)
    target = request["target"]
    driver = Driver.from_data(request["driver"])
    reply: dict = {"outcomes": []}
    if target not in namespace:
        reply = {"missing": target}
    else:
        answer = namespace[target]
        reply["type"] = type(answer).__name__
        reply["callable"] = callable(answer)
        if request.get("rules") is not None and driver.calls_answer:
            try:
                findings, used = scan(answer, Rules.from_data(request["rules"]))
                reply["findings"] = [[f.what, f.where] for f in findings]
                reply["used"] = sorted(used)
            except Exception:  # noqa: BLE001 (an answer whose code cannot be read)
                pass
        if "stage" in request:
            stage(request["stage"], namespace, driver)
            reply["staged"] = True
        if "late" in request:
            outcome = run_staged(answer, driver, request["late"], namespace)
            reply["outcomes"].append(outcome.to_data())
        if "again" in request:
            outcome = run_again(answer, driver, codec.decode(request["again"]), namespace)
            reply["outcomes"].append(outcome.to_data())
        if request.get("drop"):
            _STAGED.clear()
        for tree in request.get("cases", ()):
            outcome = run_one(answer, driver, tree, namespace).to_data()
            if len(codec.dumps(outcome, strict=False)) > MAX_OUTCOME:
                outcome = _too_large().to_data()
            reply["outcomes"].append(outcome)
    return codec.dumps(reply, strict=False)


def _raw_bytes(value, depth: int = 0) -> int:
    """The bytes of the arrays and tensors in ``value`` (an outcome), counted without
    encoding them: a result far too large is refused before it costs any time."""
    if depth > 64:
        return 0
    try:
        nbytes = getattr(value, "nbytes", None)
    except Exception:  # noqa: BLE001 (a learner's object whose attribute raises)
        return 0
    if isinstance(nbytes, int) and hasattr(value, "shape"):
        return nbytes
    if isinstance(value, dict):
        return sum(_raw_bytes(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_raw_bytes(v, depth + 1) for v in value)
    return 0


def serve(namespace: dict, text: str) -> None:
    """:func:`handle`, with the reply published as the cell's only display output."""
    from IPython.display import publish_display_data

    publish_display_data({MIME: handle(namespace, text)})
