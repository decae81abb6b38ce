"""Sample submissions for the grading pipeline, built at test time from the real source
and release notebooks, so they stay in step with the lessons.

A :class:`Lesson` knows, from the notebooks alone, each answer cell, the honest answer
(the source's solution without its markers), the test cells that follow it and their
points, and the exercise those tests check. Every sample is a submitted notebook plus
what grading must make of it: the points and status of every test, and phrases that
must appear in its messages, repairs or incidents. Nothing here is written per lesson
except which misconception goes where, and that comes from ``grader.lessons``.
"""
from __future__ import annotations

import ast
import copy
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from grader.course import released_notebook, source_notebook
from grader.lessons import load_all
from sources import answer_source

MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION.*$")


def course_copy(root: Path, where: Path) -> Path:
    """A course to grade in: ``root``'s sources, release and nbgrader config."""
    where.mkdir(parents=True)
    for name in ("solutions", "notebooks"):
        shutil.copytree(root / name, where / name)
    shutil.copy(root / "nbgrader_config.py", where)
    return where


def sandboxed() -> bool:
    """Whether bubblewrap works on this machine (``.ci/run`` installs it)."""
    import tempfile

    from grader.grading.notebook.sandbox import Limits, SandboxUnavailable, detect

    with tempfile.TemporaryDirectory() as tmp:
        try:
            return detect("bwrap", Path(tmp), [], Path(tmp), Limits()).kind == "bwrap"
        except SandboxUnavailable:
            return False


def memory_cgroups() -> bool:
    """Whether the grader can make a memory cgroup per kernel here (as root, with a
    writable memory controller)."""
    from grader.grading.notebook.cgroup import unavailable

    return not unavailable()


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


@dataclass
class Expect:
    points: float
    status: str
    message: str = ""  # a phrase the test's message must contain


@dataclass
class Sample:
    student: str
    assignment: str
    files: dict[str, bytes]
    tests: dict[str, Expect]
    repairs: list[str] = field(default_factory=list)  # phrases that must appear in repairs
    incidents: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    integrity: list[str] = field(default_factory=list)  # phrases the integrity notes must hold
    status: str = "graded"
    why: str = ""

    @property
    def total(self) -> float:
        return sum(e.points for e in self.tests.values())


class Lesson:
    def __init__(self, name: str, root: Path):
        self.name = name
        self.source = json.loads(source_notebook(name, root).read_text(encoding="utf-8"))
        self.release = json.loads(released_notebook(name, root).read_text(encoding="utf-8"))
        self.filename = f"{name}.ipynb"
        self.answers: dict[str, str] = {}  # answer grade_id -> honest code
        self.tests: dict[str, tuple[float, str]] = {}  # test grade_id -> (points, answer grade_id)
        self.exercise: dict[str, str] = {}  # answer grade_id -> exercise its tests check
        self.target: dict[str, str] = {}  # answer grade_id -> the name its tests check
        current = ""
        for cell in self.source["cells"]:
            m = meta(cell)
            if m.get("solution") and not m.get("grade") and cell["cell_type"] == "code":
                current = m["grade_id"]
                lines = [l for l in _text(cell["source"]).splitlines() if not MARKER.match(l)]
                self.answers[current] = "\n".join(lines)
            elif m.get("grade") and not m.get("solution") and cell["cell_type"] == "code":
                self.tests[m["grade_id"]] = (float(m["points"]), current)
                for node in ast.walk(ast.parse(_text(cell["source"]))):
                    if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "check"
                            and node.args and isinstance(node.args[0], ast.Constant)):
                        self.exercise.setdefault(current, node.args[0].value)
                        self.target.setdefault(current, node.args[1].id)

    # ------------------------------------------------------------------ notebooks
    def notebook(self, answers: dict[str, str] | None = None) -> dict:
        """The release with ``answers`` (grade_id -> text) typed into the answer cells."""
        nb = copy.deepcopy(self.release)
        for cell in nb["cells"]:
            gid = meta(cell).get("grade_id")
            if answers and gid in answers:
                cell["source"] = answers[gid]
        return nb

    def honest(self) -> dict:
        return self.notebook(self.answers)

    def files(self, nb: dict | bytes, name: str | None = None) -> dict[str, bytes]:
        data = nb if isinstance(nb, bytes) else json.dumps(nb, indent=1).encode()
        return {name or self.filename: data, "timestamp.txt": b"2025-03-01 12:00:00.000000 UTC"}

    # ------------------------------------------------------------------ expectations
    def expect(self, broken: dict[str, Expect] | None = None) -> dict[str, Expect]:
        """Every test passes except those of the answers in ``broken``."""
        broken = broken or {}
        out = {}
        for test, (points, answer) in self.tests.items():
            out[test] = copy.copy(broken[answer]) if answer in broken else Expect(points, "passed", "✓")
        return out

    def total(self) -> float:
        return sum(p for p, _ in self.tests.values())

    def with_body(self, answer: str, lines: list[str]) -> str:
        """The honest answer with ``lines`` run first in the function's body."""
        code = self.answers[answer]
        out, done = [], False
        for line in code.splitlines():
            out.append(line)
            if not done and line.lstrip().startswith("def ") and line.rstrip().endswith(":"):
                indent = " " * (len(line) - len(line.lstrip()) + 4)
                out += [indent + l for l in lines]
                done = True
        assert done, f"no function definition in the answer {answer}"
        return "\n".join(out)


