"""The learner's side of lesson 07: inputs that an exercise asks to read in one pass,
handed over so that a second pass shows, and what a check says when an answer reads them
twice; and the driver that reads an object the answer changes.

The :class:`OnePass` driver (``{"kind": "one_pass", ...}``) is a call whose fields say
which arguments are read once (the driver applies them to each case's arguments, which
stay plain lists and arrays as data):

* ``{"stream": i}``: argument i, a list of blocks (or a lazy source of blocks, the
  ``normal_blocks`` fixture), becomes a :class:`Stream`. It gives each block once, as a
  fresh copy, in order, and then it is gone. Asked for the blocks again after the last
  one, or for a copy of itself (``copy.copy``, ``itertools.tee``), it raises
  :class:`ReadTwice`; a block still held when the stream is two blocks further on raises
  :class:`BlockKept`; ``len``, an index or a truth test raises :class:`NotAList`, since
  a stream has none of them.
* ``{"rows": [i, j], "block": k}``: arguments i and j, 2-D arrays, become :class:`Rows`:
  views of the same memory that note which rows are read, through NumPy's operators and
  functions, indexing, iteration, copies and views of views. Passes are counted, not
  reads: a row may be read again only while fewer than ``block`` (argument k) rows that
  were never read before have been read since its first read. The current block may be
  read as often as the step needs; going back to an earlier one raises :class:`ReadTwice`.
  One read of more than ``block`` rows at once (every key scored in one product, or
  ``block`` taken as the number of blocks) raises :class:`TooManyRows`.

A second pass is an error even when the answer catches it: the first one is raised again
when the call returns (:func:`watched`). The driver knows these errors by their type's
name (:data:`ERRORS`), never by their text, and words the check's message
(:meth:`OnePass.failure`, :func:`message`) in the exercise's own words (``say``).

What each can and cannot see (the trade-off):

* A kept block is seen by a weak reference, so keeping the blocks themselves (a list,
  ``list(stream)``) fails at once, whatever their size. A *copy* of each block
  (``b.copy()``, ``list(b)``, ``np.array(b)``) lets the block itself go, and nothing
  small can tell that copy from a number the answer needs. The exercise's large
  case, generated block by block with a memory budget, catches an answer that keeps a
  copy of every block: its memory grows with the row, the budget with one block. Copies
  of a few blocks are not caught, and need not be: they cannot make a second pass.
* Rows can be read without a note only through memory NumPy hands out without asking
  the array: ``np.asarray(K)``, ``np.array(K)``, ``K.base``, ``memoryview(K)``,
  ``K.ctypes``, ``K.__array_interface__``, or an assignment ``buf[...] = K`` into an
  array of the answer's own. ``K.view(...)`` and ``np.asanyarray(K)`` stay counted.
  Those left are not what an answer writes by mistake, and any of them that copies K
  (or holds a score per key) fails the memory budget of the large case anyway. An
  answer may also change this module in its kernel; the kernel's word can only cost
  points (``grader.grading.notebook.bridge``), so that buys nothing the source does not show.

:class:`Observed` (``{"kind": "observe", "arg": 1, "name": "cache", "attrs": [...]}``) is a
call whose outcome is a dict of the result (``"returned"``) and those attributes of
argument ``arg`` after the call (``"cache.keys"``): an answer whose job includes changing
an object it is given.
* An array whose rows interleave in memory (Fortran order) cannot be counted by address
  and is handed over as it is.
"""
from __future__ import annotations

import collections
import contextlib
import gc
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.lib.array_utils import byte_bounds

from ...learner.codec import Fixture
from ...learner.drivers import Call, as_data, read_attribute
from ...learner.plugins import LESSONS
from ...learner.wording import case_title, describe_input

LESSON = LESSONS.of(__name__)  # what this folder adds registers through it


class ReadTwice(RuntimeError):
    """The answer read its one-pass input a second time."""


class BlockKept(ReadTwice):
    """The answer kept a block of a stream after the stream had moved two blocks on."""


