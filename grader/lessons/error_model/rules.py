"""The rewrite rules of the error model: small edits of a right program, each the way a
learner's answer goes wrong, and the words that tell the learner which one theirs is.

A rule looks at one node of the reference's code (an expression, or a list of
statements) and offers edits: the node it would put in its place, and the details its
message needs. It never words code of the reference: a message names the *site* (the
reference's line, named in the learner's words by a ``# site:`` comment, see
:mod:`.sites`) and says, in the same words wherever the rule applies, what the learner
did there and what belongs there.
"""
from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator

# What a function that wraps one value does, in words: the wrapper left out is the mistake.
WRAPPERS = {"sqrt": "square root", "exp": "exponential", "log": "logarithm", "abs": "absolute value"}
REDUCTIONS = {"sum": "sum", "max": "maximum", "min": "minimum", "mean": "mean", "amax": "maximum",
              "amin": "minimum", "logsumexp": "log-sum-exp"}
TRIANGLES = {"triu": "tril", "tril": "triu"}
TRANSPOSES = {"swapaxes", "transpose", "permute", "swapdims"}
AXIS_WORDS = {"axis", "dim"}
OTHER_AXES = (-1, -2, 0, 1)
COMPARE_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
COMPARE_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


@dataclass(frozen=True)
class Rule:
    """One kind of small edit. ``did`` words what a learner whose answer behaves like the
    edit did, at a site; ``fix`` what belongs there. Both take the site and the edit's
    details, and are the only words of the rule's messages, in every exercise."""

    name: str
    did: Callable[..., str]
    fix: Callable[..., str]
    rank: int  # among edits that behave alike, the lower rank is the one named

    def message(self, site: str, detail: dict) -> str:
        return (f"your answer behaves exactly as if {self.did(site, **detail)}. "
                f"{self.fix(site, **detail)}")


@dataclass
class Edit:
    """One edit a rule offers: what goes in the node's place (a node, or for a list of
    statements, the new list), and the details its message needs."""

    rule: Rule
    new: object
    detail: dict = field(default_factory=dict)
    twice: bool = False  # made at two sites alike (see :data:`TWICE`)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _rule(name, did, fix, rank) -> Rule:
    return Rule(name, did, fix, rank)


AXIS = _rule("axis changed",
             lambda site, new, old: f"{site} were taken over axis {new} instead of axis {old}",
             lambda site, new, old: f"Check which axis {site} runs over.", 1)
OFF_BY_ONE = _rule("off by one",
                   lambda site, more, end="stop": f"{site} {'started' if end == 'start' else 'stopped'} "
                   f"one step {'late' if more else 'early'}",
                   lambda site, more, end="stop": f"Check where {site} starts and where it stops.", 4)
FLOOR_DIVISION = _rule("floor division",
                       lambda site: f"{site} divided with `//`, which rounds down to a whole number",
                       lambda site: "Divide with `/` there.", 2)
# Dividing by a factor is multiplying by it turned upside down (a power's sign flipped, 1/x
# for x): the words say which way up the factor should be, whichever form the answer has.
MULTIPLIED = _rule("multiplied for divided",
                   lambda site: f"{site} multiplied by a factor it should divide by (the factor "
                   "turned upside down)",
                   lambda site: f"Check which way up that factor of {site} is.", 2)
DIVIDED = _rule("divided for multiplied",
                lambda site: f"{site} divided by a factor it should multiply by (the factor "
                "turned upside down)",
                lambda site: f"Check which way up that factor of {site} is.", 2)
SIGN = _rule("sign flipped",
             lambda site: f"a sign in {site} were flipped",
             lambda site: f"Check the signs in {site}.", 2)
PLUS_MINUS = _rule("plus and minus swapped",
                   lambda site, was: f"{site} {'subtracted' if was == 'plus' else 'added'} where it "
                   f"should {'add' if was == 'plus' else 'subtract'}",
                   lambda site, was: f"Check the signs in {site}.", 2)
LEFT_OUT = _rule("operand left out",
                 lambda site, what: f"{what} of {site} were left out",
                 lambda site, what: "Put it back.", 3)
WRAPPER = _rule("function left out",
                lambda site, words: f"the {words} in {site} were left out",
                lambda site, words: f"Take the {words} there.", 1)
REDUCTION = _rule("reduction left out",
                  lambda site, words: f"the {words} in {site} were left out",
                  lambda site, words: f"Take the {words} there.", 1)
KEEPDIMS = _rule("reduced axis not kept",
                 lambda site: f"{site} dropped the axis it reduces over",
                 lambda site: "Keep that axis, with length 1 (`keepdims=True`), so that it lines "
                 "up with what it is combined with.", 1)