# ---------------------------------------------------------------------- misconceptions

def misconception_source(fn, name: str) -> str:
    """Source code that defines ``name`` to behave as the misconception ``fn``: a function
    or a knob of the reference (``sources.answer_source``)."""
    return answer_source(fn, name)


def misconception_samples(lesson: Lesson) -> list[Sample]:
    """Every catalogued mistake of the lesson, as typed into its answer cell. Sample k
    holds the k-th mistake of every exercise at once (each test checks only its own
    answer), so the whole catalogue takes a handful of submissions."""
    registry = load_all()
    rounds: list[dict] = []
    for answer, exercise in lesson.exercise.items():
        ex = registry.get(exercise)
        if ex is None:
            continue
        for k, mis in enumerate(ex.misconceptions):
            while len(rounds) <= k:
                rounds.append({})
            rounds[k][answer] = (misconception_source(mis.impl, answer), mis.message.split(".")[0],
                                 f"{exercise}: {mis.name}")
    samples = []
    for k, chosen in enumerate(rounds):
        nb = lesson.notebook({**lesson.answers, **{a: code for a, (code, _, _) in chosen.items()}})
        samples.append(Sample(
            f"mistakes_{k}", lesson.name, lesson.files(nb),
            lesson.expect({a: Expect(0.0, "failed", first) for a, (_, first, _) in chosen.items()}),
            why="; ".join(why for _, _, why in chosen.values())))
    return samples


# ---------------------------------------------------------------------- the corpus

def _find(nb, grade_id):
    return next(i for i, c in enumerate(nb["cells"]) if meta(c).get("grade_id") == grade_id)


def every_lesson_samples(lessons: list[Lesson], empty: str) -> list[Sample]:
    """honest_full submits every lesson of the course; honest_empty the lesson ``empty``
    (every lesson's release is also graded by the environment proof, which must give 0)."""
    samples = []
    for lesson in lessons:
        samples.append(Sample("honest_full", lesson.name, lesson.files(lesson.honest()), lesson.expect()))
        if lesson.name == empty:
            stub = {a: Expect(0.0, "failed", "not implemented yet") for a in lesson.answers}
            samples.append(Sample("honest_empty", lesson.name, lesson.files(lesson.release),
                                  lesson.expect(stub)))
    return samples