class NotAList(TypeError):
    """The answer asked a stream for its length, an index or its truth."""


class TooManyRows(RuntimeError):
    """The answer read more rows of its one-pass input in one step than a block holds."""


ERRORS = frozenset({"ReadTwice", "BlockKept", "NotAList", "TooManyRows"})


def _rows(lo: int, hi: int, verb: str = "") -> str:
    """``rows 3 to 5`` (``row 3``), with ``verb`` (``were``/``was``) in agreement."""
    text = f"row {lo}" if lo == hi else f"rows {lo} to {hi}"
    return text if not verb else f"{text} {'was' if lo == hi else verb}"


# ----------------------------------------------------------------------------- one-shot iterators

class Once:
    """An iterator that may be read to its end once; asked for more after that, it raises
    :class:`ReadTwice` instead of silently giving nothing, as a generator would."""

    def __init__(self, items, what: str = "the blocks"):
        self._items, self._what, self._done = iter(items), what, False

    def _again(self):
        return ReadTwice(f"{self._what} were all read already, and then asked for again: "
                         f"they can be read once")

    def __iter__(self):
        if self._done:
            raise self._again()
        return self

    def __next__(self):
        if self._done:
            raise self._again()
        try:
            return next(self._items)
        except StopIteration:
            self._done = True
            raise


class _Block(list):
    """A block that is a Python list, as the stream hands it over: a list that can be
    watched by a weak reference (a plain list cannot)."""

    __slots__ = ("__weakref__",)


class Stream:
    """The blocks of one argument (``name``), handed over one at a time: each a fresh
    copy, in order, each to be let go before the stream is two blocks further on."""

    def __init__(self, blocks, name: str = "scores_blocks"):
        # The case's own blocks are copied (the case keeps them, and gets back a change
        # made to a copy); a lazy source's are the stream's alone, and handed over as made.
        self._data = isinstance(blocks, (list, tuple))
        self._source = iter(blocks)
        self._name = name
        self._count = 0                      # blocks handed over so far
        self._held = collections.deque()     # (index, weak reference, the case's block)
        self._done = False
        self._open = True
        self.error: ReadTwice | None = None

    # --- what a stream is not
    def _not(self, what: str):
        return NotAList(f"{what}, but {self._name} is a stream of blocks: it has no length "
                        f"and no index, only a next block, to be read with a for loop")

    def __len__(self):
        raise self._not(f"len({self._name})")

    def __getitem__(self, index):
        raise self._not(f"{self._name}[{index!r}]")

    def __bool__(self):
        raise self._not(f"a truth test on {self._name} (if {self._name}: ...)")

    def __contains__(self, item):
        raise self._not(f"a test `x in {self._name}`")

    def __reversed__(self):
        raise self._not(f"reversed({self._name})")

    def __copy__(self):
        raise self._fail(ReadTwice(f"a copy of {self._name} was asked for, to read the blocks "
                                   f"again: a stream can be read once"))

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce_ex__(self, protocol):
        return self.__copy__()

    # --- reading
    def _fail(self, error: ReadTwice) -> ReadTwice:
        if self.error is None and self._open:
            self.error = error
        return error

    def __iter__(self):
        if self._done:
            raise self._fail(ReadTwice(f"{self._name} was read to its last block, then "
                                       f"iterated again: the blocks come once"))
        return self

    def __next__(self):
        if self._done:
            raise self._fail(ReadTwice(f"{self._name} was read to its last block, then "
                                       f"asked for more: the blocks come once"))
        self._let_go()
        try:
            original = next(self._source)
        except StopIteration:
            self._done = True
            raise
        if not self._data:
            block, original = original, None
        else:
            block = _Block(original) if isinstance(original, list) else np.array(original)
            original = original if isinstance(original, (list, np.ndarray)) else None
        self._held.append((self._count, weakref.ref(block), original))
        self._count += 1
        return block

    def _let_go(self) -> None:
        """Before the next block: a change made to the last one reaches the case's data,
        where the driver sees it; and of the blocks before the last, at most one may still
        be held. One is an honest answer's (the first block kept as a starting point, a
        previous one kept to compare); two or more is a list of blocks to read again."""
        if self._held:
            _write_back(*self._held[-1][1:])
        older = [entry for entry in list(self._held)[:-1] if entry[1]() is not None]
        if len(older) >= 2:
            # A reference cycle that holds them is not the answer keeping them. Only a full
            # collection will do: a younger one moves live cycles to the oldest generation.
            gc.collect()
            older = [entry for entry in older if entry[1]() is not None]
        if len(older) >= 2:
            kept = " and ".join(str(index) for index, _, _ in older[:2])
            raise self._fail(BlockKept(
                f"blocks {kept} of {self._name} were still held when block {self._count} "
                f"was asked for"))
        last = self._held[-1] if self._held else None
        self._held.clear()
        self._held.extend(older + ([last] if last else []))

    def close(self) -> None:
        for _, ref, original in self._held:
            _write_back(ref, original)
        self._open = False


