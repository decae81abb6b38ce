"""Relations: what a wrong result *is*, compared with the expected one, in plain words.

A catalogued mistake names what someone thought of; a relation names what the
difference is, whatever the mistake behind it. Each relation below is tried, in order, on
the smallest failing case, and the first that holds is the message's diagnosis:

* **type**: the right numbers of the wrong type (floats for Fractions, an array or a
  tensor for a number, float64 for float32, numbers for a mask);
* **swapped**: an entry of a tuple result holds another entry's expected value;
* **nan**: NaN or inf where the expected result is finite (the check then asks the
  learner's code where the first one is made: ``FIRST_BAD_NUMBER``), or NaN on exactly
  the rows the expected result fills with zeros;
* **scale**: every entry is c times the expected one, with c named when it is one of the
  case's quantities (``Case.quantities``), its square root, square or inverse, or 2;
* **sign**, **offset**: the expected result negated, or moved by a constant;
* **axes**: the expected values with two axes swapped (transposed), the axes named
  where the exercise names them (``Exercise.axes``);
* **diagonal**: entries that differ only on one diagonal (j = i, j = i + 1);
* **inverted**: a mask True exactly where the expected one is False;
* **normalised**: slices that sum to 1 along another axis than the expected ones;
* **shifted**: the expected result moved by one position along an axis (off by one);
* **prefix**: right on the first rows along an axis, wrong from some row on (named when
  the wrong rows are the last, shorter block);
* **reordered**, **interleaved**, **reshaped**, **order**: exactly the expected values,
  reversed or rotated along an axis (new rows put in front), dealt out block by block,
  in another shape, or in another order;
* **part**: only the first or the last rows of the expected result;
* **extra axis**, **reduced**: the right values with an axis of length 1 too many or
  missing, or not expanded to the full shape; or averaged (summed) over an axis that
  should be kept;
* **stale**, **counts calls**: an object's attribute that a call did not change, or
  that counts the calls (a cache after each append).

Besides these, the engine tries relations that need the case or several cases: the
result as an argument reshaped with no axis moved (:func:`reshaped_input`), a result that
changes with an argument the expected one does not depend on (:func:`across_cases`), an
error on every input with one number of axes (:func:`raises_by_axes`), and the probes
below (an argument ignored, rows never read or seen too early, a position that never sees
its own row, an argument used in another's place or transposed).

Every relation works on data only (arrays, tensors, numbers, tuples), so it says the same
in a notebook and at grading. A relation states a fact about the two results and never
shows the solution's code.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

import numpy as np

from .difference import FLOAT64, Tolerance, difference, to_numpy
from .validation import shape_str

# Above this many entries, a result is only tested for a factor, a sign and an offset: the
# searches over axes, rotations and positions cost more than a check may spend.
SEARCHED_ENTRIES = 4096

# The error type the driver reports when a case run under ``build["first_bad_number"]``
# makes its first NaN or inf (NumPy's and torch's floating-point checks turned on).
FIRST_BAD_NUMBER = "FloatingPointError"


class Found(StrEnum):
    """The kinds of relation (a verdict's ``relation`` holds one, as text)."""

    AXES = "axes"
    AXES_COUNT = "axes count"
    COUNTS_CALLS = "counts calls"
    DEPENDS = "depends"
    DIAGONAL = "diagonal"
    EXTRA_AXIS = "extra axis"
    IGNORES = "ignores"
    INTERLEAVED = "interleaved"
    INVERTED = "inverted"
    MISSES = "misses"
    MISSES_OWN = "misses own"
    NAN = "nan"
    NAN_ROWS = "nan rows"
    NORMALISED = "normalised"
    OFFSET = "offset"
    ORDER = "order"
    PART = "part"
    PREFIX = "prefix"
    REDUCED = "reduced"
    REORDERED = "reordered"
    RESHAPED = "reshaped"
    SCALE = "scale"
    SCALED_SCORES = "scaled scores"
    SEES = "sees"
    SHIFTED = "shifted"
    SIGN = "sign"
    STALE = "stale"
    SUBSTITUTED = "substituted"
    SWAPPED = "swapped"
    TYPE = "type"


class Substitution(StrEnum):
    """How one probed argument stands in another's place (:func:`substitutions`)."""

    SWAP = "swap"  # one argument in the place of another of the same shape
    TRANSPOSED = "transposed"  # a square argument transposed
    TRANSPOSED_TOGETHER = "transposed together"  # every square probed argument transposed


@dataclass(frozen=True)
class Relation:
    """A relation that holds: its ``kind`` (data a test or a report can read) and the
    sentence a message shows."""

    kind: Found
    text: str
    # What must hold on every failing case for the relation to count (the kind, and the
    # named factor, the axis or the direction): a factor that only one case shows is
    # coincidence, not the mistake.
    key: str = ""


def _array(x) -> np.ndarray | None:
    """``x`` as a float64 array, if it holds numbers: floats, ints, Fractions (exact
    values, read as the nearest floats) or a mask (True as 1)."""
    x = to_numpy(x)
    if isinstance(x, (bool, np.bool_, str)) or x is None:
        return None
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        return None
    if a.dtype == object and a.size and all(isinstance(v, (Fraction, int)) and
                                            not isinstance(v, bool) for v in a.flat):
        return np.array([float(v) for v in a.flat]).reshape(a.shape)
    if a.dtype.kind not in "biuf":
        return None
    return a.astype(np.float64)


def _close(got: np.ndarray, want: np.ndarray, tol: Tolerance) -> bool:
    if got.shape != want.shape:
        return False
    with np.errstate(all="ignore"):
        return bool(np.all(np.isclose(got, want, rtol=tol.rtol, atol=tol.atol(want),
                                      equal_nan=True)))


def _loose(tol: Tolerance) -> Tolerance:
    """A relation reads a value that went through other arithmetic than the reference's
    (a factor, a transpose): it allows a little more rounding than the check itself."""
    return Tolerance(max(tol.rtol * 10, 1e-6), max(tol.atol_scale * 10, 1e-8))


def _num(c: float) -> str:
    if abs(c - round(c)) < 1e-9:
        return str(int(round(c)))
    for d in (2, 3, 4, 8):
        if abs(c * d - round(c * d)) < 1e-9:
            return f"{int(round(c * d))}/{d}"
    return f"{c:.4g}"


# ----------------------------------------------------------------------------- scale

def _factors(quantities: dict[str, float]) -> list[tuple[float, str, str]]:
    """Candidate factors: (c, how to read it, what it suggests). A quantity named as a
    root ("√d_k", a scale) comes first: its square and its inverse say the most."""
    out = []
    roots = [(n, q) for n, q in quantities.items() if n.startswith("√")]
    for name, q in roots:
        root = name[1:]
        out += [(q * q, root, f"that is what multiplying by {name} where you should divide "
                              f"by it gives"),
                (1 / (q * q), f"1/{root}", f"that is what dividing by {root} instead of {name} "
                                           f"(or by {name} twice) gives"),
                (q, name, f"is the division by {name} missing?"),
                (1 / q, f"1/{name}", f"is there one division by {name} too many?")]
        for other, y in quantities.items():
            if other != name and not other.startswith("√"):
                out += [(q / math.sqrt(y), f"{name}/√{other}",
                         f"that is what dividing by √{other} instead of {name} gives"),
                        (q / y, f"{name}/{other}",
                         f"that is what dividing by {other} instead of {name} gives")]
    for name, q in quantities.items():
        if not name.startswith("√"):
            out += [(q, name, ""), (1 / q, f"1/{name}", ""), (math.sqrt(q), f"√{name}", ""),
                    (1 / math.sqrt(q), f"1/√{name}", "")]
    out += [(2.0, "2", ""), (0.5, "1/2", "")]
    return [(c, how, why) for c, how, why in out if c > 0 and abs(c - 1) > 1e-9]


def _scale(got, want, tol, quantities) -> Relation | None:
    if want.shape != got.shape:
        return None
    finite = np.isfinite(want) & np.isfinite(got)
    if not finite.all() or not np.any(np.abs(want) > tol.atol(want)):
        return None
    c = float(np.dot(got.ravel(), want.ravel()) / np.dot(want.ravel(), want.ravel()))
    if not np.isfinite(c) or c <= 0 or abs(c - 1) < 1e-3 or \
            not _close(got, c * want, _loose(tol)):
        return None  # (a negative factor: the sign relation says it more simply)
    distinct = np.unique(np.abs(want[np.abs(want) > tol.atol(want)])).size
    if distinct < 2:  # any two single numbers are in some ratio
        return None
    for factor, how, why in _factors(quantities):
        if abs(c - factor) <= 1e-6 * max(1.0, factor):
            value = _num(c) if how == _num(c) else f"{_num(c)} = {how}"
            tail = f": {why}." if why and not why.endswith("?") else (f". {why[0].upper()}"
                                                                      f"{why[1:]}" if why else ".")
            return Relation(Found.SCALE, f"every entry of yours is {value} times the expected "
                                     f"one{tail}", f"scale:{how}")
    if distinct < 3:
        return None
    return Relation(Found.SCALE, f"every entry of yours is {_num(c)} times the expected one. "
                             f"Look for a factor (a scale, a division) applied once too often "
                             f"or not at all.", "scale:?")


# ----------------------------------------------------------------------------- shapes and axes

def _axes(got, want, tol, names: tuple[str, ...] = ()) -> Relation | None:
    if got.ndim != want.ndim or got.ndim < 2 or got.ndim > 5:
        return None
    for perm in itertools.permutations(range(want.ndim)):
        if perm == tuple(range(want.ndim)):
            continue
        moved = np.transpose(want, perm)
        if moved.shape == got.shape and _close(got, moved, tol):
            swapped = [i for i, p in enumerate(perm) if p != i]
            if perm[-2:] == (want.ndim - 1, want.ndim - 2) and len(swapped) == 2:
                what = "transposed: its last two axes are swapped"
            elif len(swapped) == 2:
                what = f"with axes {swapped[0]} and {swapped[1]} swapped"
            else:
                what = f"with its axes in the order {perm}"
            shapes = f"shape {shape_str(got.shape)}, expected {shape_str(want.shape)}"
            if len(names) == want.ndim:
                shapes = (f"[{', '.join(names[p] for p in perm)}] where "
                          f"[{', '.join(names)}] belongs")
            return Relation(Found.AXES, f"your result holds the expected values, {what} "
                                    f"({shapes}).",
                            "axes:last two" if what.startswith("transposed") else f"axes:{perm}")
    return None


def _normalised(got, want, tol) -> Relation | None:
    """Slices that sum to 1 along another axis than the expected ones."""
    if got.shape != want.shape or got.ndim < 2 or not np.isfinite(got).all() or \
            not np.isfinite(want).all():
        return None

    def ones(a):
        return [ax for ax in range(a.ndim) if a.shape[ax] > 1 and
                np.allclose(a.sum(axis=ax), 1.0, rtol=1e-5, atol=1e-6) and (a >= -1e-9).all()]

    mine, theirs = ones(got), ones(want)
    missing = [ax for ax in theirs if ax not in mine]  # a square of 1/2s sums to 1 both ways
    if not mine or not missing or set(mine) >= set(theirs):
        return None
    a, b = next(ax for ax in mine if ax not in theirs or len(theirs) > 1) - got.ndim, \
        missing[0] - want.ndim
    way = {-2: " (down each column)", -1: " (along each row)"}
    return Relation(Found.NORMALISED, f"your result sums to 1 along axis {a}{way.get(a, '')}, but "
                                  f"the expected one sums to 1 along axis {b}{way.get(b, '')}: "
                                  f"you normalise over the wrong axis.", f"normalised:{a}")


def _shifted(got, want, tol) -> Relation | None:
    if got.shape != want.shape:
        return None
    for ax in range(want.ndim):
        n = want.shape[ax]
        if n < 3:
            continue
        early, late = [slice(None)] * want.ndim, [slice(None)] * want.ndim
        early[ax], late[ax] = slice(0, n - 1), slice(1, n)
        early, late = tuple(early), tuple(late)
        loose = _loose(tol)
        if _close(got[late], want[early], loose) and not _close(got[early], want[early], loose):
            return Relation(Found.SHIFTED, f"your result is the expected one moved one position "
                                       f"later along axis {ax - want.ndim}: position i holds "
                                       f"what belongs at i - 1. Off by one?",
                            f"shifted:{ax - want.ndim}:later")
        if _close(got[early], want[late], loose) and not _close(got[late], want[late], loose):
            return Relation(Found.SHIFTED, f"your result is the expected one moved one position "
                                       f"earlier along axis {ax - want.ndim}: position i holds "
                                       f"what belongs at i + 1. Off by one?",
                            f"shifted:{ax - want.ndim}:earlier")
    return None


def _named(k: int, quantities: dict[str, float]) -> str:
    """`` (= block)`` when ``k`` is one of the case's quantities, else ""."""
    names = [n for n, q in quantities.items() if not n.startswith("√") and q == k]
    return f" (= {names[0]})" if names else ""


def _left_over(k: int, n: int, quantities: dict[str, float]) -> str:
    """``"block = 2"`` when positions ``k`` to ``n - 1`` are exactly what is left over after
    whole blocks of one of the case's quantities (at least 2, and not dividing ``n``)."""
    for name, q in quantities.items():
        if q == int(q) and q >= 2 and k % q == 0 and 0 < n - k < q and not name.startswith("√"):
            return f"{name} = {int(q)}"
    return ""


def _prefix(got, want, tol, quantities) -> Relation | None:
    """Right on the first k positions along an axis, wrong from position k on (or the
    other way round)."""
    if got.shape != want.shape or got.ndim < 1:
        return None
    for ax in range(want.ndim):
        n = want.shape[ax]
        if n < 3:
            continue
        right = [_close(np.take(got, [i], axis=ax), np.take(want, [i], axis=ax), tol)
                 for i in range(n)]
        if all(right) or not any(right):
            continue
        k = right.index(False)
        if k > 0 and not any(right[k:]):
            rows = "position 0" if k == 1 else f"positions 0 to {k - 1}"
            block = _left_over(k, n, quantities)
            if block:
                last = "position" if n - k == 1 else f"{n - k} positions"
                return Relation(Found.PREFIX, f"along axis {ax - want.ndim}, {rows} of yours are "
                                          f"right and the last {last}, left over after whole "
                                          f"blocks of {block}, {'is' if n - k == 1 else 'are'} "
                                          f"wrong: is the last, shorter block handled?",
                                f"prefix:{ax - want.ndim}:left over")
            return Relation(Found.PREFIX, f"along axis {ax - want.ndim}, {rows} of yours are right "
                                      f"and every position from {k}{_named(k, quantities)} on "
                                      f"is wrong: what changes at position {k}?",
                            f"prefix:{ax - want.ndim}")
        first = right.index(True)
        if first > 0 and all(right[first:]):
            rows = f"position {n - 1}" if first == n - 1 else f"positions {first} to {n - 1}"
            return Relation(Found.PREFIX, f"along axis {ax - want.ndim}, positions 0 to {first - 1} "
                                      f"of yours are wrong and {rows} are right: what differs "
                                      f"before position {first}{_named(first, quantities)}?",
                            f"suffix:{ax - want.ndim}")
    return None


def _rows_moved(got, want, tol) -> Relation | None:
    """The expected rows along an axis, reversed or rotated (new rows put in front)."""
    if got.shape != want.shape:
        return None
    for ax in range(want.ndim):
        n = want.shape[ax]
        if n < 2:
            continue
        flipped = np.flip(want, axis=ax)
        if _close(got, flipped, tol) and not _close(want, flipped, tol):
            return Relation(Found.REORDERED, f"your result is the expected one in reverse order "
                                         f"along axis {ax - want.ndim}: the newest first where "
                                         f"the oldest should be, or a loop run backwards.",
                            f"rows:{ax - want.ndim}")
        for k in range(1, n):
            rolled = np.roll(want, k, axis=ax)
            if _close(got, rolled, tol) and not _close(want, rolled, tol):
                return Relation(Found.REORDERED, f"along axis {ax - want.ndim}, your result holds "
                                             f"the expected rows in another order: the expected "
                                             f"last {k} come first in yours (rows added in front "
                                             f"instead of at the end?).", f"rows:{ax - want.ndim}")
    return None


def _extra_axis(got, want, tol) -> Relation | None:
    """The expected values with an axis of length 1 more or less, or a result that
    broadcasts to the expected one without being expanded."""
    if got.shape == want.shape:
        return None
    if got.size == want.size and _close(got.reshape(want.shape), want, tol) and \
            tuple(d for d in got.shape if d != 1) == tuple(d for d in want.shape if d != 1):
        which = "an extra axis" if got.ndim > want.ndim else "a missing axis"
        return Relation(Found.EXTRA_AXIS, f"your values are right, but your shape is "
                                      f"{shape_str(got.shape)} where {shape_str(want.shape)} is "
                                      f"expected: {which} of length 1.",
                        "reshaped")  # the same form as any reshape that keeps the order
    try:
        spread = np.broadcast_to(got, want.shape)
    except ValueError:
        return None
    if _close(spread, want, tol):
        return Relation(Found.EXTRA_AXIS, f"your shape is {shape_str(got.shape)}; broadcast to the "
                                      f"expected {shape_str(want.shape)} it is right: expand it "
                                      f"to the full shape (each query needs its own row).",
                        "broadcast")
    return None


def _reduced(got, want, tol) -> Relation | None:
    """The expected values averaged or summed over one axis (a dropped axis)."""
    if got.ndim != want.ndim - 1:
        return None
    for ax in reversed(range(want.ndim)):  # the innermost such axis: batch axes come first
        if want.shape[:ax] + want.shape[ax + 1:] != got.shape:
            continue  # (an axis of length 1 too: averaging over it is dropping it)
        for how, reduce in (("averaged", np.mean), ("summed", np.sum)):
            if _close(got, reduce(want, axis=ax), _loose(tol)):
                return Relation(Found.REDUCED, f"your result is the expected one {how} over axis "
                                           f"{ax - want.ndim} (of length {want.shape[ax]}): that "
                                           f"axis should be kept, one slice per entry along it.",
                                f"reduced:{ax - want.ndim}")
    return None


def _steps(got, want, tol, quantities) -> list[Relation] | None:
    """An object's attributes after each call (a list of dicts, one per call): a value
    that did not change with a call, a count that counts calls, or a relation inside
    the first call that differs."""
    if isinstance(got, dict) and isinstance(want, dict) and list(got) == list(want) and \
            len(want) >= 1 and all(isinstance(x, dict) for x in [*got.values(), *want.values()]):
        labels = [str(k) for k in want]
        got, want = list(got.values()), list(want.values())
    elif isinstance(got, list) and isinstance(want, list) and len(got) == len(want) and \
            all(isinstance(x, dict) for x in got + want):
        labels = [f"after call {k + 1}" for k in range(len(want))]
    else:
        return None
    for k, (mine, theirs) in enumerate(zip(got, want)):
        for attr, value in theirs.items():
            if attr not in mine or difference(value, mine[attr], tol) is None:
                continue
            call = labels[k]
            if k > 0 and attr in got[k - 1] and difference(got[k - 1][attr], mine[attr], tol) \
                    is None and difference(want[k - 1][attr], value, tol) is not None:
                return [Relation(Found.STALE, f"{call}, your {attr} still holds what it held before "
                                          f"that call: the call did not update it.",
                                 f"stale:{attr}")]
            number = _array(mine[attr])
            if number is not None and number.size == 1 and float(number.ravel()[0]) == k + 1:
                return [Relation(Found.COUNTS_CALLS, f"{call}, your {attr} is {k + 1}, the number "
                                                 f"of calls so far; the expected {attr} counts "
                                                 f"something else.", f"calls:{attr}")]
            return [Relation(r.kind, f"{call}, in {attr}, {r.text}", f"{r.key or r.kind}:{attr}")
                    for r in relations(value, mine[attr], tol, quantities)]
    return None


def _diagonal(got, want, tol) -> Relation | None:
    """Entries that differ all on one diagonal of the last two axes (j - i = d): a mask
    or a weighting that gets a position's relation with itself, or with its neighbour,
    wrong."""
    if got.shape != want.shape or got.ndim < 2:
        return None
    with np.errstate(all="ignore"):
        bad = ~np.isclose(got, want, rtol=tol.rtol, atol=tol.atol(want), equal_nan=True)
    bad = bad.reshape(-1, *want.shape[-2:]).any(axis=0)
    rows, cols = np.nonzero(bad)
    if rows.size < 1 or np.unique(cols - rows).size != 1:
        return None
    n, m = want.shape[-2:]
    whole = rows.size == len(np.diagonal(np.empty((n, m)), offset=int(cols[0] - rows[0])))
    if rows.size == 1 and (n, m) != (1, 1) and not (whole and min(n, m) >= 2):
        return None  # one entry of a larger matrix is on some diagonal by chance
    d = int(cols[0] - rows[0])
    where = {0: "on the diagonal (where a position meets itself, j = i)",
             1: "just above the diagonal (j = i + 1: a position and the one after it)",
             -1: "just below the diagonal (j = i - 1: a position and the one before it)"}.get(
        d, f"on the diagonal j = i {'+' if d > 0 else '-'} {abs(d)}")
    return Relation(Found.DIAGONAL, f"yours differs from the expected one only {where}, over the "
                                f"last two axes: check the comparison that decides those "
                                f"entries (< or <=, and which of i and j comes first).",
                    f"diagonal:{d}")


def _inverted(got, want) -> Relation | None:
    """A mask that is True exactly where the expected one is False."""
    g, w = to_numpy(got), to_numpy(want)
    if isinstance(g, np.ndarray) and isinstance(w, np.ndarray) and g.dtype == bool == w.dtype \
            and g.shape == w.shape and g.size and np.array_equal(g, ~w):
        return Relation(Found.INVERTED, "your mask is True exactly where the expected one is False: "
                                    "its polarity is inverted. In this course True means *may "
                                    "attend*.")
    return None


# ----------------------------------------------------------------------------- types

def _fraction_array(x) -> np.ndarray | None:
    x = to_numpy(x)
    if isinstance(x, Fraction):
        return np.array([x], dtype=object)
    if isinstance(x, np.ndarray) and x.dtype == object and x.size and \
            all(isinstance(v, (Fraction, int)) for v in x.flat):
        return x
    return None


def _type(got, want, tol) -> Relation | None:
    """The right numbers of the wrong type."""
    exact = _fraction_array(want)
    if exact is not None:
        raw = to_numpy(got)
        values = np.asarray(raw, dtype=object).ravel() if raw is not None else np.array([])
        if values.size == exact.size and any(isinstance(v, (float, np.floating)) for v in values):
            try:
                near = all(abs(float(v) - float(e)) <= 1e-9 * max(1.0, abs(float(e)))
                           for v, e in zip(values, exact.ravel()))
            except (TypeError, ValueError):
                near = False
            if near:
                return Relation(Found.TYPE, "your numbers are floats, close to the right ones but "
                                        "not exact: the exercise works in Fractions, which keep "
                                        "1/3 as 1/3. Keep every step in Fraction (a float "
                                        "anywhere turns the rest into floats).")
        return None
    w, g = want, got
    if isinstance(w, list) and isinstance(g, (list, tuple)) and len(w) == len(g) and w and \
            all(isinstance(v, float) for v in w):
        boxed = [v for v in g if isinstance(to_numpy(v), np.ndarray)]
        numbers = [_array(v) for v in g]
        if boxed and all(a is not None and a.size == 1 for a in numbers) and \
                _close(np.array([float(a.ravel()[0]) for a in numbers]), np.array(w), tol):
            kind = "tensors" if type(boxed[0]).__module__.startswith("torch") else "arrays"
            return Relation(Found.TYPE, f"your numbers are right, but your list holds {kind} of one "
                                    f"number where Python floats are expected: take each number "
                                    f"out (`.item()`).")
        return None
    w, g = to_numpy(want), to_numpy(got)
    if isinstance(want, np.ndarray) and want.dtype == bool and got is not None \
            and not isinstance(got, np.ndarray):
        a = _array(g)
        if a is not None and a.shape == w.shape and np.array_equal(a.astype(bool), w):
            held = "a tensor" if type(got).__module__.startswith("torch") else \
                f"a {type(got).__name__}"
            return Relation(Found.TYPE, f"your mask has the right pattern, but it is {held} where a "
                                    f"NumPy array of dtype bool is expected (the next step "
                                    f"reads it with `~mask` and `np.where`): return "
                                    f"`np.array(...)`, or build it with NumPy from the start.")
    if isinstance(w, np.ndarray) and w.dtype == bool and not isinstance(g, bool):
        a = _array(g)
        if a is not None and a.shape == w.shape and np.isin(a, (0.0, 1.0)).all() and \
                np.array_equal(a.astype(bool), w) and np.asarray(g).dtype != bool:
            return Relation(Found.TYPE, f"your mask has the right pattern, but it holds numbers "
                                    f"({np.asarray(g).dtype}) where a boolean array is expected: "
                                    f"make it with a comparison, or convert it with "
                                    f"`.astype(bool)`.")
        return None
    is_number = isinstance(w, (float, int, np.floating, np.integer)) and not isinstance(w, bool)
    if is_number and (isinstance(g, np.ndarray) or type(got).__module__.startswith("torch")):
        a = _array(g)
        if a is not None and a.size == 1 and _close(a.reshape(()), np.asarray(float(w)), tol):
            kind = "a tensor" if type(got).__module__.startswith("torch") else "an array"
            return Relation(Found.TYPE, f"your value is right, but it is {kind} holding one number "
                                    f"where a Python number is expected: take the number out "
                                    f"of it (`.item()`).")
    if isinstance(w, np.ndarray) and isinstance(g, np.ndarray) and w.dtype != g.dtype and \
            np.issubdtype(w.dtype, np.floating) and w.shape == g.shape and \
            (np.issubdtype(g.dtype, np.floating) or np.issubdtype(g.dtype, np.integer)):
        if _close(g.astype(np.float64), w.astype(np.float64), _loose(tol)):
            return Relation(Found.TYPE, f"your numbers are right, but their dtype is {g.dtype} where "
                                    f"{w.dtype} is expected: keep the dtype of the inputs "
                                    f"(a float64 constant or array mixed in promotes float32).")
    return None


# ----------------------------------------------------------------------------- values

def _nan(got, want) -> Relation | None:
    bad = ~np.isfinite(got) & np.isfinite(want)
    if got.shape != want.shape or not bad.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    what = "NaN" if np.isnan(got[idx]) else "inf"
    where = f" at index {idx}" if got.ndim else ""
    if got.ndim >= 2 and want.shape[-1] > 0:
        broken, zeros = (~np.isfinite(got)).any(axis=-1), (want == 0).all(axis=-1)
        if np.array_equal(broken, zeros) and not zeros.all():
            return Relation(Found.NAN_ROWS, f"your result holds {what} on every row where the "
                                        f"expected one is all zeros, and only there (first at "
                                        f"index {idx[:-1]}): a row with nothing allowed in it, "
                                        f"where a sum of 0 divides 0? Such a row must come out "
                                        f"as zeros.")
    return Relation(Found.NAN, f"your result holds {what}{where}, where the expected value is a "
                           f"number ({want[idx]:.4g}). NaN comes from 0/0, inf - inf or "
                           f"inf/inf; inf from a division by 0 or from np.exp of a number "
                           f"above about 709.8 (88.7 in float32).")


def _sign(got, want, tol) -> Relation | None:
    if got.shape == want.shape and np.any(np.abs(want) > tol.atol(want)) and \
            _close(got, -want, tol):
        return Relation(Found.SIGN, "every entry of yours has the opposite sign of the expected "
                                "one: a minus sign, or a difference taken the other way round.")
    return None


def _offset(got, want, tol) -> Relation | None:
    if got.shape != want.shape or got.size < 2 or not np.isfinite(got).all() or \
            not np.isfinite(want).all():
        return None
    d = got - want
    c = float(np.mean(d))
    if abs(c) > tol.atol(want) and _close(got, want + c, _loose(tol)):
        return Relation(Found.OFFSET, f"every entry of yours is the expected one plus {c:.4g}: "
                                  f"something adds (or forgets to subtract) a constant.")
    return None


def _dealt(got, want, tol) -> tuple[int, int] | None:
    """(a, b) when the last axis of ``got`` holds the expected one cut into a blocks of b
    and dealt out one entry at a time: entry i·b + j of ``want`` at j·a + i of ``got``."""
    n = want.shape[-1]
    for a in range(2, n // 2 + 1):
        b = n // a
        if n % a == 0 and _close(
                got.reshape(*got.shape[:-1], b, a).swapaxes(-1, -2).reshape(want.shape), want, tol):
            return a, b
    return None


def _interleaved(got, want, tol, names: tuple[str, ...] = ()) -> Relation | None:
    """The expected entries along the last axis, or along two axes read as one, cut into
    blocks and dealt out one entry at a time (heads interleaved)."""
    if got.shape != want.shape or not want.ndim or want.size < 4:
        return None
    pairs = [((), "the last axis")] + [
        ((p, q), f"axes {names[p] if len(names) == want.ndim else p - want.ndim} and "
                 f"{names[q] if len(names) == want.ndim else q - want.ndim} read as one")
        for p, q in itertools.combinations(range(want.ndim), 2)
        if want.shape[p] > 1 and want.shape[q] > 1]
    for axes, where in pairs:
        g, w = (got, want) if not axes else (
            np.moveaxis(a, axes, (-2, -1)).reshape(*np.delete(a.shape, axes), -1)
            for a in (got, want))
        found = _dealt(g, w, tol) if w.shape[-1] >= 4 else None
        if found:
            a, b = found
            return Relation(Found.INTERLEAVED, f"along {where}, your result holds the expected "
                                           f"entries interleaved: the expected {a} blocks of "
                                           f"{b} are dealt out one entry at a time (entry "
                                           f"i·{b} + j of the expected one is entry j·{a} + i "
                                           f"of yours). Keep each block's {b} entries side by "
                                           f"side.", "interleaved")
    return None


def _part(got, want, tol) -> Relation | None:
    """The first or the last rows of the expected result along one axis, the others
    missing: rows lost (overwritten, never added, or cut off)."""
    if got.ndim != want.ndim or got.ndim < 1 or got.size == 0:
        return None
    differ = [ax for ax in range(want.ndim) if got.shape[ax] != want.shape[ax]]
    if len(differ) != 1 or got.shape[differ[0]] >= want.shape[differ[0]]:
        return None
    ax, m, n = differ[0], got.shape[differ[0]], want.shape[differ[0]]
    for part, rows in (("first", range(m)), ("last", range(n - m, n))):
        if _close(got, np.take(want, list(rows), axis=ax), tol):
            missing = "later" if part == "first" else "earlier"
            return Relation(Found.PART, f"along axis {ax - want.ndim}, your result holds only the "
                                    f"{part} {m} of the expected {n} rows: the {missing} ones "
                                    f"are missing (never added, overwritten, or cut off?).",
                            f"part:{ax - want.ndim}:{part}")
    return None


def _reshaped(got, want, tol) -> Relation | None:
    """Exactly the expected values, in the expected order, in another shape."""
    if got.shape == want.shape or got.size != want.size or got.size < 2:
        return None
    if _close(got.reshape(want.shape), want, tol):
        return Relation(Found.RESHAPED, f"your result holds the expected values in the expected "
                                    f"order, but in the shape {shape_str(got.shape)} where "
                                    f"{shape_str(want.shape)} belongs: laid end to end, or "
                                    f"joined along another axis?", "reshaped")
    return None


def _order(got, want, tol) -> Relation | None:
    if got.size != want.size or got.size < 2 or not np.isfinite(got).all():
        return None
    a, b = np.sort(got.ravel()), np.sort(want.ravel())
    if _close(a, b, tol) and not _close(got.reshape(want.shape), want, tol):
        return Relation(Found.ORDER, f"your result holds exactly the expected values, in another "
                                 f"order{'' if got.shape == want.shape else ' and shape'}: "
                                 f"check which axis you index, sum or loop over.")
    return None


# ----------------------------------------------------------------------------- the entry point

def _swapped(got, want, tol, outputs: tuple[str, ...]) -> Relation | None:
    """An entry of a tuple result that holds another entry's expected value."""
    got, want = to_numpy(got), to_numpy(want)
    if isinstance(want, dict) and isinstance(got, dict) and list(want) == list(got):
        names, want, got = [str(k) for k in want], tuple(want.values()), tuple(got.values())
    elif not isinstance(want, tuple) or not isinstance(got, (tuple, list)) or \
            len(got) != len(want):
        return None
    else:
        names = list(outputs) if len(outputs) == len(want) else \
            [f"item {i}" for i in range(len(want))]
    for i, j in itertools.permutations(range(len(want)), 2):
        if difference(want[i], got[i], tol) is not None and \
                difference(want[j], got[i], tol) is None and \
                difference(want[i], want[j], tol) is not None:
            both = difference(want[i], got[j], tol) is None
            if both and len(want) > 3:
                return Relation(Found.SWAPPED, f"your {names[i]} and {names[j]} are swapped: each "
                                           f"holds the other's expected value.",
                                f"swapped:{names[i]}:{names[j]}")
            if both:
                order = ", ".join(names[k] if k not in (i, j) else names[j if k == i else i]
                                  for k in range(len(want)))
                return Relation(Found.SWAPPED, f"you return ({order}), but the order is "
                                           f"({', '.join(names)}): {names[i]} and {names[j]} "
                                           f"are swapped.")
            return Relation(Found.SWAPPED, f"your {names[i]} holds the expected {names[j]}.",
                            f"holds:{names[i]}:{names[j]}")
    return None


def relate(expected, got, tol: Tolerance = FLOAT64, quantities: dict | None = None,
           outputs: tuple[str, ...] = (), axes: dict | None = None) -> Relation | None:
    """The first relation that holds between ``got`` and the ``expected`` result of one
    case, or None (:func:`relations` lists them all, in order)."""
    return next(iter(relations(expected, got, tol, quantities, outputs, axes)), None)


def relations(expected, got, tol: Tolerance = FLOAT64, quantities: dict | None = None,
              outputs: tuple[str, ...] = (), axes: dict | None = None) -> list[Relation]:
    """Every relation that holds between ``got`` and the ``expected`` result of one case,
    the most telling first. A tuple or dict result is related entry by entry: a swapped
    pair, else the first entry that differs; an object's attributes call by call.
    ``axes`` names an output's axes (by its name in ``outputs``; "" for the whole result)."""
    quantities, axes = quantities or {}, axes or {}
    out: list[Relation] = []
    stepped = _steps(to_numpy(got), to_numpy(expected), tol, quantities)
    if stepped is not None:
        return stepped
    swapped = _swapped(got, expected, tol, outputs)
    if swapped is not None:
        out.append(swapped)
    e, g = to_numpy(expected), to_numpy(got)
    if isinstance(e, dict) and isinstance(g, dict) and set(e) <= set(g):
        pairs = [(str(k), e[k], g[k]) for k in e]
    elif isinstance(e, tuple) and isinstance(g, (tuple, list)) and len(e) == len(g):
        names = list(outputs) if len(outputs) == len(e) else [f"item {i}" for i in range(len(e))]
        pairs = list(zip(names, e, g))
    else:
        pairs = None
    if pairs is not None:  # every entry that differs, in order
        for name, want, mine in pairs:
            if difference(want, mine, tol) is not None:
                out += [Relation(r.kind, f"in {name}, {r.text}", f"{r.key or r.kind}:{name}")
                        for r in relations(want, mine, tol, quantities,
                                           axes={"": axes[name]} if name in axes else None)]
        return out
    typed = _type(got, expected, tol)
    if typed is not None:
        return out + [typed]
    inverted = _inverted(g, e)  # on a 1×1 mask, also a diagonal: the next cases decide
    if inverted is not None:
        out.append(inverted)
    want, mine = _array(e), _array(g)
    if want is None or mine is None:
        return out
    if mine.shape == want.shape:
        nan = _nan(mine, want)
        if nan is not None:
            return out + [nan]
    tests = [lambda: _scale(mine, want, tol, quantities), lambda: _sign(mine, want, tol),
             lambda: _axes(mine, want, tol, axes.get("", ())),
             lambda: _normalised(mine, want, tol),
             lambda: _extra_axis(mine, want, tol), lambda: _reduced(mine, want, tol),
             lambda: _rows_moved(mine, want, tol),
             lambda: _shifted(mine, want, tol), lambda: _offset(mine, want, tol),
             lambda: _diagonal(mine, want, tol),
             lambda: _interleaved(mine, want, tol, axes.get("", ())),
             lambda: _part(mine, want, tol), lambda: _reshaped(mine, want, tol),
             lambda: _order(mine, want, tol),
             lambda: _prefix(mine, want, tol, quantities)]
    if max(want.size, mine.size) > SEARCHED_ENTRIES:  # a large result: the linear tests only
        tests = [tests[0], tests[1], tests[8]]
    for test in tests:
        with np.errstate(all="ignore"):
            found = test()
        if found is not None:
            out.append(found)
    return out


__all__ = ["FIRST_BAD_NUMBER", "Found", "Relation", "Substitution", "across_cases", "relate", "relations"]


# ----------------------------------------------------------------------------- probes

PROBED_ROWS = 6  # rows of one argument changed one at a time, at most


def _like(original, values: np.ndarray):
    """``values`` as the same kind of array as ``original``: a tensor of its dtype for a
    tensor, else a NumPy array."""
    if type(original).__module__.startswith("torch"):
        import torch

        return torch.as_tensor(values, dtype=original.dtype)
    return values


def probe_cases(case, args: tuple[str, ...]) -> list[tuple[str, int, object]]:
    """The probes of ``case``: for each argument named in ``args`` (a float array), the
    case with one of its rows (along axis -2, or the whole of a vector) changed, as
    ``(argument, row, probe case)``; row -1 stands for the whole vector."""
    out = []
    for name in args:
        if name not in case.names:
            continue
        i = case.names.index(name)
        if i >= len(case.args):
            continue
        a = to_numpy(case.args[i])
        if not isinstance(a, np.ndarray) or not np.issubdtype(a.dtype, np.floating) or not a.size:
            continue
        rows = [-1] if a.ndim == 1 else list(range(min(a.shape[-2], PROBED_ROWS)))
        bump = 1.0 + float(np.max(np.abs(a)))
        for r in rows:
            changed = np.array(a, copy=True)
            if r < 0:
                changed = changed + bump * np.linspace(1.0, 2.0, changed.size).reshape(a.shape)
            else:
                changed[..., r, :] += bump * np.linspace(1.0, 2.0, a.shape[-1])
            args_ = list(case.args)
            args_[i] = _like(case.args[i], changed)
            out.append((name, r, case.with_args(tuple(args_))))
    return out


def substitutions(case, args: tuple[str, ...]) -> list[tuple[Substitution, str, str, object]]:
    """``case`` with one argument named in ``args`` passed in the place of another of the
    same shape and dtype, or square ones transposed in their own places (each, and all
    together): ``(kind, used, instead of, case)`` for every such change, ``kind`` a
    :class:`Substitution` (for a transposition, ``used`` names the arguments transposed)."""
    where = {n: case.names.index(n) for n in args if n in case.names and
             case.names.index(n) < len(case.args)}
    arrays = {n: to_numpy(case.args[i]) for n, i in where.items()}
    out = []
    square = [n for n, a in arrays.items()
              if isinstance(a, np.ndarray) and a.ndim == 2 and a.shape[0] == a.shape[1] > 1
              and not np.array_equal(a, a.T)]
    for names in [[n] for n in square] + ([square] if len(square) > 1 else []):
        args_ = list(case.args)
        for name in names:
            args_[where[name]] = _like(case.args[where[name]],
                                       np.ascontiguousarray(arrays[name].T))
        together = " and ".join(names)
        kind = Substitution.TRANSPOSED if len(names) == 1 else Substitution.TRANSPOSED_TOGETHER
        out.append((kind, together, together, case.with_args(tuple(args_))))
    for used, a in arrays.items():
        for instead, b in arrays.items():
            if used != instead and isinstance(a, np.ndarray) and isinstance(b, np.ndarray) \
                    and a.shape == b.shape and a.dtype == b.dtype and not np.array_equal(a, b):
                args_ = list(case.args)
                args_[where[instead]] = case.args[where[used]]
                out.append((Substitution.SWAP, used, instead, case.with_args(tuple(args_))))
    return out


def rescaled(case, through: str) -> list[tuple[str, str, object]]:
    """``case`` with the argument ``through`` (the queries, or what makes them) multiplied
    by each factor built from the case's scale (a quantity named "√…"), so that the scores
    are: ``(factor as words, what it suggests, case)``."""
    if through not in case.names or case.names.index(through) >= len(case.args):
        return []
    i = case.names.index(through)
    a = to_numpy(case.args[i])
    if not isinstance(a, np.ndarray) or not np.issubdtype(a.dtype, np.floating):
        return []
    out = []
    for factor, how, why in _factors(case.quantities):
        if why and any(n.startswith("√") for n in case.quantities):
            args_ = list(case.args)
            args_[i] = _like(case.args[i], a * factor)
            value = how if how == _num(factor) else f"{_num(factor)} = {how}"
            out.append((value, why, case.with_args(tuple(args_))))
    return out


def rescaled_match(scaled: list, got, tol: Tolerance) -> Relation | None:
    """The factor on the scores (``Case.meta.scaled``) that gives the answer's result."""
    for value, why, result in scaled:
        if difference(result, got, tol) is None:
            ask = why[0].upper() + why[1:] + ("" if why.endswith("?") else ".")
            return Relation(Found.SCALED_SCORES, f"your result is what the expected one would be "
                                             f"with the scores multiplied by {value} before the "
                                             f"softmax. {ask}", f"scaled scores:{value}")
    return None


def substituted(swaps: list, got, tol: Tolerance) -> Relation | None:
    """The substitution (``Case.meta.swaps``) whose result the answer gives, if any."""
    for kind, used, instead, value in swaps:
        if difference(value, got, tol) is not None:
            continue
        if kind != Substitution.SWAP:
            one = kind == Substitution.TRANSPOSED
            return Relation(Found.SUBSTITUTED, f"where {used} {'is' if one else 'are'} square, "
                                           f"your result is what the expected one would be "
                                           f"with {used} transposed: your code reads "
                                           f"{'its' if one else 'their'} rows where the "
                                           f"columns belong.", f"transposed:{used}")
        return Relation(Found.SUBSTITUTED, f"your result is what the expected one would be with "
                                       f"{used} passed in the place of {instead}: your code "
                                       f"uses {used} where {instead} belongs.",
                        f"substituted:{used}:{instead}")
    return None


def output_part(value):
    """The part of a result whose positions a probe reads: an attention's output (the
    first item of a tuple, the returned value of an observed call), as a float array."""
    value = to_numpy(value)
    for key in ("returned", "output"):  # an observed call's, a module's
        if isinstance(value, dict) and key in value:
            value = to_numpy(value[key])
    if isinstance(value, (tuple, list)) and value and not isinstance(value[0], (int, float)):
        value = to_numpy(value[0])
    return _array(value)


def changed_positions(base, probed, tol: Tolerance = FLOAT64) -> list[int] | None:
    """The output positions (along axis -2; [0] for a vector) where ``probed`` differs
    from ``base``, or None if they cannot be compared."""
    a, b = output_part(base), output_part(probed)
    if a is None or b is None or a.shape != b.shape:
        return None
    with np.errstate(all="ignore"):
        same = np.isclose(a, b, rtol=tol.rtol, atol=tol.atol(a), equal_nan=True)
    if a.ndim < 2:
        return [] if same.all() else [0]
    moved = (~same).reshape(-1, *a.shape[-2:]).any(axis=(0, 2))
    return [int(i) for i in np.nonzero(moved)[0]]


def _rows_text(name: str, rows: list[int], total: int) -> str:
    if rows == [-1]:
        return name
    if len(rows) > 1 and rows == list(range(total - len(rows), total)) and rows[0] > 0:
        return f"the last {len(rows)} rows of {name} (rows {rows[0]} to {rows[-1]})"
    if rows and rows[-1] == total - 1 and len(rows) == 1 and total > 1:
        return f"the last row of {name} (row {rows[0]})"
    return f"row{'s' if len(rows) > 1 else ''} {', '.join(map(str, rows[:4]))} of {name}"


def dependence(expected: dict, mine: dict, sizes: dict | None = None,
               positions: int = 2) -> Relation | None:
    """What the answer's output depends on that the expected one does not, or the other
    way round. ``expected`` and ``mine`` map ``(argument, row)`` to the output positions
    that change when that row of that argument changes (row -1: the whole vector);
    ``sizes`` gives each argument's number of rows; ``positions``, the output's (1 for a
    vector, where only a whole argument ignored or its last rows never read are named:
    one number may not move for other reasons, a softmax saturated by large scores)."""
    sizes = sizes or {}
    by_arg: dict[str, list] = {}
    for (name, row), want in expected.items():
        by_arg.setdefault(name, []).append((row, want, mine.get((name, row))))
    if any(got is None for rows in by_arg.values() for _, _, got in rows):
        return None
    for name, rows in by_arg.items():  # position i misses row i, and nothing else
        missing = {row: set(want) - set(got) for row, want, got in rows if row >= 0}
        own = [row for row, gone in missing.items() if gone == {row}]
        if own and len(own) >= min(2, len(missing)) and any(got for _, _, got in rows) and \
                all(not gone or gone == {row} for row, gone in missing.items()):
            return Relation(Found.MISSES_OWN, f"changing row i of {name} never changes your output "
                                          f"at position i (rows {', '.join(map(str, own[:4]))}), "
                                          f"but it changes the expected one: no position sees "
                                          f"its own row of {name}. The diagonal is left out: "
                                          f"`<` where `<=` belongs?",
                            f"misses own:{name}")
    for name, rows in by_arg.items():
        if all(not got for _, _, got in rows) and any(want for _, want, _ in rows):
            return Relation(Found.IGNORES, f"your result does not change when {name} changes, but "
                                       f"the expected one does: {name} never reaches your "
                                       f"result (is another argument used in its place?).",
                            f"ignores:{name}")
    for name, rows in by_arg.items():
        if positions < 2:
            break
        seen = [(row, sorted(set(got) - set(want))) for row, want, got in rows
                if set(got) - set(want)]
        if seen:
            row, extra = seen[0]
            at = ", ".join(map(str, extra[:4]))
            return Relation(Found.SEES, f"changing {_rows_text(name, [row], sizes.get(name, 0))} "
                                    f"changes your output at "
                                    f"position{'s' if len(extra) > 1 else ''} {at}, where "
                                    f"the expected output does not change: it must not see it "
                                    f"there (a mask or a range that lets in too much?).",
                            f"sees:{name}")
    for name, rows in by_arg.items():
        unread = [row for row, want, got in rows if want and not got]
        partly = [(row, sorted(set(want) - set(got))) for row, want, got in rows
                  if got and set(want) - set(got)]
        total = sizes.get(name, 0)
        suffix = unread == list(range(total - len(unread), total)) and 0 < len(unread) < total
        if unread and (positions >= 2 or suffix):
            what = _rows_text(name, unread, total)
            return Relation(Found.MISSES, f"changing {what} does not change your result at all, "
                                      f"but it changes the expected one: your code never reads "
                                      f"{what}. A range, a loop or a mask that stops too "
                                      f"early?", f"misses:{name}" + (":suffix" if suffix else ""))
        if partly and positions >= 2:
            row, missing = partly[0]
            at = ", ".join(map(str, missing[:4]))
            what = _rows_text(name, [row], sizes.get(name, 0))
            return Relation(Found.MISSES, f"changing {what} does not change your output at position"
                                      f"{'s' if len(missing) > 1 else ''} {at}, but it changes "
                                      f"the expected one there: those positions never see it "
                                      f"(a mask or a range that leaves it out?).",
                            f"misses:{name}")
    return None


def _axes_of(case) -> tuple[tuple[str, int], ...]:
    """Each array argument of ``case`` and its number of axes (lists read as arrays)."""
    out = []
    for i, arg in enumerate(case.args):
        a = to_numpy(arg)
        if isinstance(a, (np.ndarray, list)) and not (isinstance(a, list) and not a):
            try:
                n = np.ndim(a)
            except ValueError:
                continue
            out.append((case.names[i] if i < len(case.names) else f"argument {i + 1}", n))
    return tuple(out)


def _axes_text(shape: tuple[tuple[str, int], ...], more: tuple = ()) -> str:
    """``shape`` in words; an argument with 2 axes, which has more in ``more``, is called a
    single matrix (no batch axis)."""
    others = dict(more)
    parts = [f"{name} has {n} ax{'i' if n == 1 else 'e'}s" +
             (" (a single matrix: no batch axis)" if n == 2 and others.get(name, 0) > 2 else "")
             for name, n in shape]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f" and {parts[-1]}"


def raises_by_axes(cases, outcomes, failing: int) -> Relation | None:
    """An answer that raises on the failing case and on every case whose arrays have as
    many axes as its, and works on cases with other numbers of axes: it assumes one number
    of axes (no batch axis, or exactly one)."""
    err = outcomes[failing].error
    if err is None:
        return None
    shape = _axes_of(cases[failing])
    raised = {_axes_of(c) for c, o in zip(cases, outcomes)
              if o.error is not None and o.error.type == err.type}
    worked = sorted({_axes_of(c) for c, o in zip(cases, outcomes) if o.error is None} - {()})
    if not worked or not shape or raised & set(worked):
        return None
    return Relation(Found.AXES_COUNT, f"your function raises on this input, where "
                                  f"{_axes_text(shape, worked[0])}, and works where "
                                  f"{_axes_text(worked[0])}: it assumes a fixed number of axes. "
                                  f"Let any number of leading (batch) axes through, none "
                                  f"included.", f"axes count:{sorted(raised)}")


def _scalar(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def across_cases(cases, expected, outcomes, tol_of=lambda case: case.tol) -> Relation | None:
    """Two cases whose arguments are numbers and differ in one argument only, where the
    expected results are equal and the answer's differ (it depends on an argument the
    result does not), or the other way round (it ignores one the result depends on)."""
    runs = [(c, e.value, o.value) for c, e, o in zip(cases, expected, outcomes)
            if o.error is None and e.error is None and not c.kwargs and c.args
            and all(_scalar(a) for a in (*c.args, e.value, o.value))]
    for (a, want_a, got_a), (b, want_b, got_b) in itertools.combinations(runs, 2):
        moved = [i for i, (x, y) in enumerate(zip(a.args, b.args)) if x != y]
        if len(a.args) != len(b.args) or len(moved) != 1:
            continue
        i = moved[0]
        name = a.names[i] if i < len(a.names) else f"argument {i + 1}"
        same_want = difference(want_a, want_b, tol_of(a)) is None
        same_got = difference(got_a, got_b, tol_of(a)) is None
        if same_want == same_got or (same_want and
                                     difference(want_a, got_a, tol_of(a)) is None and
                                     difference(want_b, got_b, tol_of(b)) is None):
            continue
        fixed = ", ".join(f"{n} = {v}" for j, (n, v) in enumerate(zip(a.names, a.args)) if j != i)
        at = f" (with {fixed})" if fixed else ""
        if same_want:
            return Relation(Found.DEPENDS, f"your result changes with {name}: {_num(got_a)} for "
                                       f"{name} = {a.args[i]} and {_num(got_b)} for {name} = "
                                       f"{b.args[i]}{at}, but the expected result does not "
                                       f"depend on {name}: it is {_num(want_a)} for both.",
                            f"depends:{name}")
        return Relation(Found.IGNORES, f"your result does not change with {name}: {_num(got_a)} for "
                                   f"{name} = {a.args[i]} and for {name} = {b.args[i]}{at}, but "
                                   f"the expected result does: {_num(want_a)} and {_num(want_b)}.",
                        f"ignores:{name}")
    return None


def reshaped_input(case, got, expected) -> Relation | None:
    """The answer's result is one of the case's arguments reshaped, with no axis moved,
    where the expected result (of the same shape) moves one: a reshape in place of a
    transpose."""
    g, e = _array(output_part(got) if isinstance(got, tuple) else got), _array(expected)
    if g is None or e is None or g.shape != e.shape or g.ndim < 2 or \
            np.array_equal(g, e):
        return None
    for i, arg in enumerate(case.args):
        a = _array(arg)
        if a is None or a.size != g.size or a.shape == g.shape or a.ndim < 2:
            continue
        if np.array_equal(a.reshape(g.shape), g) and np.array_equal(np.sort(a, axis=None),
                                                                     np.sort(e, axis=None)):
            name = case.names[i] if i < len(case.names) else f"argument {i + 1}"
            return Relation(Found.RESHAPED, f"your result is {name} reshaped to "
                                        f"{shape_str(g.shape)} with no axis moved: its entries "
                                        f"keep {name}'s order. The expected one moves an axis "
                                        f"first: a transpose (or permute) belongs before the "
                                        f"reshape, or after it.", f"reshaped:{name}")
    return None