NO_TRANSPOSE = _rule("transpose left out",
                     lambda site, axes="": f"the transpose in {site} were left out",
                     lambda site, axes="": f"Swap {axes or 'its last two axes'} there.", 1)
FULL_TRANSPOSE = _rule("full transpose",
                       lambda site: f"{site} used `.T`, which reverses every axis, the batch "
                       "axes too",
                       lambda site: "Swap only the last two axes (`swapaxes(-1, -2)`).", 1)
OTHER_WAY = _rule("the other way round",
                  lambda site, what: f"{site} {what} the other way round",
                  lambda site, what: "Swap the two sides there.", 2)
SWAPPED = _rule("operands swapped",
                lambda site, what: f"the {what} of {site} were swapped",
                lambda site, what: "Swap them back.", 2)
DEFAULT = _rule("argument left at its default",
                lambda site, word: f"{site} were not given `{word}`, so that it took its default",
                lambda site, word: f"Pass `{word}` on there.", 1)
INTO_LOOP = _rule("statement moved into the loop",
                  lambda site: f"{site} were redone on every pass of the loop",
                  lambda site: "Do it once, before the loop.", 2)
OUT_OF_LOOP = _rule("statement moved out of the loop",
                    lambda site: f"{site} were done once, after the loop",
                    lambda site: "Do it on every pass of the loop.", 2)
START = _rule("initial value changed",
              lambda site, new, old: f"{site} started from {new} instead of {old}",
              lambda site, new, old: f"Start it from {old}.", 2)
RETURN_ORDER = _rule("results returned in the other order",
                     lambda site: "the two results were returned in the other order",
                     lambda site: "Return them in the order the docstring gives.", 1)
NEW_AXIS = _rule("new axis left out",
                 lambda site: f"the new axis (`None`) in {site} were left out, so that it "
                 "broadcasts along the wrong axis",
                 lambda site: "Add the axis there.", 1)
BOUNDARY = _rule("boundary included or left out",
                 lambda site, new, old: f"{site} used `{new}` where it needs `{old}`",
                 lambda site, new, old: f"Check whether {site} includes its boundary.", 2)
TRIANGLE = _rule("other triangle",
                 lambda site: f"{site} kept the other triangle",
                 lambda site: "Check which triangle it keeps.", 1)
INVERTED = _rule("True and False swapped",
                 lambda site: f"True and False were swapped in {site}",
                 lambda site: f"Check which entries of {site} are True.", 1)

FROM_ZERO = _rule("counted from 0",
                  lambda site: f"the positions in {site} were counted from 0 instead of from "
                  "where they start",
                  lambda site: "Count them from where they start.", 2)
BREAK = _rule("break for continue",
              lambda site: f"{site} stopped the loop (`break`) where it should only go on to "
              "the next pass (`continue`)",
              lambda site: "Go on to the next pass there.", 2)
SIBLING = _rule("one name for another",
                lambda site, new, old: f"{site} used `{new}` where it needs `{old}`",
                lambda site, new, old: f"Use `{old}` there.", 3)

LEFT_OUT_STEP = _rule("step left out",
                      lambda site: f"{site} were left out",
                      lambda site: f"Do {site}.", 2)
OUT_OF_ORDER = _rule("two steps in the other order",
                     lambda site, after: f"{site} were done after {after}",
                     lambda site, after: f"Do {site} first.", 2)
CONSTANT = _rule("a parameter's default used for it",
                 lambda site, word, value: f"{site} used {value} where it needs `{word}`",
                 lambda site, word, value: f"Use `{word}` there.", 1)

OVERWRITE = _rule("overwritten instead of added to",
                  lambda site: f"{site} replaced what was there (`=`) where it should add to it (`+=`)",
                  lambda site: "Add to it there.", 2)
ELEMENTWISE = _rule("entry by entry for the matrix product",
                    lambda site: f"{site} multiplied entry by entry (`*`) where it needs the "
                    "matrix product (`@`)",
                    lambda site: "Take the matrix product there.", 1)
INDICES = _rule("indices swapped",
                lambda site, first, second: f"{site} read `[{second}, {first}]` where it needs "
                f"`[{first}, {second}]`",
                lambda site, first, second: "Check which index comes first there.", 2)
WHOLE = _rule("reduced over every axis",
              lambda site, words: f"the {words} in {site} were taken over every entry at once, "
              "not along one axis",
              lambda site, words: f"Take the {words} along one axis there.", 1)

