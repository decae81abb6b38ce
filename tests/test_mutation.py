"""Changes to an input read from the source (grader.learner.mutation): at grading, a
submission that patches the kernel's own comparison still loses the points of an
answer that changes its input in place."""
import ast

import pytest

from grader.learner.mutation import source_changes

CASES = {
"direct": ("def f(scores, mask):\n    scores[~mask] = -1\n    return scores", {"scores"}),
"asarray": ("import numpy as np\ndef f(scores, mask):\n    s = np.asarray(scores)\n    s[~mask] = -np.inf\n    return s", {"scores"}),
"copy": ("def f(scores, mask):\n    scores = scores.copy()\n    scores[~mask] = -1\n    return scores", set()),
"nparray": ("import numpy as np\ndef f(scores, mask):\n    scores = np.array(scores, dtype=float)\n    scores[~mask] = -1\n    return scores", set()),
"where": ("import numpy as np\ndef f(scores, mask):\n    s = np.where(mask, scores, -np.inf)\n    s -= s.max()\n    return s", set()),
"iadd": ("def f(x):\n    x -= x.max()\n    return x", {"x"}),
"rebind_add": ("def f(x):\n    x = x - x.max()\n    x -= 1\n    return x", set()),
"branch": ("def f(x, c):\n    if c:\n        x = x.copy()\n    x[0] = 1\n    return x", {"x"}),
"loop_rows": ("def f(x):\n    for row in x:\n        row[0] = 1\n    return x", {"x"}),
"helper": ("def g(a):\n    a.fill(0)\ndef f(x):\n    g(x)\n    return x", {"x"}),
"out": ("import numpy as np\ndef f(x):\n    np.exp(x, out=x)\n    return x", {"x"}),
"torch": ("def f(x, m):\n    return x.masked_fill_(m, 0)", {"x"}),
"copyto": ("import numpy as np\ndef f(x, m):\n    np.copyto(x, 0, where=m)\n    return x", {"x"}),
"fancy_copy": ("def f(x, m):\n    y = x[m]\n    y[0] = 1\n    return y", set()),
"view_T": ("def f(x):\n    y = x.T\n    y[0] = 1\n    return y", {"x"}),
"try": ("def f(x):\n    try:\n        x[0] = 1\n    except Exception:\n        pass\n    return x", {"x"}),
"kwonly": ("def f(*, x):\n    x[:] = 0", {"x"}),
"nested": ("def f(x):\n    def inner():\n        x[0] = 2\n    inner()\n    return x", {"x"}),
"tuple_unpack": ("def f(x, y):\n    a, b = x, y\n    b[0] = 1", {"y"}),
"list_append": ("def f(xs):\n    xs.append(1)\n    return xs", {"xs"}),
"course_checks": ("def f(scores, mask):\n    scores = as_array(scores, 'scores', min_ndim=1)\n"
                  "    mask = bool_mask(mask, scores.shape)\n    scores[~mask] = -1\n    return scores", {"scores"}),
"operands": ("def f(A, B):\n    A, B = matmul_operands(A, B)\n    B[0] = 1\n    return A @ B", {"A", "B"}),
"index_name": ("def f(x, i):\n    r = x[i]\n    r[0] = 1", set()),
"with_T_reshape": ("def f(x):\n    y = x.reshape(-1)\n    y[0] = 0", {"x"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_parameters_changed_in_place_are_read_from_the_source(name):
    source, wanted = CASES[name]
    assert set(source_changes([ast.parse(source)], "f")) == wanted


def test_the_change_names_its_line():
    found = source_changes([ast.parse("import numpy as np\ndef f(s, m):\n    t = np.asarray(s)\n"
                                      "    t[~m] = -np.inf\n    return t")], "f")
    assert str(found["s"]) == "line 4: `t[~m] = -np.inf`"


def test_the_last_definition_of_a_name_is_read():
    first = ast.parse("def f(x):\n    x[0] = 1")
    second = ast.parse("def f(x):\n    return x + 1")
    assert source_changes([first, second], "f") == {}
    assert set(source_changes([second, first], "f")) == {"x"}
