"""Running an answer on cases: the one place where a learner's code is called.

A *driver* (data, part of an exercise's description) says how one case runs:

* ``{"kind": "call"}``: ``answer(*args, **kwargs)``; fixtures among the arguments are
  built first (``grader.learner.fixtures``); with ``"state_of": i`` the outcome is the
  parameters of argument i after the call (an answer that loads weights into a module);
  with ``"observe": {"arg": i, "name": "cache", "attrs": [...]}`` the outcome is a dict of
  the result (``"returned"``) and those attributes of argument i after the call
  (``"cache.keys"``), for an answer whose job includes changing an object it is given.
  A case whose ``build`` holds ``{"witness": fixture}`` also builds that fixture after
  the call, where the answer lives, and reports it under ``"witness"`` (lesson 06 redoes
  one run of ``run_ablation`` with the learner's own parts). A case whose ``build`` holds
  ``{"memory_budget": bytes}`` also measures the most memory
  the call holds at once (``grader.learner.env.peak_bytes``) and reports, under
  ``"extra memory"``, whether it stayed within that budget. A case whose ``build`` holds
  ``{"first_bad_number": true}`` runs with NumPy's floating-point errors raised, so the
  error names the line that makes the first NaN or inf. With ``"one_pass"``, the
  arguments it names reach the answer in a form that notices a second pass over them (a
  stream of blocks, arrays that note which rows are read: ``grader.learner.one_pass``);
* ``{"kind": "object", "observe": [...]}``: the answer is a class. The case's ``build``
  constructs it (``args``, ``kwargs``) and lists method calls (``calls``: ``[name,
  [args]]``); after each call the outcome records the attributes ``observe`` names
  (``"len"``: ``len(obj)``), as a dict per call;
* ``{"kind": "module"}``: the case's ``build`` constructs the learner's class (with a
  torch seed), loads the weights it carries if the parameters' names and shapes fit, and
  calls the object on the arguments; optionally the gradients of a probe reach back to
  named parameters. A module never leaves the process it was built in: only its outputs,
  layout and gradients do;
* ``{"kind": "value"}``: the answer is a value typed by the learner (the worksheet).

Options: ``"threads": 1`` (torch on one thread), ``"quiet": true`` (no progress bars).
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
from .env import one_thread, peak_bytes, quiet
from .fixtures import materialise
from .one_pass import hand_over, watched
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
    return ErrorInfo(type(exc).__name__, message[:20_000], where, helper)


# ----------------------------------------------------------------------------- drivers

def _same_input(before, after) -> bool:
    from .compare import to_numpy

    before, after = to_numpy(before), to_numpy(after)
    if isinstance(before, np.ndarray) and isinstance(after, np.ndarray):
        if before.shape != after.shape:
            return False
        if before.dtype == object or after.dtype == object:
            return all(_same_input(b, a) for b, a in zip(before.flat, after.flat))
        return bool(np.array_equal(before, after, equal_nan=before.dtype.kind == "f"))
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


def _named_state(module) -> dict:
    return {name: p.detach().clone() for name, p in module.named_parameters()}


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


def _observed(value):
    """An attribute's value as data at the moment it is read (a view into a buffer that
    changes later must not change what was read)."""
    return _as_data(value)


def _read(obj, attr: str):
    return len(obj) if attr == "len" else getattr(obj, attr)


def kib(n: int) -> str:
    return f"{n / 1024:.0f} KiB"


def _call(answer, data: dict, driver: dict, namespace: dict):
    args = list(materialise(data["args"], namespace))
    kwargs = materialise(data["kwargs"], namespace)
    return _invoke(answer, args, kwargs, data, driver, namespace)


def _invoke(answer, args: list, kwargs: dict, data: dict, driver: dict, namespace: dict):
    budget = (data.get("build") or {}).get("memory_budget")
    with watched(args, driver.get("one_pass"), data.get("names")) as args:
        if (data.get("build") or {}).get("first_bad_number"):
            # Where the answer makes its first NaN or inf: NumPy raises FloatingPointError
            # there (grader.learner.relations.FIRST_BAD_NUMBER), and the error says the line.
            with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
                result = answer(*args, **kwargs)
        elif budget is None:
            result = answer(*args, **kwargs)
        else:
            result, peak = peak_bytes(answer, *args, **kwargs)
    if "state_of" in driver:
        return _named_state(args[driver["state_of"]])
    observe = driver.get("observe")
    witness = (data.get("build") or {}).get("witness")
    if observe is None and budget is None and witness is None:
        return result
    out = {"returned": _observed(result)}
    if witness is not None:  # the same work redone from the learner's own parts
        out["witness"] = _observed(materialise(witness, namespace))
    if observe is not None:
        target = args[observe["arg"]]
        for attr in observe["attrs"]:
            out[f"{observe['name']}.{attr}"] = _observed(_read(target, attr))
    if budget is not None:
        within = peak <= budget
        out["extra memory"] = f"{'at most' if within else 'more than'} {kib(budget)}"
    return out


# A case measured from outside at grading (a memory budget) runs in two requests: its
# inputs are built first and kept here, then the grader resets the kernel's peak memory,
# and the second request sends the arguments listed in ``build["late"]`` and runs it.
_STAGED: dict = {}


def stage(tree, namespace: dict, driver: dict | None = None) -> None:
    data = codec.decode(tree)
    _STAGED.clear()
    # Arguments read once are handed over here, before the window: what notes their
    # reads (grader.learner.one_pass) is not the answer's memory.
    args, _ = hand_over(list(materialise(data["args"], namespace)),
                        (driver or {}).get("one_pass"), data.get("names"))
    _STAGED["case"] = (data, args, materialise(data["kwargs"], namespace))


def run_staged(answer, driver: dict, late: dict, namespace: dict) -> Outcome:
    if "case" not in _STAGED:
        return Outcome(error=ErrorInfo("BridgeError", "no case was staged"))
    data, args, kwargs = _STAGED.pop("case")
    for index, tree in late.items():
        args[int(index)] = materialise(codec.decode(tree), namespace)
    try:
        value = _invoke(answer, args, kwargs, data, driver, namespace)
    except Exception as exc:  # the learner's code may raise anything
        return Outcome(error=error_info(exc, answer))
    if _raw_bytes(value) * 4 // 3 > MAX_OUTCOME:
        return _too_large()
    return Outcome(value=_as_data(value))


def _object(cls, data: dict, driver: dict, namespace: dict):
    build = data["build"] or {}
    obj = cls(*materialise(build.get("args", ()), namespace),
              **materialise(build.get("kwargs", {}), namespace))
    seen = {}
    for i, (method, arguments) in enumerate(build.get("calls", ())):
        getattr(obj, method)(*materialise(arguments, namespace))
        seen[f"after call {i + 1}"] = {attr: _observed(_read(obj, attr))
                                       for attr in driver.get("observe", ())}
    return seen


def _module(cls, data: dict, driver: dict,  # noqa: ARG001 (every driver takes the same arguments)
            namespace: dict):
    import torch

    build = data["build"] or {}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(build.get("seed", 0)))
        obj = cls(*build.get("args", ()), **build.get("kwargs", {}))
    if not isinstance(obj, torch.nn.Module):
        return {"not_module": type(obj).__name__}
    if build.get("dtype") == "float64":
        obj.double()
    state = build.get("state")
    if state is not None:
        layout = {name: list(p.shape) for name, p in obj.named_parameters()}
        if layout != {name: list(np.shape(v)) for name, v in state.items()}:
            return {"layout": layout}
        params = dict(obj.named_parameters())
        with torch.no_grad():
            for name, value in state.items():
                params[name].copy_(torch.as_tensor(np.asarray(value)).to(params[name].dtype))
    obj.eval()
    args = materialise(data["args"], namespace)
    kwargs = materialise(data["kwargs"], namespace)
    grads = build.get("grads")
    if not grads:
        with torch.no_grad():
            return {"output": obj(*args, **kwargs)}
    with torch.enable_grad():
        result = obj(*args, **kwargs)
        item = grads.get("item")
        out = result[item] if item is not None and isinstance(result, (tuple, list)) \
            and len(result) > item else result
        if not isinstance(out, torch.Tensor) or not out.is_floating_point():
            return {"output": result}
        if not out.requires_grad:
            return {"output": result, "graph": False}
        params = dict(obj.named_parameters())
        wanted = [n for n in grads["params"] if n in params]
        probe = torch.linspace(-1.0, 1.0, out.numel(), dtype=out.dtype).reshape(out.shape)
        found = torch.autograd.grad((out * probe).sum(), [params[n] for n in wanted],
                                    allow_unused=True)
        return {"output": result, "graph": True,
                "grads": {n: (g.detach() if g is not None else None) for n, g in zip(wanted, found)}}


DRIVERS = {"call": _call, "module": _module, "object": _object}


def run_one(answer, driver: dict, tree, namespace: dict | None = None) -> Outcome:
    """Run ``answer`` on the case that ``tree`` (a case's kernel data, encoded) stands
    for; ``namespace``: where the learner's other classes are found (default: where
    ``answer`` was defined). Never raises, except for KeyboardInterrupt and SystemExit."""
    if driver.get("kind") == "value":
        return Outcome(value=_as_data(answer))
    data = codec.decode(tree)
    pristine = codec.decode(tree)
    runner = DRIVERS[driver.get("kind", "call")]
    namespace = namespace_of(answer) if namespace is None else namespace
    with contextlib.ExitStack() as stack:
        stand_ins = (data.get("build") or {}).get("stand_ins")
        if stand_ins:  # the learner's helpers set aside (grader.learner.standin)
            stack.enter_context(installed(namespace, stand_ins))
        if driver.get("threads") == 1:
            stack.enter_context(one_thread())
        if driver.get("quiet"):
            stack.enter_context(quiet())
        try:
            value = runner(answer, data, driver, namespace)
        except Exception as exc:  # the learner's code may raise anything
            return Outcome(error=error_info(exc, answer))
    if _raw_bytes(value) * 4 // 3 > MAX_OUTCOME:  # refused before it is encoded
        return _too_large()
    return Outcome(value=_as_data(value), mutated=_mutated(pristine, data))


def _too_large() -> Outcome:
    return Outcome(error=ErrorInfo(
        "ResultTooLarge", f"the result is more than {MAX_OUTCOME // 2**20} MB of data: far "
        "more than this exercise asks for"))


def _as_data(value):
    """The value as plain data (what reaches the checker), whatever the answer returned."""
    try:
        return codec.decode(codec.encode(value, strict=False))
    except (codec.EncodeError, codec.DecodeError, RecursionError) as exc:
        return codec.Opaque("unreadable", f"a result that could not be read as data ({exc})")


def run(answer, driver: dict, cases: list[Case]) -> list[Outcome]:
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
    reply: dict = {"outcomes": []}
    if target not in namespace:
        reply = {"missing": target}
    else:
        answer = namespace[target]
        reply["type"] = type(answer).__name__
        reply["callable"] = callable(answer)
        if request.get("rules") is not None and request["driver"].get("kind") != "value":
            try:
                findings, used = scan(answer, Rules.from_data(request["rules"]))
                reply["findings"] = [[f.what, f.where] for f in findings]
                reply["used"] = sorted(used)
            except Exception:  # noqa: BLE001 (an answer whose code cannot be read)
                pass
        if "stage" in request:
            stage(request["stage"], namespace, request.get("driver"))
            reply["staged"] = True
        if "late" in request:
            outcome = run_staged(answer, request["driver"], request["late"], namespace)
            reply["outcomes"].append(outcome.to_data())
        for tree in request.get("cases", ()):
            outcome = run_one(answer, request["driver"], tree, namespace).to_data()
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