RETURN_IN_LOOP = _rule("return moved into the loop",
                       lambda site: f"{site} were inside the loop, so that the loop ends after "
                       "its first pass",
                       lambda site: "Do it once the loop is over.", 2)
NO_COPY = _rule("copy left out",
                lambda site: f"the copy in {site} were left out, so that each change lands in "
                "the original and stays there for the next ones",
                lambda site: "Change a copy there.", 1)

# A value the function computed earlier, used where another belongs: both are named by the
# sites that compute them, never by the reference's variable names.
OTHER_VALUE = _rule("another value used",
                    lambda site, new, old: f"{site} used {new} where it needs {old}",
                    lambda site, new, old: f"Use {old} there.", 3)
COUNTER = _rule("another loop's counter",
                lambda site, array: f"{site} indexed {array} with the counter of another loop",
                lambda site, array: f"Check which loop's counter indexes {array} there.", 2)
ROW_COLUMN = _rule("a row for a column",
                   lambda site, array, got, want: f"{site} took a {got} of {array} where it needs a {want}",
                   lambda site, array, got, want: f"Take a {want} of {array} there.", 2)
LENGTH = _rule("another axis's length",
               lambda site, new, old: f"{site} read the length of axis {new} where it needs "
               f"axis {old}",
               lambda site, new, old: f"Check which axis's length {site} reads.", 2)
ZERO_FOR_INF = _rule("0 for minus infinity",
                     lambda site: f"{site} used 0 where it needs minus infinity",
                     lambda site: "Use minus infinity there: after the exponential it gives "
                     "exactly 0, where 0 gives 1.", 2)
# A value that comes out transposed is named before the edits that make it so (arguments
# swapped, letters of an einsum in the other order): it says what the learner will see.
WHOLE_TRANSPOSED = _rule("result transposed",
                         lambda site: f"{site} came out transposed (rows and columns swapped)",
                         lambda site: f"Check which axis of {site} holds what.", 1)
TRANSPOSED = _rule("transpose added",
                   lambda site, what: f"{what} of {site} were transposed (rows and columns swapped)",
                   lambda site, what: f"Check which axis of {what} of {site} holds what.", 2)

# The slips a learner makes the same way at two places at once (the queries and the keys
# both turned without ``base``, both transposed with ``.T``): the error model also makes
# each of them at every two sites of a function, as one mistake named by both sites.
TWICE = frozenset({DEFAULT, CONSTANT, FULL_TRANSPOSE, NO_TRANSPOSE, WRAPPER, FLOOR_DIVISION, KEEPDIMS,
                   SIGN, ZERO_FOR_INF, START})

RULES = (OTHER_VALUE, COUNTER, ZERO_FOR_INF, LENGTH, ROW_COLUMN, TRANSPOSED, WHOLE_TRANSPOSED, RETURN_IN_LOOP, NO_COPY, OVERWRITE, ELEMENTWISE, INDICES, WHOLE, LEFT_OUT_STEP, OUT_OF_ORDER, CONSTANT, OTHER_WAY, FROM_ZERO, BREAK, SIBLING, AXIS, OFF_BY_ONE, FLOOR_DIVISION, MULTIPLIED, DIVIDED, SIGN, PLUS_MINUS, LEFT_OUT,
         WRAPPER, REDUCTION, KEEPDIMS, NO_TRANSPOSE, FULL_TRANSPOSE, SWAPPED, DEFAULT, INTO_LOOP,
         OUT_OF_LOOP, START, RETURN_ORDER, NEW_AXIS, BOUNDARY, TRIANGLE, INVERTED)


# ----------------------------------------------------------------------------- expressions

def _called(node) -> str:
    """The name a call calls: ``np.sqrt(x)`` and ``sqrt(x)`` -> "sqrt", ``x.sum()`` -> "sum"."""
    if isinstance(node, ast.Call):
        f = node.func
        return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return ""


MODULES = ("np", "numpy", "torch", "math", "F")
# Calls whose arguments are not operands a learner could swap: sizes, ranges, settings.
NOT_OPERANDS = {"range", "where", "full", "arange", "zeros", "ones", "empty", "get", "astype",
                "reshape", "view", "swapaxes", "transpose", "permute", "isinstance", "getattr"}


def _operand(call: ast.Call) -> ast.expr | None:
    """What a reduction or transpose works on: ``x`` in ``x.sum(...)`` and ``np.sum(x, ...)``."""
    f = call.func
    if isinstance(f, ast.Attribute) and not (isinstance(f.value, ast.Name) and f.value.id in MODULES):
        return f.value
    return call.args[0] if call.args else None