def _write_back(ref, original) -> None:
    block = ref()
    if block is None or original is None:
        return
    if isinstance(original, list):
        if list(block) != original:
            original[:] = list(block)
    elif isinstance(block, np.ndarray) and block.shape == original.shape and \
            not np.array_equal(block, original, equal_nan=True):
        np.copyto(original, block, casting="unsafe")


# ----------------------------------------------------------------------------- counted rows

TOP = np.iinfo(np.int32).max


def _owner(a: np.ndarray):
    """The array at the end of ``a``'s chain of views: the one that owns its memory, or
    whose base is no array (raw bytes)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class Ledger:
    """Which rows of one 2-D array (``name``) have been read, and when: ``age[r]`` is 0
    for a row never read, else ``TOP - c``, with c the number of rows first read before
    it. Made before the call (at grading, before the memory window opens), so that its
    arrays are never counted in the answer's memory."""

    def __init__(self, root: np.ndarray, name: str, window: int, ids: np.ndarray | None = None):
        self.name, self.window = name, max(1, int(window))
        self.owner = _owner(root)
        self.start = self.owner.__array_interface__["data"][0]
        self.lo = byte_bounds(root)[0]
        self.row_bytes, self.n = root.strides[0], root.shape[0]
        # Written now: fresh zeros from the system arrive page by page as they are first
        # written, during the call, and would count as the answer's memory.
        self.age = np.empty(self.n, dtype=np.int32)
        self.age.fill(0)
        # 0, 1, 2, ...: the rows an index picks are read from views of it, made at no cost.
        self.ids = ids if ids is not None and len(ids) >= self.n else \
            np.arange(self.n, dtype=np.int32)
        self.clock = 0                   # rows read so far, each counted once
        self.last = (0, -1)              # the latest read that brought new rows
        self.open = True
        self.error: ReadTwice | TooManyRows | None = None

    def owns(self, a: np.ndarray) -> bool:
        """Whether ``a`` is a view of this array's memory, not memory of its own: its
        chain of views (short: NumPy shortens it wherever the types allow) ends here."""
        for _ in range(64):
            if a is self.owner:
                return True
            a = a.base
            if not isinstance(a, np.ndarray):
                return False
        return False

    def span(self, a: np.ndarray) -> tuple[int, int] | None:
        """The rows ``a`` (a view) spans, first and last; a strided view (``K[::2]``)
        spans the rows it skips too. None if it holds no number."""
        found = getattr(a, "_span", None)
        if found is None and a.size:
            lo, hi = byte_bounds(a)
            found = ((lo - self.lo) // self.row_bytes, (hi - 1 - self.lo) // self.row_bytes)
            if isinstance(a, Rows):
                a._span = found
        return found

    def read_view(self, a: np.ndarray) -> None:
        found = self.span(a)
        if found is not None:
            self.read(*found)

    def read_index(self, a: np.ndarray, index) -> None:
        """The rows that ``a[index]`` reads (a copy, or one number), ``a`` a view of ours:
        the index applied to each axis's share of the row number, a view of ``ids``."""
        start = a.__array_interface__["data"][0] - self.lo
        first, inside = divmod(start, self.row_bytes)
        shares, within = [], a.itemsize
        for k, (n, s) in enumerate(zip(a.shape, a.strides)):
            if n <= 1 or s == 0:
                continue
            if s % self.row_bytes == 0:          # an axis along the rows
                step = s // self.row_bytes
                seq = self.ids[:n * abs(step):abs(step)] if step > 0 else \
                    -self.ids[:n * abs(step):abs(step)]
                shape = (1,) * k + (n,) + (1,) * (a.ndim - k - 1)
                shares.append(np.broadcast_to(seq.reshape(shape), a.shape))
            elif s > 0:                          # an axis within a row
                within += (n - 1) * s
            else:
                within = self.row_bytes + 1
        if inside + within > self.row_bytes:     # an axis that crosses rows: every row it spans
            self.read_view(a)
            return
        if not shares:                           # every number it picks is in one row
            if np.size(np.broadcast_to(np.bool_(True), a.shape)[index]):
                self.read(first, first)
            return
        picked = np.asarray(shares[0][index], dtype=np.int32)  # a copy: an index picks
        picked = picked.reshape(1).copy() if picked.ndim == 0 else picked
        for t in shares[1:]:
            picked += t[index]
        if not picked.size:
            return
        lo, hi = int(picked.min()), int(picked.max())
        picked -= lo
        seen = np.zeros(hi - lo + 1, dtype=bool)
        seen[picked] = True
        if seen.all():
            self.read(first + lo, first + hi)
            return
        edges = np.flatnonzero(np.diff(seen.view(np.int8))) + 1   # each stretch read, in order
        for begin, end in zip([0, *edges], [*edges, len(seen)]):
            if seen[begin]:
                self.read(first + lo + int(begin), first + lo + int(end) - 1)

    def read(self, lo: int, hi: int) -> None:
        """Rows ``lo`` to ``hi`` read now: :class:`TooManyRows` if they are more than a
        block, :class:`ReadTwice` if one of them was first read more than a block of new
        rows ago."""
        if not self.open:
            return
        if lo == hi and 0 <= lo < self.n:       # one row: the common case, kept cheap
            age = self.age.item(lo)
            new = 0 if age else 1
        else:
            lo, hi = max(0, int(lo)), min(self.n - 1, int(hi))
            if hi < lo:
                return
            if hi - lo + 1 > self.window:
                self._fail(TooManyRows(
                    f"in {self.name}, {_rows(lo, hi, 'were')} read in one step: "
                    f"{hi - lo + 1} rows, where a step reads at most block = {self.window}"))
            seg = self.age[lo:hi + 1]
            age = int(seg.max())
            new = hi - lo + 1 if age == 0 else 0 if int(seg.min()) else \
                int(np.count_nonzero(seg == 0))
        if age and self.clock + new - (TOP - age) > self.window:
            self._fail(ReadTwice(
                f"in {self.name}, {_rows(lo, hi, 'were')} read again after "
                f"{_rows(*self.last)} had been read: back more than one block "
                f"(block = {self.window})"))
        if new:
            if lo == hi:
                self.age[lo] = TOP - self.clock
            else:
                np.maximum(self.age[lo:hi + 1], TOP - self.clock, out=self.age[lo:hi + 1])
            self.clock += new
            self.last = (lo, hi)

    def _fail(self, error: ReadTwice | TooManyRows):
        if self.error is None:
            self.error = error
        raise error

    def close(self) -> None:
        self.open = False


def _ledger(x) -> Ledger | None:
    return getattr(x, "_ledger", None) if isinstance(x, Rows) else None


def _plain(x, read: bool = True):
    """``x`` as NumPy's own array, its rows noted as read; lists and tuples inside too."""
    if isinstance(x, Rows):
        ledger = getattr(x, "_ledger", None)
        if read and ledger is not None:
            ledger.read_view(x)
        return np.ndarray.view(x, np.ndarray)
    if isinstance(x, (list, tuple)) and any(isinstance(v, (Rows, list, tuple)) for v in x):
        return type(x)(_plain(v, read) for v in x)
    return x


def _counted(a: np.ndarray, ledger: Ledger, span: tuple[int, int] | None = None) -> "Rows":
    """``a``, a view of ``ledger``'s array, as a counted view made straight on the memory's
    owner, so that it keeps no chain of views alive (an answer may hold one per block)."""
    try:
        return _made(ledger, a.shape, a.dtype, a.strides,
                     a.__array_interface__["data"][0] - ledger.start, span)
    except (TypeError, ValueError, BufferError):  # an owner that lends no plain buffer
        view = np.ndarray.view(a, Rows)
        view._ledger, view._span = ledger, span
        return view


def _made(ledger: Ledger, shape, dtype, strides, offset: int, span) -> "Rows":
    view = np.ndarray.__new__(Rows, shape, dtype, buffer=ledger.owner, offset=offset,
                              strides=strides)
    view._ledger, view._span = ledger, span
    return view


def _views_of(result, ledgers: list[Ledger]):
    """``result`` with each array in it that lies in a counted array's memory made a
    counted view again; and whether there was one."""
    if isinstance(result, np.ndarray) and not isinstance(result, Rows):
        for ledger in ledgers:
            if ledger.owns(result):
                return _counted(result, ledger), True
        return result, False
    if type(result) is list:  # changed in place: NumPy's views go as ours come
        found = False
        for i, r in enumerate(result):
            result[i], one = _views_of(r, ledgers)
            found |= one
        return result, found
    if type(result) is tuple:
        pairs = [_views_of(r, ledgers) for r in result]
        return tuple(p[0] for p in pairs), any(p[1] for p in pairs)
    return result, False


# NumPy functions that read no number of their arguments.
NO_READ = {np.shape, np.ndim, np.size, np.result_type, np.can_cast, np.min_scalar_type,
           np.empty_like, np.zeros_like, np.ones_like, np.full_like, np.may_share_memory,
           np.shares_memory, np.iscomplexobj, np.isrealobj}


def _collect(x, found: list, depth: int = 0) -> None:
    if _ledger(x) is not None:
        found.append(x)
    elif isinstance(x, (list, tuple)) and depth < 4:
        for v in x:
            _collect(v, found, depth + 1)
    elif isinstance(x, dict) and depth == 0:
        for v in x.values():
            _collect(v, found, depth + 1)


class Rows(np.ndarray):
    """A 2-D array (or a view of one) whose reads of rows are noted in its :class:`Ledger`.
    Every result computed from it is NumPy's own array; a view of it is counted too."""

    __slots__ = ("_ledger", "_span")  # no dict per view: an answer may hold one per block

    def __array_finalize__(self, obj):
        self._span = None
        ledger = _ledger(obj)
        if ledger is None:
            self._ledger = None
        elif ledger.owns(self):
            self._ledger = ledger                # a view made by one of NumPy's methods
        else:
            self._ledger = None                  # a copy made by one (copy, astype, ...)
            ledger.read_view(obj)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = []
        for x in inputs:
            if isinstance(x, Rows):
                if x._ledger is not None:
                    x._ledger.read_view(x)
                x = np.ndarray.view(x, np.ndarray)
            elif isinstance(x, (list, tuple)):
                x = _plain(x)
            plain.append(x)
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_plain(o, read=False) for o in out)
        result = getattr(ufunc, method)(*plain, **kwargs)
        if out is None:
            return result
        results = result if isinstance(result, tuple) else (result,)
        given = tuple(o if o is not None else r for o, r in zip(out, results))
        return given if isinstance(result, tuple) else given[0]

    def __array_function__(self, func, types, args, kwargs):
        found: list[Rows] = []
        _collect(args, found)
        _collect(kwargs, found)
        plain_args = _plain(tuple(args), read=False)
        plain_kwargs = {k: _plain(v, read=False) for k, v in kwargs.items()}
        result = func(*plain_args, **plain_kwargs)
        if func in NO_READ:
            return result
        result, views = _views_of(result, list({id(r._ledger): r._ledger for r in found}.values()))
        if not views:  # the function made numbers of them: their rows were read
            for r in found:
                r._ledger.read_view(r)
        return result

    def __getitem__(self, index):
        ledger = self._ledger
        plain = np.ndarray.view(self, np.ndarray)
        if ledger is None:
            return plain[_plain(index)]
        index = _plain(index)
        got = plain[index]
        if isinstance(got, np.ndarray) and ledger.owns(got):
            return _counted(got, ledger)          # a view: nothing read yet
        ledger.read_index(plain, index)          # a copy, or one number
        return got

    def __setitem__(self, index, value):
        np.ndarray.view(self, np.ndarray)[_plain(index)] = _plain(value)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        plain, ledger = np.ndarray.view(self, np.ndarray), self._ledger
        if ledger is None:
            yield from plain
            return
        if self.ndim == 1:  # numbers, as NumPy gives them, each read as it is given
            for i in range(self.shape[0]):
                yield self[i]
            return
        # Each item's rows, known from the first item's: one row each when the first axis
        # runs along the rows and an item stays within its row (K, a block of K).
        start = self.__array_interface__["data"][0] - ledger.start
        first, inside = divmod(start + ledger.start - ledger.lo, ledger.row_bytes)
        step, extra = divmod(self.strides[0], ledger.row_bytes)
        width = sum((n - 1) * abs(s) for n, s in zip(self.shape[1:], self.strides[1:]))
        simple = extra == 0 and all(s >= 0 for s in self.strides[1:]) and \
            inside + width + self.itemsize <= ledger.row_bytes
        shape, strides = self.shape[1:], self.strides[1:]
        for i in range(self.shape[0]):
            row = first + i * step
            span = (row, row) if simple else None
            try:
                item = _made(ledger, shape, self.dtype, strides, start + i * self.strides[0],
                             span)
            except (TypeError, ValueError, BufferError):  # no plain buffer to lend
                item = _counted(plain[i], ledger, span)
            yield item

    def view(self, *args, **kwargs):
        """A view, counted like this array (``K.view(np.ndarray)`` too)."""
        made = np.ndarray.view(self, *args, **kwargs)
        if self._ledger is not None and isinstance(made, np.ndarray) and \
                not isinstance(made, Rows):
            made = _counted(made, self._ledger, self._span)
        return made

    @property
    def flat(self):
        if self._ledger is not None:
            self._ledger.read_view(self)
        return np.ndarray.view(self, np.ndarray).flat

    def __repr__(self):  # showing an array is not using its numbers
        return repr(np.ndarray.view(self, np.ndarray))

    def __str__(self):
        return str(np.ndarray.view(self, np.ndarray))


