"""Integrity notes for what reaches for the grading side (grader.grading.notebook.plumbing)."""
import ast

import pytest

from grader.grading.notebook.plumbing import attempts

REACHES = {
    "links": ("import os\nos.symlink('/etc/passwd', 'kernel-1.log')", "makes links (os.symlink)"),
    "path_links": ("from pathlib import Path\nPath('k').symlink_to('/x')", "makes links"),
    "exit": ("import os as o\ndef f(x):\n    o._exit(3)", "stops or starts processes (o._exit)"),
    "fork": ("from os import fork\nfork()", "stops or starts processes (fork)"),
    "exec": ("import os\nos.execv('/bin/sh', ['sh'])", "stops or starts processes (os.execv)"),
    "subprocess": ("import subprocess\nsubprocess.run(['ls'])", "starts other programs"),
    "tracemalloc": ("import tracemalloc\ntracemalloc.stop()", "uses tracemalloc"),
    "patch": ("import grader.learner.agent as a\na.peak_bytes = None",
              "changes the course's module grader.learner.agent (a.peak_bytes)"),
    "setattr": ("from grader.learner import agent\nsetattr(agent, '_mutated', 1)",
                "changes the course's module grader.learner.agent (setattr)"),
    "plumbing": ("open('/job/sock/k-1')", "names the sandbox's plumbing ('/job/sock/k-1')"),
}


@pytest.mark.parametrize("name", sorted(REACHES))
def test_each_reach_for_the_grading_side_is_noted(name):
    source, phrase = REACHES[name]
    assert any(phrase in a for a in attempts(ast.parse(source))), attempts(ast.parse(source))


def test_ordinary_answers_get_no_note():
    honest = ("import numpy as np\nimport torch\nfrom grader import check\n"
              "def f(x, log='run.txt'):\n    y = np.log(np.exp(x)) @ x.T\n"
              "    return torch.as_tensor(y).numpy()")
    assert attempts(ast.parse(honest)) == []


def test_a_lesson_marker_selects_that_lessons_tests_and_no_others(root):
    """`pytest -m lesson02` runs lesson 02's test file and the shared tests run on lesson 02
    (ids naming 02_dot_product_attention), and none of another lesson's."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-m",
         "lesson02", "tests/test_01_matmul_views.py", "tests/test_02_dot_product_attention.py",
         "tests/test_notebooks.py"], cwd=root, capture_output=True, text=True, timeout=300)
    ids = [line for line in out.stdout.splitlines() if "::" in line]
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert any(i.startswith("tests/test_02_") for i in ids)
    assert any(i.startswith("tests/test_notebooks.py") for i in ids)
    assert not any(i.startswith("tests/test_01_") for i in ids)
    assert all(i.startswith("tests/test_02_") or "02_dot_product_attention" in i for i in ids)