def _int(node) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _int(node.operand) is not None:
        return -_int(node.operand)
    return None


def _num(value: int) -> ast.expr:
    return ast.UnaryOp(ast.USub(), ast.Constant(-value)) if value < 0 else ast.Constant(value)


def _axis_edits(node: ast.Call) -> Iterator[Edit]:
    name = _called(node)
    for i, kw in enumerate(node.keywords):
        if kw.arg in AXIS_WORDS and name in REDUCTIONS:
            call = copy.deepcopy(node)
            del call.keywords[i]
            call.keywords = [k for k in call.keywords if k.arg != "keepdims"]
            yield Edit(WHOLE, call, {"words": REDUCTIONS[name]})
        old = _int(kw.value)
        if kw.arg in AXIS_WORDS and old is not None:
            for new in OTHER_AXES:
                if new != old:
                    call = copy.deepcopy(node)
                    call.keywords[i].value = _num(new)
                    yield Edit(AXIS, call, {"new": new, "old": old})
        if kw.arg == "keepdims" and isinstance(kw.value, ast.Constant) and kw.value.value is True:
            call = copy.deepcopy(node)
            del call.keywords[i]
            yield Edit(KEEPDIMS, call)


def expression_edits(node: ast.AST) -> Iterator[Edit]:
    """The edits every rule offers for one expression node."""
    if _is_minus_inf(node):
        yield Edit(ZERO_FOR_INF, ast.Constant(0.0))
        return
    if isinstance(node, ast.Call):
        name = _called(node)
        yield from _axis_edits(node)
        method = isinstance(node.func, ast.Attribute)
        if name in ("copy", "clone") and method and not node.args and not node.keywords:
            yield Edit(NO_COPY, node.func.value)
        if name in WRAPPERS and len(node.args) == 1 and not node.keywords:
            yield Edit(WRAPPER, node.args[0], {"words": WRAPPERS[name]})
        if name in REDUCTIONS:
            inner = _operand(node)
            if inner is not None:
                yield Edit(REDUCTION, inner, {"words": REDUCTIONS[name]})
        if name in TRANSPOSES and method:
            target = _operand(node)
            axes = [_int(a) for a in node.args if a is not target]
            if target is not None:
                last_two = sorted(axes) == [-2, -1]
                words = "" if last_two or None in axes or len(axes) != 2 else \
                    f"axes {axes[0]} and {axes[1]}"
                yield Edit(NO_TRANSPOSE, target, {"axes": words} if words else {})
                if last_two:
                    yield Edit(FULL_TRANSPOSE, ast.Attribute(copy.deepcopy(target), "T", ast.Load()))
        if name in TRIANGLES:
            call = copy.deepcopy(node)
            if isinstance(call.func, ast.Attribute):
                call.func.attr = TRIANGLES[name]
            else:
                call.func.id = TRIANGLES[name]
            yield Edit(TRIANGLE, call)
        if name == "arange" and len(node.args) == 2 and not node.keywords:
            call = copy.deepcopy(node)
            call.args = [ast.BinOp(copy.deepcopy(node.args[1]), ast.Sub(), copy.deepcopy(node.args[0]))]
            yield Edit(FROM_ZERO, call)
        if name == "range" and node.args:
            bounds = node.args[:2] if len(node.args) > 1 else [ast.Constant(0), node.args[0]]
            for i, arg in enumerate(bounds):
                for more in (True, False):
                    call = copy.deepcopy(node)
                    call.args = [copy.deepcopy(b) for b in bounds] + [copy.deepcopy(a) for a in node.args[2:]]
                    call.args[i] = ast.BinOp(copy.deepcopy(arg), ast.Add() if more else ast.Sub(), ast.Constant(1))
                    yield Edit(OFF_BY_ONE, call, {"more": more, "end": "start" if i == 0 else "stop"})
        plain = [a for a in node.args if not isinstance(a, ast.Starred)]
        if len(plain) == len(node.args) >= 2 and not name.startswith("_") and name not in NOT_OPERANDS:
            for i in range(len(node.args) - 1):
                if isinstance(node.args[i], ast.Constant) or isinstance(node.args[i + 1], ast.Constant):
                    continue  # a setting, not an operand
                call = copy.deepcopy(node)
                call.args[i], call.args[i + 1] = call.args[i + 1], call.args[i]
                yield Edit(SWAPPED, call, {"what": "arguments"})
        named = [i for i, kw in enumerate(node.keywords) if kw.arg and isinstance(kw.value, ast.Name)]
        for a, b in zip(named, named[1:]) if name not in NOT_OPERANDS else ():
            call = copy.deepcopy(node)
            call.keywords[a].value, call.keywords[b].value = call.keywords[b].value, call.keywords[a].value
            yield Edit(SWAPPED, call, {"what": "operands"})
        last = node.args[-1] if node.args else None
        # (A private core's settings are no argument the learner has.)
        private = name.startswith("_")
        if isinstance(last, ast.Name) and len(node.args) >= 2 and not method and not private and \
                name not in NOT_OPERANDS:
            call = copy.deepcopy(node)
            call.args = call.args[:-1]
            yield Edit(DEFAULT, call, {"word": last.id})
        for i, kw in enumerate(node.keywords):
            if kw.arg and kw.arg not in AXIS_WORDS and kw.arg not in ("keepdims", "dtype", "out") \
                    and isinstance(kw.value, ast.Name) and kw.value.id == kw.arg and not private:
                call = copy.deepcopy(node)
                del call.keywords[i]
                yield Edit(DEFAULT, call, {"word": kw.arg})
        if name == "matmul" and len(node.args) == 2 and not node.keywords:
            def product(a, b, call=node):
                out = copy.deepcopy(call)
                out.args = [a, b]
                return out
            yield from _transposed_edits(node.args[0], node.args[1], product)
        if name in ("zeros", "zeros_like", "ones", "ones_like"):
            other = {"zeros": "ones", "ones": "zeros", "zeros_like": "ones_like", "ones_like": "zeros_like"}[name]
            call = copy.deepcopy(node)
            if isinstance(call.func, ast.Attribute):
                call.func.attr = other
            else:
                call.func.id = other
            old, new = ("0", "1") if name.startswith("zeros") else ("1", "0")
            yield Edit(START, call, {"new": new, "old": old})
    elif isinstance(node, ast.BinOp):
        op = type(node.op)
        if op is ast.Div:
            yield Edit(OTHER_WAY, ast.BinOp(node.right, ast.Div(), node.left), {"what": "divided"})
            yield Edit(FLOOR_DIVISION, ast.BinOp(node.left, ast.FloorDiv(), node.right))
            yield Edit(MULTIPLIED, ast.BinOp(node.left, ast.Mult(), node.right))
            yield Edit(LEFT_OUT, node.left, {"what": "the divisor"})
        elif op is ast.Mult:
            yield Edit(DIVIDED, ast.BinOp(node.left, ast.Div(), node.right))
            yield Edit(LEFT_OUT, node.left, {"what": "a factor"})
            yield Edit(LEFT_OUT, node.right, {"what": "a factor"})
        elif op in (ast.Add, ast.Sub):
            word = "plus" if op is ast.Add else "minus"
            if op is ast.Sub:
                yield Edit(OTHER_WAY, ast.BinOp(node.right, ast.Sub(), node.left), {"what": "subtracted"})
            yield Edit(PLUS_MINUS, ast.BinOp(node.left, ast.Sub() if op is ast.Add else ast.Add(), node.right),
                       {"was": word})
            yield Edit(LEFT_OUT, node.left, {"what": "a term"})
            if op is ast.Add:
                yield Edit(LEFT_OUT, node.right, {"what": "a term"})
        elif op is ast.MatMult:
            yield Edit(SWAPPED, ast.BinOp(node.right, ast.MatMult(), node.left), {"what": "operands"})
            yield Edit(ELEMENTWISE, ast.BinOp(node.left, ast.Mult(), node.right))
            yield from _transposed_edits(node.left, node.right,
                                         lambda a, b: ast.BinOp(a, ast.MatMult(), b))
        elif op is ast.Pow:
            yield Edit(SIGN, ast.BinOp(node.left, ast.Pow(), ast.UnaryOp(ast.USub(), node.right)))
    elif isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.USub) and _int(node) is None:
            yield Edit(SIGN, node.operand)
        if isinstance(node.op, ast.Invert):
            yield Edit(INVERTED, node.operand)
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE_FLIP:
        old = type(node.ops[0])
        new = COMPARE_FLIP[old]
        yield Edit(BOUNDARY, ast.Compare(node.left, [new()], node.comparators),
                   {"new": COMPARE_TEXT[new], "old": COMPARE_TEXT[old]})
    elif isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
        yield Edit(NO_TRANSPOSE, node.value)
    elif isinstance(node, ast.Subscript):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if isinstance(node.value, ast.Attribute) and node.value.attr == "shape" and len(parts) == 1 \
                and _int(parts[0]) is not None:
            old = _int(parts[0])
            for new in OTHER_AXES:
                if new != old and (old < 0) == (new < 0):
                    sub = copy.deepcopy(node)
                    sub.slice = _num(new)
                    yield Edit(LENGTH, sub, {"new": new, "old": old})
        array = f"`{node.value.id}`" if isinstance(node.value, ast.Name) else "an array"
        full = [isinstance(p, ast.Slice) and p.lower is p.upper is p.step is None for p in parts]
        if len(parts) == 2 and full.count(True) == 1 and not any(isinstance(p, ast.Slice) for p, f in
                                                                    zip(parts, full) if not f):
            sub = copy.deepcopy(node)
            sub.slice.elts.reverse()
            got, want = ("column", "row") if full[1] else ("row", "column")
            yield Edit(ROW_COLUMN, sub, {"array": array, "got": got, "want": want})
        if len(parts) == 2 and all(isinstance(p, ast.Name) for p in parts) and parts[0].id != parts[1].id:
            sub = copy.deepcopy(node)
            sub.slice.elts.reverse()
            yield Edit(INDICES, sub, {"first": parts[0].id, "second": parts[1].id})
        if any(isinstance(p, ast.Constant) and p.value is None for p in parts):
            kept = [p for p in parts if not (isinstance(p, ast.Constant) and p.value is None)]
            if kept:
                sub = copy.deepcopy(node)
                sub.slice = ast.Tuple(kept, ast.Load()) if len(kept) > 1 else kept[0]
                yield Edit(NEW_AXIS, sub)
        for i, p in enumerate(parts):
            if isinstance(p, ast.Slice):
                for end in ("lower", "upper"):
                    bound = getattr(p, end)
                    if bound is None:
                        continue
                    for more in (True, False):
                        sub = copy.deepcopy(node)
                        target = (sub.slice.elts[i] if isinstance(sub.slice, ast.Tuple) else sub.slice)
                        setattr(target, end, ast.BinOp(copy.deepcopy(bound), ast.Add() if more else ast.Sub(),
                                                       ast.Constant(1)))
                        yield Edit(OFF_BY_ONE, sub, {"more": more})