def _reading(name: str):
    method = getattr(np.ndarray, name)

    def read_then(self, *args, **kwargs):
        if self._ledger is not None:
            self._ledger.read_view(self)
        return method(np.ndarray.view(self, np.ndarray), *(_plain(a) for a in args), **kwargs)

    read_then.__name__ = name
    return read_then


# ndarray methods that read numbers without a ufunc or a copy NumPy would make as a Rows.
for _name in ("dot", "tolist", "item", "tobytes", "tofile", "argmax", "argmin", "argsort",
              "argpartition", "nonzero", "searchsorted", "__float__", "__int__", "__index__",
              "__complex__", "__bool__", "__contains__", "__reduce__", "__reduce_ex__",
              "__array__"):
    setattr(Rows, _name, _reading(_name))


def counted(array: np.ndarray, name: str, window: int, ids: np.ndarray | None = None):
    """``array`` as a :class:`Rows` view with a new :class:`Ledger` (``ids``: row numbers
    it may share with another), or ``array`` itself when its rows cannot be told apart
    by address (not 2-D, or rows that interleave)."""
    if type(array) is not np.ndarray or array.ndim != 2 or array.size == 0:
        return array
    d, (s0, s1) = array.shape[1], array.strides
    if s0 <= 0 or s1 < 0 or (d - 1) * s1 + array.itemsize > s0:
        return array
    return _counted(array, Ledger(array, name, window, ids))