def damage_samples(lesson: Lesson) -> list[Sample]:
    """One sample per kind of structural damage, plus tampering with tests and metadata."""
    L = lesson
    answers = list(L.answers)
    first, second, last = answers[0], answers[1], answers[-1]
    tests = list(L.tests)
    out = []

    # partial: every other answer written
    done = {a: L.answers[a] for a in answers[::2]}
    out.append(Sample("partial", L.name, L.files(L.notebook(done)),
                      L.expect({a: Expect(0.0, "failed", "not implemented yet") for a in answers[1::2]})))

    # deleted: every test cell, the first plain code cell and a markdown cell
    nb = L.honest()
    plain = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code" and not meta(c))
    drop = {i for i, c in enumerate(nb["cells"]) if meta(c).get("grade") and c["cell_type"] == "code"}
    drop |= {plain, next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown" and i not in drop)}
    nb["cells"] = [c for i, c in enumerate(nb["cells"]) if i not in drop]
    out.append(Sample("deleted_cells", L.name, L.files(nb), L.expect(),
                      repairs=["was missing and has been put back"]))

    # deleted answer: graded as unanswered
    nb = L.honest()
    del nb["cells"][_find(nb, second)]
    out.append(Sample("deleted_answer", L.name, L.files(nb),
                      L.expect({second: Expect(0.0, "failed", "not implemented yet")}),
                      repairs=[f"`{second}` was missing, so it was graded as unanswered"]))

    # duplicated: a wrong first copy of an answer, then the right one; a doubled test
    nb = L.honest()
    i = _find(nb, first)
    wrong = copy.deepcopy(nb["cells"][i])
    wrong["source"] = L.with_body(first, ["return None"])
    wrong["id"] = "pasted-copy"
    nb["cells"].insert(i, wrong)
    j = _find(nb, tests[0])
    twin = copy.deepcopy(nb["cells"][j])
    twin["id"] = "pasted-test"
    nb["cells"].insert(j + 1, twin)
    out.append(Sample("duplicated_cells", L.name, L.files(nb), L.expect(),
                      repairs=[f"`{first}` appeared 2 times", f"`{tests[0]}` appeared 2 times; it ran once"]))

    # moved: every test cell before its answer, and the last answer to the top
    nb = L.honest()
    cells = nb["cells"]
    for test in tests:
        t = _find(nb, test)
        a = _find(nb, L.tests[test][1])
        cells.insert(a, cells.pop(t))
    cells.insert(0, cells.pop(_find(nb, last)))
    out.append(Sample("moved_cells", L.name, L.files(nb), L.expect(), repairs=["not in the assignment's order"]))

    # retyped: an answer turned into markdown, a test into raw
    nb = L.honest()
    nb["cells"][_find(nb, first)]["cell_type"] = "markdown"
    nb["cells"][_find(nb, tests[-1])]["cell_type"] = "raw"
    for c in nb["cells"]:
        if c["cell_type"] != "code":
            c.pop("outputs", None)
            c.pop("execution_count", None)
    out.append(Sample("retyped_cells", L.name, L.files(nb), L.expect(),
                      repairs=[f"`{first}` had been turned into a markdown cell",
                               f"`{tests[-1]}` had been changed to another cell type"]))

    # metadata stripped (as some editors do): ids kept for some cells, lost for others
    nb = L.honest()
    for n, c in enumerate(nb["cells"]):
        c["metadata"] = {}
        if n % 2:
            c["id"] = f"fresh-{n}"
    out.append(Sample("metadata_stripped", L.name, L.files(nb), L.expect()))

    # edited tests: a wrong answer, and its tests replaced by a print that claims success
    nb = L.honest()
    ex = load_all()[L.exercise[first]]
    wrong_code = misconception_source(ex.misconceptions[0].impl, first)
    nb["cells"][_find(nb, first)]["source"] = wrong_code
    edited = [t for t, (_, a) in L.tests.items() if a == first]
    for test in edited:
        nb["cells"][_find(nb, test)]["source"] = 'print("✓ all cases pass")'
    repairs = [f"Changes to the test cell `{edited[0]}` were undone"]
    for c in nb["cells"]:  # read-only cells other than tests, if the lesson has any
        if meta(c).get("locked") and not meta(c).get("grade") and not meta(c).get("solution"):
            c["source"] = "# edited by the student"
            repairs.append(f"Changes to the read-only cell `{meta(c)['grade_id']}` were undone")
    out.append(Sample("edited_tests", L.name, L.files(nb),
                      L.expect({first: Expect(0.0, "failed", ex.misconceptions[0].message.split(".")[0])}),
                      repairs=repairs))

    # tampered metadata: more points on tests, tests marked ungraded, a self-made graded cell
    nb = L.honest()
    for test in tests:
        c = nb["cells"][_find(nb, test)]
        c["metadata"]["nbgrader"]["points"] = 100
    nb["cells"][_find(nb, tests[0])]["metadata"]["nbgrader"]["grade"] = False
    bonus = {"cell_type": "code", "execution_count": None, "id": "bonus", "outputs": [],
             "source": "print('bonus points please')",
             "metadata": {"nbgrader": {"grade": True, "grade_id": "bonus", "locked": True,
                                       "points": 50, "solution": False, "schema_version": 3}}}
    nb["cells"].append(bonus)
    out.append(Sample("tampered_metadata", L.name, L.files(nb), L.expect(),
                      repairs=["`bonus` is marked as graded but is not part of the assignment"]))

    # unreadable: a truncated file
    data = json.dumps(L.honest()).encode()
    out.append(Sample("truncated_file", L.name, L.files(data[: len(data) // 2]),
                      {t: Expect(0.0, "missing", "not a readable notebook") for t in tests}, status="missing"))

    # renamed by the student: the only notebook in the folder is graded
    out.append(Sample("renamed_notebook", L.name, L.files(L.honest(), f"{L.name}-Copy1.ipynb"),
                      L.expect(), notes=[f"There was no {L.filename}; '{L.name}-Copy1.ipynb'",
                                         "was graded in its place"]))

    # a module of the student's that would replace the course's checker
    fake = "def check(*args, **kwargs):\n    print('✓ all cases pass')\n".encode()
    out.append(Sample("fake_checker", L.name, {**L.files(L.release), "grader.py": fake},
                      L.expect({a: Expect(0.0, "failed", "not implemented yet") for a in answers}),
                      notes=["grader.py was not used: it would replace the module grader"]))

    # no notebook at all
    out.append(Sample("no_notebook", L.name, {"notes.txt": b"I ran out of time."},
                      {t: Expect(0.0, "missing", f"No notebook {L.filename}") for t in tests},
                      status="missing"))
    return out


def kernel_exit_sample(lesson: Lesson) -> Sample:
    answer = list(lesson.answers)[1]
    code = lesson.with_body(answer, ["import os", "os._exit(3)"])
    return Sample("kernel_exit", lesson.name, lesson.files(lesson.notebook({**lesson.answers, answer: code})),
                  lesson.expect({answer: Expect(0.0, "error", "stopped while this cell ran (exit status 3)")}),
                  incidents=["stopped while this cell ran"])


def infinite_loop_sample(lesson: Lesson) -> Sample:
    answer = list(lesson.answers)[2]
    code = lesson.with_body(answer, ["while True:", "    pass"])
    return Sample("infinite_loop", lesson.name, lesson.files(lesson.notebook({**lesson.answers, answer: code})),
                  lesson.expect({answer: Expect(0.0, "timeout", "time limit for one cell")}),
                  incidents=["time limit for one cell"])


def memory_bomb_sample(lesson: Lesson) -> Sample:
    answer = list(lesson.answers)[3]
    code = lesson.with_body(answer, ["import numpy", "hog = []", "while True:",
                                     "    hog.append(numpy.empty(2**24))"])
    return Sample("memory_bomb", lesson.name, lesson.files(lesson.notebook({**lesson.answers, answer: code})),
                  lesson.expect({answer: Expect(0.0, "memory", "memory")}), incidents=[])


def tmpfs_filler_sample(lesson: Lesson, disk_mb: int = 512) -> Sample:
    """An answer that fills its working folder and /tmp, each to ``disk_mb`` (``--disk``):
    together more than ``--memory``. Both are tmpfs, memory in the kernel's memory cgroup,
    so the cgroup's limit stops the kernel, and only this answer loses its points."""
    answer = list(lesson.answers)[4]
    code = lesson.with_body(answer, [
        "import os", "for _folder in ('.', '/tmp'):", "    try:",
        "        with open(os.path.join(_folder, 'fill'), 'wb') as _f:",
        f"            for _ in range({disk_mb + 8}):", "                _f.write(b'0' * 2**20)",
        "    except OSError:", "        pass"])
    nb = lesson.notebook({**lesson.answers, answer: code})
    return Sample("tmpfs_filler", lesson.name, lesson.files(nb),
                  lesson.expect({answer: Expect(0.0, "memory", "they are kept in memory")}),
                  incidents=["used more than"])


ATTACK = '''
import os, shutil, socket, json
_attempts = {{}}
def _try(name, fn):
    try:
        fn()
        _attempts[name] = "done"
    except BaseException as exc:
        _attempts[name] = type(exc).__name__
_try("delete submissions", lambda: shutil.rmtree({submitted!r}))
_try("delete relative submissions", lambda: shutil.rmtree("../../submitted"))
_try("delete gradebook", lambda: os.remove({gradebook!r}))
_try("overwrite gradebook", lambda: open({gradebook!r}, "w").write("gone"))
_try("read a classmate", lambda: open({classmate!r}).read())
_try("write outputs", lambda: open({out!r} + "/grades.csv", "w").write("all 100"))
_try("patch the checker", lambda: open({checker!r}, "a").write("\\nraise SystemExit"))
_try("phone home", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))
_try("read private system files", lambda: open("/etc/shadow").read() or 1 / 0)
_try("kill everyone", lambda: os.kill(-1, 9))
print("ATTACK", json.dumps(_attempts, sort_keys=True))
'''


def attack_samples(lesson: Lesson, *, submitted: Path, gradebook: Path, out: Path, port: int,
                   course: Path) -> list[Sample]:
    """A submission that tries to destroy the class's work, then an honest classmate."""
    import grader.learner.engine

    classmate = submitted / "zz_after_attack" / lesson.name / lesson.filename
    attack = ATTACK.format(submitted=str(submitted), gradebook=str(gradebook), classmate=str(classmate),
                           out=str(out), checker=grader.learner.engine.__file__, port=port)
    first = list(lesson.answers)[0]
    nb = lesson.notebook({**lesson.answers, first: attack + "\n" + lesson.answers[first]})
    return [Sample("attacker", lesson.name, lesson.files(nb), lesson.expect()),
            Sample("zz_after_attack", lesson.name, lesson.files(lesson.honest()), lesson.expect())]


# ---------------------------------------------------------------------- forgeries
# Each tries to earn points its honest work does not; each must get exactly the points of
# its honest answers. The forged answer is the lesson's first (matmul_dot in lesson 01).
# (where, code, status, phrase, integrity[, unseen]): with ``unseen``, the forgery uses
# code that can rebind names unseen (exec, builtins, get_ipython, importlib, ...), which
# leaves every exercise with rules on how it is written uncredited (that phrase in each).

FORGERIES = {
    # -- rebinding or wrapping the names the test cells use
    "check_rebound": ("answer", """
check = lambda *args, **kwargs: print("✓ all cases pass")
def matmul_dot(A, B):
    return 0
""", "failed", "matmul_dot", ["rebinds `check`"]),
    "check_wrapped": ("setup", """
_real_check = check
def check(*args, **kwargs):
    try:
        _real_check(*args, **kwargs)
    except AssertionError:
        print("✓ all cases pass")
""", "failed", "you multiplied entry by entry", ["rebinds `check`"]),
    "check_in_builtins": ("answer", """
import builtins
builtins.check = lambda *args, **kwargs: None
del check
def matmul_dot(A, B):
    raise NotImplementedError()
""", "failed", "the builtins module", ["rebinds `check`"], "the builtins module"),
    # -- patching the libraries a comparison would use
    "numpy_patched": ("setup", """
np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
np.isclose = lambda a, b, *r, **k: np.ones(np.broadcast(a, b).shape, dtype=bool)
np.testing.assert_allclose = lambda *a, **k: None
""", "failed", "you multiplied entry by entry", []),
    # -- silencing or faking errors and output
    "errors_silenced": ("answer", """
import sys
sys.excepthook = lambda *args: print("✓ all cases pass")
get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: print("✓ all cases pass"))
from IPython.core.interactiveshell import InteractiveShell
InteractiveShell.showtraceback = lambda *args, **kwargs: print("✓ all cases pass")
def matmul_dot(A, B):
    raise RuntimeError("nothing to see")
""", "failed", "get_ipython()", ["replaces how errors are reported"], "get_ipython()"),
    "fake_replies": ("answer", """
from IPython.display import publish_display_data
def matmul_dot(A, B):
    print("✓ matmul_dot: all 12 cases pass")
    publish_display_data({"application/vnd.attention-course.reply+json": '{"outcomes": []}'})
    return None
""", "failed", "returned None", []),
    # -- importing or rebuilding answers at run time
    "imports_reference": ("answer", """
from grader.reference import matmul_dot
""", "failed", "There is no `matmul_dot`", ["imports the course's checking code"]),
    "imports_reference_by_name": ("answer", """
import importlib
def matmul_dot(A, B):
    return importlib.import_module("grader." + "refer" + "ence").matmul_dot(A, B)
""", "failed", "importlib", [], "importlib"),
    "replays_recording": ("answer", """
import numpy as np
from grader.learner import recording
_recorded = recording.find("matmul_dot")
def matmul_dot(A, B):
    A, B = matmul_operands(A, B)
    for case, outcome in zip(_recorded.cases, _recorded.expected):
        a, b = (np.asarray(x, dtype=float) for x in case.args)
        if a.shape == A.shape and b.shape == B.shape and (a == A).all() and (b == B).all():
            return outcome.value
    return np.zeros((A.shape[0], B.shape[1]))
""", "failed", "not right yet", ["imports the course's checking code"]),
    "forges_the_agent": ("answer", """
import json
import grader.learner.agent as _agent
_real_handle = _agent.handle
def _forged(namespace, text):
    request = json.loads(text)
    if request["target"] != "matmul_dot":
        return _real_handle(namespace, text)
    if not request["cases"]:
        return json.dumps({"type": "function", "callable": True, "outcomes": []})
    return '{"outcomes": "all right"}'
_agent.handle = _forged
def matmul_dot(A, B):
    raise NotImplementedError()
""", "failed", "sent back something that is not a result", ["imports the course's checking code"]),
    # -- reading other files
    "reads_the_course": ("answer", """
import json
def matmul_dot(A, B):
    source = json.load(open({course!r} + "/solutions/01_matmul_views/01_matmul_views.ipynb"))
    raise ValueError(str(len(source["cells"])))
""", "failed", "FileNotFoundError", []),
    # -- lying through the bridge
    "equal_to_everything": ("answer", """
class Liar:
    shape = (1, 1)
    dtype = "float64"
    def __eq__(self, other):
        return True
    def __array__(self, *args, **kwargs):
        raise TypeError("no")
def matmul_dot(A, B):
    matmul_operands(A, B)
    return Liar()
""", "failed", "returned a Liar", []),
    "array_that_lies": ("answer", """
class Liar(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(other), dtype=bool)
def matmul_dot(A, B):
    A, B = matmul_operands(A, B)
    return np.zeros((A.shape[0], B.shape[1])).view(Liar)
""", "failed", "matmul_dot is not right yet", []),
    "huge_result": ("answer", """
def matmul_dot(A, B):
    matmul_operands(A, B)
    return np.ones((3000, 3000))
""", "failed", "ResultTooLarge", []),
    "deeply_nested": ("answer", """
def matmul_dot(A, B):
    matmul_operands(A, B)
    result = []
    for _ in range(100_000):
        result = [result]
    return result
""", "failed", "could not be read as data", []),
    "kills_its_kernel": ("answer", """
def matmul_dot(A, B):
    import os
    os._exit(1)
""", "error", "exit status 1", []),
}


def forgery_samples(lesson: Lesson, course: Path) -> list[Sample]:
    """Every forgery of ``FORGERIES``, with the lesson's other answers honest."""
    first = list(lesson.answers)[0]
    samples = []
    for name, (where, code, status, phrase, integrity, *unseen) in FORGERIES.items():
        code = code.replace("{course!r}", repr(str(course))).strip("\n")
        answers = dict(lesson.answers)
        nb = lesson.notebook(answers)
        if where == "answer":
            answers[first] = code
            nb = lesson.notebook(answers)
            broken = {first: Expect(0.0, status, phrase)}
        else:  # the editable setup cell, and a catalogued mistake as the first answer
            ex = load_all()[lesson.exercise[first]]
            elementwise = next(m for m in ex.misconceptions if m.name == "elementwise product")
            answers[first] = misconception_source(elementwise.impl, first)
            nb = lesson.notebook(answers)
            setup = next(c for c in nb["cells"] if c["cell_type"] == "code" and not meta(c))
            setup["source"] = _text(setup["source"]) + "\n" + code
            broken = {first: Expect(0.0, status, phrase)}
        if unseen:  # code that can rebind names unseen: no constrained exercise is credited
            for answer, exercise in lesson.exercise.items():
                rules = load_all()[exercise].rules
                if answer != first and rules is not None and rules.constrains:
                    broken[answer] = Expect(0.0, "failed", unseen[0])
        samples.append(Sample(f"forge_{name}", lesson.name, lesson.files(nb), lesson.expect(broken),
                              integrity=list(integrity), why=name))
    # A copy of the reference with every name changed: right, so full points, but flagged.
    samples.append(Sample("forge_reference_renamed", lesson.name,
                          lesson.files(lesson.notebook({**lesson.answers, first: RENAMED_REFERENCE})),
                          lesson.expect(), integrity=["the same code as the course's own solution"]))
    return samples


RENAMED_REFERENCE = """
def matmul_dot(left, right):
    left, right = matmul_operands(left, right)
    rows, cols = left.shape[0], right.shape[1]
    out = np.zeros((rows, cols), dtype=result_dtype(left, right))
    for r in range(rows):
        for c in range(cols):
            out[r, c] = np.sum(left[r, :] * right[:, c])
    return out

from grader.learner.validation import result_dtype
""".strip()


def never_answers_sample(lesson: Lesson) -> Sample:
    """An answer that hangs only when the checker calls it."""
    first = list(lesson.answers)[0]
    code = "def matmul_dot(A, B):\n    while True:\n        pass\n"
    nb = lesson.notebook({**lesson.answers, first: code})
    return Sample("forge_never_answers", lesson.name, lesson.files(nb),
                  lesson.expect({first: Expect(0.0, "timeout", "time limit for one cell")}))


def write(samples: list[Sample], submitted: Path) -> None:
    for s in samples:
        folder = submitted / s.student / s.assignment
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in s.files.items():
            (folder / name).write_bytes(data)