def start_edits(value: ast.expr, returned: bool = False) -> Iterator[Edit]:
    """The edits of a value a name starts from or a function returns (the whole right side
    of an assignment, or of a ``return``)."""
    if _is_minus_inf(value) and not returned:
        yield Edit(START, ast.Constant(0.0), {"new": "0", "old": MINUS_INFINITY})
    elif isinstance(value, (ast.Call, ast.BinOp)):
        yield Edit(WHOLE_TRANSPOSED, ast.Call(ast.Attribute(copy.deepcopy(value), "swapaxes", ast.Load()),
                                              [_num(-1), _num(-2)], []))
    if isinstance(value, ast.Constant) and type(value.value) in (int, float) and value.value in (0, 1) \
            and not returned:
        yield Edit(START, ast.Constant(type(value.value)(1 - value.value)),
                   {"new": f"{1 - value.value:g}", "old": f"{value.value:g}"})


def _is_minus_inf(node) -> bool:
    """``-np.inf``, ``-math.inf``, ``-torch.inf`` or ``float("-inf")``."""
    if isinstance(node, ast.Call) and _called(node) == "float" and len(node.args) == 1:
        arg = node.args[0]
        return isinstance(arg, ast.Constant) and isinstance(arg.value, str) and \
            arg.value.strip().lower() in ("-inf", "-infinity")
    return (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Attribute) and node.operand.attr == "inf")