# ----------------------------------------------------------------------------- the driver's part

class Watch:
    """The streams and ledgers of one call."""

    def __init__(self):
        self.parts: list = []

    @property
    def error(self) -> ReadTwice | None:
        return next((p.error for p in self.parts if p.error is not None), None)

    def close(self) -> None:
        for part in self.parts:
            part.close()


def _block_size(args: list, spec: dict) -> int:
    i = spec.get("block")
    value = args[i] if isinstance(i, int) and i < len(args) else None
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return max(1, int(value))
    return 1


def hand_over(args: list, spec: dict | None, names=()) -> tuple[list, Watch]:
    """``args`` as the answer gets them under ``spec`` (the driver's ``"one_pass"``), and
    the watch over them. Arguments already handed over (at grading, a case's arrays are
    counted before the memory window opens) are kept as they are."""
    watch = Watch()
    if not spec:
        return args, watch
    args = list(args)
    names = list(names or ())

    def name(i: int) -> str:
        return names[i] if i < len(names) else f"argument {i + 1}"

    i = spec.get("stream")
    if isinstance(i, int) and i < len(args):
        if not isinstance(args[i], Stream) and (
                isinstance(args[i], (list, tuple)) or isinstance(args[i], Iterator)):
            args[i] = Stream(args[i], name(i))
        if isinstance(args[i], Stream):
            watch.parts.append(args[i])
    rows = [i for i in spec.get("rows") or () if i < len(args)]
    new = [args[i] for i in rows if _ledger(args[i]) is None and isinstance(args[i], np.ndarray)]
    longest = max((len(a) for a in new if a.ndim), default=0)
    ids = np.arange(longest, dtype=np.int32) if longest else None  # shared by the ledgers
    for i in rows:
        if _ledger(args[i]) is None:
            args[i] = counted(args[i], name(i), _block_size(args, spec), ids)
        if _ledger(args[i]) is not None:
            watch.parts.append(_ledger(args[i]))
    return args, watch


