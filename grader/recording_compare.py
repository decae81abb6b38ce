"""Whether two recordings of a lesson's checks say the same, as the checks read them.

A recording (``grader.learner.recording``) is what the live reference computes, with this
machine's BLAS and torch kernels. Another CPU, or another kernel on the same CPU, rounds
the last bits of a float otherwise, so two machines never write the same bytes. Two
recordings say the same when:

* everything that is not a float is equal: the exercise's description, the cases' notes,
  shapes, dtypes and memory layouts, integers, masks, Fractions, error types and
  messages, the stand-ins' parameters and the calls they describe;
* every float that belongs to a case (its inputs, the reference's outcome, each
  catalogued mistake's outcome) agrees with the other recording's within *that case's*
  tolerance, both ways: ``Case.tol``, the rule ``grader.learner.difference`` documents and
  every check applies to a learner's answer;
* every sealed stand-in (``grader.learner.standin``) unlocks, with the inputs the
  reference passes its helper on *this* machine, a result that agrees with what the other
  recording's stand-in unlocks, within the case's tolerance. The sealed bytes are never
  compared: they change with every last bit of the result they hide.

So a recording written on one machine passes ``release --check`` on any other exactly when
a learner there gets the same verdicts from it as from the live reference.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from .learner import codec
from .learner.cases import Case, Expectations
from .learner.difference import FLOAT64, Tolerance

SHOWN = 8  # differences listed per recording; the rest are counted


def differences(recorded: str, fresh: str) -> list[str]:
    """What ``recorded`` (a recording's text) says otherwise than ``fresh``, as readable
    lines naming the exercise, the case and the part; empty when they say the same."""
    try:
        a, b = json.loads(recorded), json.loads(fresh)
    except ValueError as exc:
        return [f"not readable as JSON: {exc}"]
    if not isinstance(a, dict) or not isinstance(b, dict):
        return ["not a recording (a JSON object)"]
    out = []
    for key in sorted((set(a) | set(b)) - {"exercises"}):
        if a.get(key) != b.get(key):
            out.append(f"{key} is {a.get(key)!r}, a fresh release gives {b.get(key)!r}")
    ex_a, ex_b = a.get("exercises") or {}, b.get("exercises") or {}
    if list(ex_a) != list(ex_b):
        out.append(f"the exercises are {list(ex_a)}, a fresh release records {list(ex_b)}")
    for name in [n for n in ex_a if n in ex_b]:
        try:
            exp_a = Expectations.from_data(codec.decode(ex_a[name]))
            exp_b = Expectations.from_data(codec.decode(ex_b[name]))
        except (codec.DecodeError, KeyError, TypeError, ValueError) as exc:
            out.append(f"{name}: not readable: {type(exc).__name__}: {exc}")
            continue
        out += [f"{name}: {line}" for line in exercise_differences(name, exp_a, exp_b)]
    if len(out) > SHOWN:
        out = out[:SHOWN] + [f"... and {len(out) - SHOWN} more"]
    return out


def file_differences(recorded: Path, fresh: Path) -> list[str]:
    try:
        return differences(recorded.read_text(encoding="utf-8"), fresh.read_text(encoding="utf-8"))
    except OSError as exc:
        return [f"not readable: {exc}"]


def exercise_differences(name: str, a: Expectations, b: Expectations) -> list[str]:
    """Where the recorded expectations ``a`` of exercise ``name`` and the fresh ``b`` differ."""
    out = []
    info_a, info_b = a.info.to_data(), b.info.to_data()
    bad_a, bad_b = info_a.pop("bad_inputs"), info_b.pop("bad_inputs")
    found = value_difference(info_a, info_b, FLOAT64, exact=True)
    if found:
        out.append(f"the exercise's description: {found}")
    if a.hidden != b.hidden:
        out.append(f"hidden is {a.hidden}, a fresh release gives {b.hidden}")
    if len(bad_a) != len(bad_b):
        out.append(f"{len(bad_a)} bad inputs, a fresh release has {len(bad_b)}")
    for i, (x, y) in enumerate(zip(bad_a, bad_b)):
        found = _case_difference(Case.from_data(x["case"]), Case.from_data(y["case"]))
        found = found or value_difference(x["why"], y["why"], FLOAT64, exact=True)
        if found:
            out.append(f"bad input {i}: {found}")
    if len(a.cases) != len(b.cases):
        return out + [f"{len(a.cases)} cases, a fresh release has {len(b.cases)}"]
    names_a, names_b = [m.name for m in a.mistakes], [m.name for m in b.mistakes]
    if names_a != names_b:
        out.append(f"the catalogued mistakes are {names_a}, a fresh release has {names_b}")
    else:
        out += [f"mistake {m.name!r}: its message is not the one a fresh release gives"
                for m, n in zip(a.mistakes, b.mistakes) if m.message != n.message]
    for i, (case_a, case_b) in enumerate(zip(a.cases, b.cases)):
        label = f"case {i} ({case_b.note})" if case_b.note else f"case {i}"
        found = _case_difference(case_a, case_b)
        if found:
            out.append(f"{label}: {found}")
            continue
        tol = case_b.tol
        parts = [("the reference's outcome", a.expected[i], b.expected[i])]
        if names_a == names_b:
            parts += [(f"mistake {m.name!r}", m.outcomes[i], n.outcomes[i])
                      for m, n in zip(a.mistakes, b.mistakes)]
        for what, x, y in parts:
            if x is None or y is None:  # a mistake not run on the case
                if (x is None) != (y is None):
                    out.append(f"{label}, {what}: run on it in one release and not the other")
                continue
            found = value_difference(x.to_data(), y.to_data(), tol)
            if found:
                out.append(f"{label}, {what}: {found}")
    out += stand_in_differences(name, a, b)
    return out


def _case_difference(a: Case, b: Case) -> str | None:
    if a.tol != b.tol:
        return f"the tolerance is {a.tol}, a fresh release gives {b.tol}"
    da, db = a.to_data(), b.to_data()
    found = value_difference({k: v for k, v in da.items() if k in ("args", "kwargs", "build")},
                             {k: v for k, v in db.items() if k in ("args", "kwargs", "build")},
                             b.tol)
    if found:
        return f"the input: {found}"
    found = value_difference({k: v for k, v in da.items() if k not in ("args", "kwargs", "build")},
                             {k: v for k, v in db.items() if k not in ("args", "kwargs", "build")},
                             b.tol)
    return f"the case's description: {found}" if found else None


# ----------------------------------------------------------------------------- stand-ins

def stand_in_differences(name: str, a: Expectations, b: Expectations) -> list[str]:
    """The stand-ins of a composite, compared by what they unlock with the inputs the
    reference passes each helper here."""
    from .learner.standin import ModuleCall, StandIn, module_result
    from .lessons import get, helper_calls

    if not a.stand_ins and not b.stand_ins:
        return []
    if len(a.stand_ins) != len(b.stand_ins):
        return [f"stand-ins for {len(a.stand_ins)} cases, a fresh release has {len(b.stand_ins)}"]
    out = []
    ex = get(name)
    for i, (tables_a, tables_b, case) in enumerate(zip(a.stand_ins, b.stand_ins, b.cases)):
        label = f"case {i}, the stand-in of"
        if list(tables_a) != list(tables_b):
            out.append(f"case {i}: stand-ins for {list(tables_a)}, a fresh release has "
                       f"{list(tables_b)}")
            continue
        calls = helper_calls(ex, case)
        for helper, table_a in tables_a.items():
            table_b = tables_b[helper]
            shape_a, shape_b = _table_shape(table_a), _table_shape(table_b)
            entries = len(table_a.get("entries", ())), len(table_b.get("entries", ()))
            if shape_a != shape_b or entries[0] != entries[1]:
                out.append(f"{label} {helper}: it is sealed for {table_a.get('calls')}, a fresh "
                           f"release for {table_b.get('calls')}")
                continue
            for call in calls.get(helper, []):
                if isinstance(call, ModuleCall):
                    unlock = [functools.partial(module_result, helper, t, call)
                              for t in (table_a, table_b)]
                else:
                    unlock = [functools.partial(_call_copied, StandIn(helper, t), *call)
                              for t in (table_a, table_b)]
                found = _unlock_difference(*unlock, case.tol)
                if found:
                    out.append(f"{label} {helper}: {found}")
                    break
    return out


def _table_shape(table: dict) -> dict:
    """What a stand-in's table says apart from its sealed bytes: its kind, its helper's
    parameters, how a module is built, the calls it describes, and which fields its
    entries carry (a table sealed another way is another table)."""
    shape = {k: table.get(k) for k in ("kind", "init", "builds", "params", "calls")}
    shape["fields"] = sorted({k for e in table.get("entries", ()) for k in e})
    return shape


def _call_copied(stand_in, args: tuple, kwargs: dict):
    copy = codec.decode(codec.encode([list(args), dict(kwargs)]))
    return stand_in(*copy[0], **copy[1])


def _unlock_difference(recorded, fresh, tol: Tolerance) -> str | None:
    """``recorded()`` and ``fresh()``, each unlocking a stand-in, compared."""
    results = []
    for which, unlock in (("the recorded one", recorded), ("a fresh one", fresh)):
        try:
            results.append(unlock())
        except Exception as exc:  # noqa: BLE001 (a stale or damaged table: say what it raised)
            return (f"{which} does not unlock with the input the reference passes it here: "
                    f"{type(exc).__name__}: {exc}")
    found = value_difference(results[0], results[1], tol)
    return f"what it unlocks: {found}" if found else None


# ----------------------------------------------------------------------------- values

def value_difference(a, b, tol: Tolerance, *, exact: bool = False, where: str = "") -> str | None:
    """``None`` when the values ``a`` and ``b`` (data: what ``codec.decode`` gives) say the
    same, floats within ``tol`` both ways, or exactly when ``exact``; otherwise the first
    difference, with where it is."""
    at = f" at {where}" if where else ""
    if _kind(a) != _kind(b):
        return f"{_kind(a)}{at}, a fresh release has {_kind(b)}"
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"the keys{at} are {list(a)}, a fresh release has {list(b)}"
        for key in a:
            found = value_difference(a[key], b[key], tol, exact=exact, where=f"{where}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{len(a)} items{at}, a fresh release has {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = value_difference(x, y, tol, exact=exact, where=f"{where}[{i}]")
            if found:
                return found
        return None
    if isinstance(a, codec.Fixture):
        if (a.kind, a.describe) != (b.kind, b.describe):
            return (f"the fixture{at} is {a.describe or a.kind}, a fresh release has "
                    f"{b.describe or b.kind}")
        return value_difference(a.params, b.params, tol, exact=exact, where=f"{where}.params")
    if _is_tensor(a):
        a, b = _tensor_array(a), _tensor_array(b)
    if isinstance(a, (float, np.floating)):
        a, b = np.array(a), np.array(b)
    if isinstance(a, np.ndarray):
        return _array_difference(a, b, tol, exact, where)
    return None if a == b else f"{_short(a)}{at}, a fresh release has {_short(b)}"


def _is_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def _tensor_array(t) -> np.ndarray:
    t = t.detach().cpu()
    return (t.float() if str(t.dtype) == "torch.bfloat16" else t).numpy()


def _kind(x) -> str:
    """What a value is, as far as a check can tell: its type, and a tensor's or NumPy
    scalar's dtype."""
    if _is_tensor(x):
        return f"a tensor of dtype {str(x.dtype).removeprefix('torch.')}"
    if isinstance(x, np.generic):
        return f"a NumPy {x.dtype} number"
    if isinstance(x, np.ndarray):
        return "an array"
    name = type(x).__name__
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


def _array_difference(a: np.ndarray, b: np.ndarray, tol: Tolerance, exact: bool,
                      where: str) -> str | None:
    at = f" at {where}" if where else ""
    if a.shape != b.shape or a.dtype != b.dtype:
        return (f"an array of shape {a.shape} and dtype {a.dtype}{at}, a fresh release has "
                f"shape {b.shape} and dtype {b.dtype}")
    if (a.flags.c_contiguous, a.flags.f_contiguous) != (b.flags.c_contiguous, b.flags.f_contiguous):
        return f"the array{at} is laid out in memory otherwise than in a fresh release"
    if a.dtype == object:
        for idx in np.ndindex(a.shape):
            found = value_difference(a[idx], b[idx], tol, exact=exact, where=f"{where}{list(idx)}")
            if found:
                return found
        return None
    if not np.issubdtype(a.dtype, np.floating) or exact:
        same = np.array_equal(a, b, equal_nan=np.issubdtype(a.dtype, np.inexact))
        if same:
            return None
        idx = tuple(int(i) for i in np.argwhere(a != b)[0]) if a.ndim else ()
        return f"{_short(a[idx])}{at}{_index(idx)}, a fresh release has {_short(b[idx])}"
    return float_difference(a, b, tol, at)


def float_difference(a: np.ndarray, b: np.ndarray, tol: Tolerance, at: str = "") -> str | None:
    """``None`` when the float arrays ``a`` and ``b`` (same shape) agree within ``tol``
    both ways (either taken as the expected value): NaN only where the other has NaN,
    infinities equal, and ``|a - b| <= atol + rtol * |expected|``."""
    x, y = a.astype(np.float64), b.astype(np.float64)
    ok = (np.isclose(x, y, rtol=tol.rtol, atol=tol.atol(y), equal_nan=True)
          & np.isclose(y, x, rtol=tol.rtol, atol=tol.atol(x), equal_nan=True))
    if ok.all():
        return None
    with np.errstate(invalid="ignore"):
        err = np.where(ok, 0.0, np.nan_to_num(np.abs(x - y), nan=np.inf, posinf=np.inf))
    idx = np.unravel_index(int(np.argmax(err)), err.shape) if err.ndim else ()
    idx = tuple(int(i) for i in idx)
    count = f"{int((~ok).sum())} of {ok.size} entries differ, the largest by" if ok.ndim else \
        "differs by"
    return (f"{count} {float(err[idx]):.3g}{at}{_index(idx)} ({x[idx].item()!r} here, "
            f"{y[idx].item()!r} in a "
            f"fresh release), more than the case's tolerance allows (rtol {tol.rtol:g}, atol "
            f"{tol.atol_scale:g} of the largest entry, at least {tol.atol_scale:g})")


def _index(idx: tuple) -> str:
    return f", index {idx}" if idx else ""


def _short(x) -> str:
    text = repr(x.item() if isinstance(x, np.generic) else x)
    return text if len(text) <= 80 else text[:77] + "..."