def _transposed_edits(left, right, make) -> Iterator[Edit]:
    """A transpose (of the last two axes) added to one factor of a matrix product; a factor
    already transposed is left to the rules that take a transpose out. (A value that comes
    out transposed as a whole is :func:`start_edits`'s.)"""
    def swapped(x):
        return ast.Call(ast.Attribute(copy.deepcopy(x), "swapaxes", ast.Load()), [_num(-1), _num(-2)], [])

    def transposed(x):
        return (isinstance(x, ast.Attribute) and x.attr in ("T", "mT")) or _called(x) in TRANSPOSES

    if not transposed(left):
        yield Edit(TRANSPOSED, make(swapped(left), copy.deepcopy(right)), {"what": "the first factor"})
    if not transposed(right):
        yield Edit(TRANSPOSED, make(copy.deepcopy(left), swapped(right)), {"what": "the second factor"})


# ----------------------------------------------------------------------------- statements

SIMPLE = (ast.Assign, ast.AugAssign, ast.Expr)


def statement_edits(body: list[ast.stmt], i: int, next_site: str | None = None) -> Iterator[Edit]:
    """The edits that leave out, move or reorder statement ``i`` of ``body``: each gives
    the new list. ``next_site``: the site of the statement after it, if it is one."""
    stmt = body[i]
    nxt = body[i + 1] if i + 1 < len(body) else None
    if isinstance(stmt, SIMPLE) and len(body) > 1:
        yield Edit(LEFT_OUT_STEP, [*body[:i], *body[i + 1:]])
    if isinstance(stmt, SIMPLE) and isinstance(nxt, SIMPLE) and next_site:
        yield Edit(OUT_OF_ORDER, [*body[:i], nxt, stmt, *body[i + 2:]], {"after": next_site})
    if isinstance(stmt, ast.Assign) and isinstance(nxt, (ast.For, ast.While)):
        loop = copy.deepcopy(nxt)
        loop.body = [copy.deepcopy(stmt), *loop.body]
        yield Edit(INTO_LOOP, [*body[:i], loop, *body[i + 2:]])
    if isinstance(stmt, (ast.For, ast.While)) and len(stmt.body) >= 2:
        last = stmt.body[-1]
        if isinstance(last, (ast.Assign, ast.AugAssign, ast.Expr)):
            loop = copy.deepcopy(stmt)
            loop.body = loop.body[:-1]
            yield Edit(OUT_OF_LOOP, [*body[:i], loop, copy.deepcopy(last), *body[i + 1:]])
    before = body[i - 1] if i > 0 else None
    if isinstance(stmt, ast.Return) and isinstance(before, (ast.For, ast.While)):
        loop = copy.deepcopy(before)
        loop.body = [*loop.body, copy.deepcopy(stmt)]
        yield Edit(RETURN_IN_LOOP, [*body[:i - 1], loop, *body[i:]])
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
        yield Edit(OVERWRITE, [*body[:i], ast.Assign([copy.deepcopy(stmt.target)], copy.deepcopy(stmt.value)),
                               *body[i + 1:]])
    if isinstance(stmt, ast.Continue):
        yield Edit(BREAK, [*body[:i], ast.Break(), *body[i + 1:]])
    if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Tuple) and len(stmt.value.elts) == 2:
        ret = copy.deepcopy(stmt)
        ret.value.elts.reverse()
        yield Edit(RETURN_ORDER, [*body[:i], ret, *body[i + 1:]])