@contextlib.contextmanager
def watched(args: list, spec: dict | None, names=()):
    """Run the body with ``args`` handed over; a second pass fails the call even if the
    answer caught the error: the first one is raised again, where it happened."""
    args, watch = hand_over(args, spec, names)
    try:
        yield args
    except Exception as exc:
        watch.close()
        error = watch.error
        if error is not None and error is not exc:
            raise error from None
        raise
    watch.close()
    if watch.error is not None:
        raise watch.error


# ----------------------------------------------------------------------------- messages

# What any exercise says unless its driver's "one_pass" brings its own words ("say": the
# head and the diagnosis for each error's type, with {name} for the exercise; "shown": a
# line under the input): the words travel with the recorded checks.
SAY = {
    "ReadTwice": ("{name} reads its input twice.",
                  "the check hands the input over to be read in one pass: each part once, in "
                  "order, as data that is never stored. Going back to a part already read is a "
                  "second pass."),
    "BlockKept": ("{name} keeps parts of its input to read them twice.",
                  "the check hands the input over to be read in one pass: each part is to be "
                  "let go once it has been used, not kept to go over again."),
    "NotAList": ("{name} asks its input for a length or an index, but it comes as a stream.",
                 "a stream has no length and no index, only a next part: read it with one for "
                 "loop, each part once, in order."),
    "TooManyRows": ("{name} reads more of its input in one step than a block.",
                    "the check hands the input over as arrays that note which rows are read: "
                    "a step may read at most one block of rows."),
}
SHOWN = {"stream": "(handed to your function as a stream: each block once, in order)",
         "rows": "(handed to your function as arrays that note which rows are read)"}


def message(name: str, spec: dict, case, error) -> str:
    """The check's message for ``error`` (an :class:`~grader.learner.cases.ErrorInfo`
    whose type is one of :data:`ERRORS`) on ``case``, in the words of ``spec`` (the
    driver's ``"one_pass"``): the diagnosis first, then what was read and where, then the
    smallest input."""
    say = {**SAY, **{k: tuple(v) for k, v in (spec.get("say") or {}).items()}}
    head, why = say.get(error.type, say["ReadTwice"])
    shown = spec.get("shown") or SHOWN["rows" if spec.get("stream") is None else "stream"]
    lines = [head.format(name=name), "", f"Diagnosis: {why.format(name=name)}"]
    if error.message:
        lines.append(f"  What happened: {error.message}.")
    if error.where:
        lines.append(f"  at {error.where}")
    lines += ["", f"Smallest input where it goes wrong{case_title(case)}:",
              describe_input(case), f"  {shown}"]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- a stream as a fixture

@LESSON.fixture("normal_blocks")
def _normal_blocks(seed: int, shape, loc: float = 0.0, scale: float = 1.0):
    """``shape[0]`` blocks of ``shape[1]`` normal draws, made one at a time as they are
    read. The generator is made here, before any block: the first use of NumPy's random
    module costs memory that is not the reader's."""
    rng = np.random.default_rng(int(seed))
    n, size = (int(v) for v in shape)
    return (rng.normal(loc, scale, size=size) for _ in range(n))