# The end of a parameter's name that says which of Q, K and V it belongs to: Q, K, V,
# positions_q, positions_k, W_q, W_k, W_v, block_q, block_k are siblings by it.
PARAMETER_ROLE = re.compile(r"(?:(?<=_)|^)[qkvQKV]$")


def siblings(fn: ast.FunctionDef) -> dict[str, tuple[str, ...]]:
    """Names of ``fn`` made side by side, as in ``q, k, v = X @ W_q, X @ W_k, X @ W_v``:
    the names it assigns (q, k, v), and the names its right sides differ by in the same
    place (W_q, W_k, W_v). Each name's siblings are the names a learner may write for it."""
    groups: list[list[str]] = []
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Tuple) and isinstance(node.value, ast.Tuple)
                and len(node.targets[0].elts) == len(node.value.elts) >= 2):
            continue
        targets = node.targets[0].elts
        if all(isinstance(t, ast.Name) for t in targets):
            groups.append([t.id for t in targets])
        first = node.value.elts[0]
        for other in node.value.elts[1:]:
            pairs = _differing_names(first, other)
            if pairs is not None:
                for a, b in pairs:
                    groups.append([a, b])
    by_stem: dict[str, list[str]] = {}
    for arg in fn.args.args + fn.args.kwonlyargs:
        stem = PARAMETER_ROLE.sub("", arg.arg)
        if stem != arg.arg:
            by_stem.setdefault(stem, []).append(arg.arg)
    groups += [names for names in by_stem.values() if len(names) >= 2]
    found: dict[str, tuple[str, ...]] = {}
    for names in groups:
        for name in names:
            found[name] = tuple(dict.fromkeys([*found.get(name, ()), *(n for n in names if n != name)]))
    return found


def _differing_names(a: ast.AST, b: ast.AST) -> list[tuple[str, str]] | None:
    """The pairs of names two expressions of the same form differ by, place for place;
    None if they differ in anything else."""
    if type(a) is not type(b):
        return None
    if isinstance(a, ast.Name):
        return [] if a.id == b.id else [(a.id, b.id)]
    pairs = []
    for (name, x), (_, y) in zip(ast.iter_fields(a), ast.iter_fields(b)):
        xs, ys = (x, y) if isinstance(x, list) else ([x], [y])
        if len(xs) != len(ys):
            return None
        for u, v in zip(xs, ys):
            if isinstance(u, ast.AST):
                found = _differing_names(u, v)
                if found is None:
                    return None
                pairs += found
            elif u != v and name not in ("ctx",):
                return None
    return pairs