def normal_blocks_fixture(seed: int, n: int, size: int, loc: float = 0.0,
                          scale: float = 1.0) -> Fixture:
    """A stream of ``n`` blocks of ``size`` normal draws, each made when it is read."""
    around = f" around {loc:g}" if loc else ""
    return Fixture("normal_blocks", {"seed": int(seed), "shape": [int(n), int(size)],
                                     "loc": float(loc), "scale": float(scale)},
                   f"<a stream of {n:,} blocks of {size:,} random normal scores{around} "
                   f"(seed {seed}), each made when it is read>")


# ----------------------------------------------------------------------------- the drivers

@LESSON.driver
@dataclass(frozen=True)
class OnePass(Call):
    """``answer(*args, **kwargs)``, with argument ``stream`` handed over as a stream of
    blocks, or the arguments ``rows`` as arrays that note which rows are read, ``block``
    (an argument's index) rows at a time. ``say`` and ``shown``: the exercise's words for
    each error's type and for the line under the input (:data:`SAY`, :data:`SHOWN`)."""

    stream: int | None = None
    rows: list | None = None
    block: int | None = None
    say: dict | None = None
    shown: str = ""

    kind: ClassVar[str] = "one_pass"

    @property
    def spec(self) -> dict:
        return {"stream": self.stream, "rows": self.rows, "block": self.block,
                "say": self.say, "shown": self.shown}

    def hand_over(self, args, names=()):
        return hand_over(args, self.spec, names)[0]

    def handed_over(self, args, names=()):
        return watched(args, self.spec, names)

    def failure(self, name, case, error):
        return message(name, self.spec, case, error) if error.type in ERRORS else None


@LESSON.driver
@dataclass(frozen=True)
class Observed(Call):
    """``answer(*args, **kwargs)``, and then the attributes ``attrs`` of argument ``arg``
    (``"len"``: its length), reported as ``"name.attr"`` beside the returned value."""

    arg: int = 0
    name: str = ""
    attrs: list = ()

    kind: ClassVar[str] = "observe"

    def observed(self, args):
        target = args[self.arg]
        return {f"{self.name}.{attr}": as_data(read_attribute(target, attr)) for attr in self.attrs}


__all__ = ["BlockKept", "ERRORS", "NotAList", "Observed", "normal_blocks_fixture", "Once", "OnePass", "ReadTwice", "Rows",
           "Stream", "TooManyRows", "counted", "hand_over", "message", "watched"]