def sibling_edits(node: ast.AST, group: dict[str, tuple[str, ...]]) -> Iterator[Edit]:
    """A name read where one of its siblings belongs (:func:`siblings`)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        for other in group.get(node.id, ()):
            yield Edit(SIBLING, ast.Name(other, ast.Load()), {"new": other, "old": node.id})


MINUS_INFINITY = "minus infinity"  # a default of -inf (-np.inf, -math.inf), as defaults() gives it


def defaults(fn: ast.FunctionDef) -> dict[str, object]:
    """The parameters of ``fn`` whose default is a number, with that number (or
    :data:`MINUS_INFINITY`)."""
    def number(d):
        if isinstance(d, ast.Constant) and type(d.value) in (int, float):
            return d.value
        return MINUS_INFINITY if _is_minus_inf(d) else None

    args = fn.args.args
    pairs = [*zip(args[len(args) - len(fn.args.defaults):], fn.args.defaults),
             *zip(fn.args.kwonlyargs, fn.args.kw_defaults)]
    return {a.arg: number(d) for a, d in pairs if d is not None and number(d) is not None}


def constant_edits(node: ast.AST, numbers: dict[str, object]) -> Iterator[Edit]:
    """A parameter read where its default's number is written instead (:func:`defaults`);
    one whose default is minus infinity, read where 0 is written instead (a running
    maximum started from 0)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in numbers:
        value = numbers[node.id]
        if value == MINUS_INFINITY:
            yield Edit(START, ast.Constant(0.0), {"new": "0", "old": MINUS_INFINITY})
        else:
            yield Edit(CONSTANT, ast.Constant(value), {"word": node.id, "value": f"{value:g}"})


def counters(fn: ast.FunctionDef) -> tuple[str, ...]:
    """The names the loops of ``fn`` count with (``for i in ...``), in order."""
    return tuple(dict.fromkeys(node.target.id for node in ast.walk(fn)
                               if isinstance(node, ast.For) and isinstance(node.target, ast.Name)))


def counter_edits(node: ast.AST, names: tuple[str, ...]) -> Iterator[Edit]:
    """An index read with another loop's counter: ``B[i]`` where ``B[p]`` belongs."""
    if not isinstance(node, ast.Subscript) or len(names) < 2:
        return
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    array = f"`{node.value.id}`" if isinstance(node.value, ast.Name) else "an array"
    for i, part in enumerate(parts):
        if isinstance(part, ast.Name) and part.id in names:
            for other in names:
                if other != part.id:
                    sub = copy.deepcopy(node)
                    target = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else None
                    if target is None:
                        sub.slice = ast.Name(other, ast.Load())
                    else:
                        target[i] = ast.Name(other, ast.Load())
                    yield Edit(COUNTER, sub, {"array": array})


def values(fn: ast.FunctionDef, sites: dict[int, str]) -> dict[str, tuple]:
    """The names ``fn`` assigns first by a statement that is a site: each with that line
    and the site's words, which name the value in a message (a name assigned again, as
    the scores are when scaled and masked, keeps the words of its first site); and its
    positional parameters, with their own names as the words and a third item, True."""
    found: dict[str, list[tuple[int, str]]] = {}
    for node in ast.walk(fn):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Name):
                found.setdefault(t.id, []).append((node.lineno, sites.get(node.lineno, "")))
    known = {name: min(spots) for name, spots in found.items() if min(spots)[1]}
    # A parameter is named as the learner's code names it; it is only ever the value
    # replaced (by one the function computed), never put in another's place.
    for arg in fn.args.args:  # (a private core's keyword-only settings are no value of the learner's)
        if arg.arg not in known and arg.arg not in ("self", "cls"):
            known[arg.arg] = (fn.lineno, f"`{arg.arg}`", True)
    return known


def value_edits(node: ast.AST, line: int, known: dict[str, tuple]) -> Iterator[Edit]:
    """A value computed earlier read where another computed value belongs (:func:`values`)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in known:
        old = known[node.id][1]
        for other, (at, words, *parameter) in known.items():
            if other != node.id and at < line and words != old and not parameter:
                yield Edit(OTHER_VALUE, ast.Name(other, ast.Load()), {"new": words, "old": old})

