"""The per-submission job: a self-contained function from a submission and the course's
notebooks to a result record and an autograded notebook.

:class:`Job` holds everything the job needs as plain data (notebook JSON, file bytes,
limits, the sandbox to use), so a job can run in a worker process here or, later, on
another machine. :func:`run_job` never raises: a problem of the grader itself becomes a
result with status ``failed`` and the reason.

The grading of one notebook is the list :data:`STEPS`, walked in order over one
:class:`JobState`, as nbgrader's converters walk their list of preprocessors:

1. :func:`choose_notebook`: which submitted file is the notebook;
2. :func:`read_notebook`: read it as a notebook;
3. :func:`assemble_plan`: rebuild it on the assignment's cells (with nothing to grade,
   the job ends here with status ``missing``);
4. :func:`list_checks`: the checks of each test cell, from the source notebook;
5. :func:`note_integrity`: what a person should look at, read from its source;
6. :func:`write_files`: the submission's files into a private directory;
7. :func:`run_and_check`: run it in the sandboxed kernel, the trusted checker judging
   each test cell (a kernel that will not start, twice, ends the job: ``failed``);
8. :func:`score_results`: each test's points and message;
9. :func:`make_inert`: what formgrader would run or render of the student's markup and
   outputs is taken out (``grader.grading.notebook.inert``).

A step that ends the job early sets ``JobState.finished``; a job whose every step ran is
graded. Each step has its test file, ``tests/test_step_<name>.py``
(``tests/test_grading_steps.py`` keeps it so, and checks the order of the walk).

What a submission costs the grading process itself is bounded: by the notebook's structure
(``grader.grading.notebook.structure``, when it is read) and by a wall limit on the job's own work,
the kernel's run aside (``Job.grader_wall``, ``grader.grading.notebook.watchdog``). A notebook past
either, or one whose reading or preparing raises, costs only itself: it is not graded
(:func:`not_graded`), every test 0 with a note that says why, flagged for a person.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ...course import CheckCall
from . import inert, nbjson
from .trusted import Checker, source_tests
from .choice import MISSING, NOT_GRADED, UNREADABLE, choose
from .integrity import notes as integrity_notes
from .kernel import CellRun, Kernel, KernelStartError, run_notebook
from .nbjson import cell_text, nbgrader_meta
from .repair import Plan, assemble, link_tests, read_submission
from .sandbox import Limits, Sandbox
from .results import CheckVerdict, TestResult
from .scoring import answers, missing_tests, score
from .status import CellKind, JobStatus
from .watchdog import DEFAULT as GRADER_WALL, WATCH, OverLimit


@dataclass
class Job:
    student: str
    assignment: str
    notebook: str  # the assignment's notebook file name, e.g. "01_matmul_views.ipynb"
    source: dict  # the source notebook (solutions and hidden tests), as JSON
    release: dict  # the released notebook, as JSON
    files: dict[str, bytes]  # the submitted assignment folder: relative path -> content
    submitted_as: str | None  # which of ``files`` is this notebook (None: chosen from candidates)
    course_files: dict[str, bytes] = field(default_factory=dict)  # replace the student's copies
    sandbox: Sandbox = field(default_factory=lambda: Sandbox("none"))
    limits: Limits = field(default_factory=Limits)
    scratch: str = ""  # where the private directory is made ("" : the system's temp dir)
    font_cache: str = ""  # matplotlib's font list to copy in, so kernels do not rebuild it
    notes: list[str] = field(default_factory=list)  # said while reading the submission
    kit: str = ""  # the student kit the kernel imports the course's package from
    proof: bool = False  # the environment proof: the source, then the release's stubs
    candidates: list[str] = field(default_factory=list)  # files that may be it (grader.grading.notebook.choice)
    grader_wall: float = GRADER_WALL  # seconds of the grading process's own work on it, the kernel aside
    figures: str = "png"  # what a figure's output holds: "png" (drawn, as in JupyterLab) or "text"

    @property
    def key(self) -> tuple[str, str, str]:
        """Which job this is, in its batch."""
        return self.student, self.assignment, self.notebook


@dataclass
class JobResult:
    student: str
    assignment: str
    notebook: str
    status: JobStatus  # graded | missing | failed (the grader could not grade it)
    tests: list[TestResult] = field(default_factory=list)
    manual: list[dict] = field(default_factory=list)
    answers: list[dict] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    incidents: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    integrity: list[str] = field(default_factory=list)  # for a human to look at
    flags: list[str] = field(default_factory=list)  # short labels (grader.grading.notebook.choice)
    submitted_as: str | None = None  # the submitted file that was graded
    seconds: float = 0.0
    autograded: dict | None = None
    error: str = ""

    def __post_init__(self):
        # Back from a worker or a saved file as dicts: typed again, every field checked.
        self.status = JobStatus(self.status)
        self.tests = [TestResult.from_dict(t) for t in self.tests]

    @property
    def points(self) -> float:
        return sum(t.points for t in self.tests)

    @property
    def max_points(self) -> float:
        return sum(t.max for t in self.tests)


def _safe_relative(name: str) -> PurePosixPath | None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or not path.parts or any(p in ("..", "") for p in path.parts):
        return None
    return path


def _write_files(root: Path, files: dict[str, bytes]) -> list[str]:
    """Write ``files`` under ``root`` (the job's ``in/work``, which no kernel can write),
    readable by the kernel's user."""
    problems = []
    for name, data in files.items():
        rel = _safe_relative(name)
        if rel is None:
            continue
        target = root.joinpath(*rel.parts)
        try:
            for parent in reversed(target.relative_to(root).parents):
                folder = root / parent
                if not folder.is_dir():
                    folder.mkdir(mode=0o755)
                    os.chmod(folder, 0o755)
            if target.is_dir():
                continue
            target.write_bytes(data)
            os.chmod(target, 0o644)
        except OSError as exc:  # a name this file system cannot hold: that file only
            problems.append(f"Your file {name!r} could not be put beside the notebook ({exc.strerror}).")
    return problems


def shadowing(files: dict[str, bytes]) -> dict[str, str]:
    """Submitted files that would be imported instead of a real module (a ``grader.py``
    with a ``check`` that always passes, a fake ``numpy/`` package): path -> the module's
    name. The working directory comes first on the kernel's import path."""
    modules = {}  # top-level name -> module name
    for name in files:
        rel = _safe_relative(name)
        if rel is None:
            continue
        if len(rel.parts) == 1 and rel.suffix == ".py":
            modules[rel.parts[0]] = rel.stem
        elif len(rel.parts) == 2 and rel.parts[1] == "__init__.py":
            modules[rel.parts[0]] = rel.parts[0]
    real = {top: m for top, m in modules.items() if m.isidentifier() and (
        m in sys.stdlib_module_names or importlib.util.find_spec(m) is not None)}
    return {name: real[_safe_relative(name).parts[0]] for name in files
            if _safe_relative(name) is not None and _safe_relative(name).parts[0] in real}


def site_packages() -> list[str]:
    """This interpreter's library folders (the kernel runs without ``site``, so that no
    ``.pth`` file, such as an editable install's, points it back at the course)."""
    import site

    found = [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)]
    return found or list(site.getsitepackages())


def kernel_env(kit: str = "") -> dict[str, str]:
    """A clean environment: nothing of the grader's (tokens, paths) reaches student code.
    The course's package comes from the student kit alone. The kernel's own folders
    (HOME, TMPDIR, ...) are added per kernel (``grader.grading.notebook.sandbox.box_env``)."""
    return {
        "PYTHONPATH": os.pathsep.join(([kit] if kit else []) + site_packages()),
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"]),
        "USER": "student", "LOGNAME": "student", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "NBGRADER_EXECUTION": "autograde", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
        # One thread per kernel: the batch already runs one kernel per core.
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1", "VECLIB_MAXIMUM_THREADS": "1",
    }


def font_cache() -> str:
    """matplotlib's font list, so that no kernel spends seconds rebuilding it."""
    home = Path(os.environ.get("MPLCONFIGDIR") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "matplotlib")
    found = sorted(home.glob("fontlist-v*.json"))
    if found:
        return str(found[-1])
    try:
        import matplotlib
        from matplotlib import font_manager  # noqa: F401 (builds the cache if it is missing)
    except Exception:  # noqa: BLE001
        return ""
    found = sorted(Path(matplotlib.get_cachedir()).glob("fontlist-v*.json"))
    return str(found[-1]) if found else ""


PRELOAD = ("numpy", "matplotlib", "torch", "ipywidgets", "courseware", "grader")


def preload_modules(source: dict) -> tuple[str, ...]:
    """The libraries the notebook's first code cell imports (its set-up), and the agent the
    checks will call: what a kernel can import before the notebook starts."""
    import ast

    found = ["grader.learner.agent"]
    for cell in source.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        text = cell_text(cell)
        try:
            tree = ast.parse("\n".join(l for l in text.splitlines() if not l.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            break
        for node in tree.body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            found += [n for n in names if n.split(".")[0] in PRELOAD]
        break
    if "matplotlib" in " ".join(found):
        found.append("matplotlib_inline.backend_inline")  # what %matplotlib inline loads
    return tuple(dict.fromkeys(found))


def private_key(job: Job) -> tuple:
    """What a spare private directory (and its kernel, launched ahead) must share with the
    job that takes it."""
    return (job.sandbox, job.limits, job.scratch, job.font_cache, job.kit, job.assignment, job.figures)


class _Private:
    """A job's private directory and the kernels that run in it.

    ``in/`` (``work/``: the submission's files; ``home/``: matplotlib's font list; the
    kernels' connection files) is written by the grader before any of the submission's
    code runs, and is read-only to the kernel. Everything the kernel writes goes to a
    folder of its own (with bubblewrap, a tmpfs inside the sandbox; without, ``box-N/``),
    which the grading process never opens by path."""

    def __init__(self, job: Job):
        self.key = private_key(job)
        self.dir = Path(tempfile.mkdtemp(prefix="job-", dir=job.scratch or None))
        # Without bubblewrap a kernel of its own user must reach in/ and box-N/ here.
        os.chmod(self.dir, 0o700 if job.sandbox.bubblewrap else 0o711)
        self.work = self.dir / "in" / "work"
        fonts = self.dir / "in" / "home" / ".matplotlib"
        for d in (self.dir / "in", self.work, self.dir / "in" / "home", fonts):
            d.mkdir(mode=0o755)
            os.chmod(d, 0o755)
        if job.font_cache and os.path.isfile(job.font_cache):
            copy = fonts / os.path.basename(job.font_cache)
            shutil.copyfile(job.font_cache, copy)
            os.chmod(copy, 0o644)
        self.env = kernel_env(job.kit)
        self.sandbox, self.limits = job.sandbox, job.limits
        self.preload = preload_modules(job.source)
        self.figures = job.figures
        self.first: Kernel | None = None  # launched ahead of its job, if this is a spare
        self.kernels: list[Kernel] = []

    def kernel(self, n: int) -> Kernel:
        kernel = Kernel(self.dir, self.sandbox, self.limits, self.env, n, self.preload, self.figures)
        self.kernels.append(kernel)
        return kernel

    def problems(self) -> list[str]:
        """What went wrong while putting the submission's files in place, once each."""
        return list(dict.fromkeys(k.setup_problem for k in self.kernels if k.setup_problem))

    def remove(self) -> None:
        if self.first is not None:
            self.first.stop()
        shutil.rmtree(self.dir, ignore_errors=True)  # never follows a link


# One spare per worker process: a private directory whose kernel is already starting,
# for the next job with the same settings. It has run nothing when a job takes it.
_spare: _Private | None = None


def _launch_spare(job: Job) -> None:
    global _spare
    if _spare is None:
        from multiprocessing import util

        util.Finalize(None, _drop_spare, exitpriority=100)
    _drop_spare()
    try:
        spare = _Private(job)
        spare.first = spare.kernel(0)
        spare.first.launch()
        _spare = spare
    except (OSError, KernelStartError):
        _spare = None


def _take_spare(job: Job) -> _Private | None:
    global _spare
    spare, _spare = _spare, None
    if spare is not None and spare.key != private_key(job):
        spare.remove()
        return None
    return spare


def _drop_spare() -> None:
    global _spare
    if _spare is not None:
        _spare.remove()
        _spare = None


def _result(job: Job, status: JobStatus, start: float, **kw) -> JobResult:
    kw.setdefault("notes", list(job.notes))
    return JobResult(job.student, job.assignment, job.notebook, status,
                     seconds=time.monotonic() - start, **kw)


def run_job(job: Job) -> JobResult:
    """Grade one notebook of one submission. Never raises. The grading process's own work
    on it may take ``job.grader_wall`` seconds, the kernel's run aside; past that it is
    not graded (:func:`over_limit`)."""
    start = time.monotonic()
    try:
        WATCH.begin(job.key, job.grader_wall)
        try:
            return _run(job, start)
        finally:
            WATCH.end()
    except OverLimit as exc:
        WATCH.end()  # again: the limit may have passed in the first call
        _drop_spare()  # it may have been half made
        return over_limit(job, start, getattr(exc, "said", None))
    except Exception:  # noqa: BLE001 (a bug of the grader must not stop the batch)
        return _result(job, JobStatus.FAILED, start, error=traceback.format_exc())


def not_graded(job: Job, start: float, why: str, error: str = "", said: list[str] | None = None
               ) -> JobResult:
    """The result of a notebook the grader could not grade (over its own wall limit, or an
    error while reading or preparing it): every test 0 with ``why``, flagged for a person,
    and the release as its autograded notebook (nothing of a notebook that may be hostile
    and half read)."""
    source, release = nbjson.from_dict(job.source), nbjson.from_dict(job.release)
    plan = assemble(source, release, None)
    note = f"It could not be graded: {why}"
    return _result(job, JobStatus.MISSING, start, tests=missing_tests(plan, note),
                   manual=[{"id": gid, "max": m, "answered": False} for gid, m in _manual_cells(plan)],
                   answers=[{**a, "answered": False} for a in answers(plan)], autograded=plan.nb,
                   notes=[*(job.notes if said is None else said), note], flags=[NOT_GRADED], error=error)


def over_limit(job: Job, start: float | None = None, said: list[str] | None = None) -> JobResult:
    """:func:`not_graded` for a notebook whose own work passed ``job.grader_wall``
    (``said``: the notes its state carried by then, if it had one)."""
    return not_graded(job, time.monotonic() if start is None else start,
                      f"the grader's own work on it (reading, repairing, scanning and scoring "
                      f"it, its code's run aside) passed its limit of {job.grader_wall:g} s "
                      f"(--grader-wall).", said=said)


@dataclass
class JobState:
    """What the steps of one job read and write, in the order the steps fill it in.

    A step that ends the job early (nothing to grade, no kernel would start) puts its
    result in ``finished``; :func:`_run` then walks no further."""

    job: Job
    start: float  # time.monotonic() at the job's start (a result's seconds count from it)
    source: nbjson.Node  # the source notebook (solutions and hidden tests)
    release: nbjson.Node  # the released notebook
    said: list[str] = field(default_factory=list)  # the notes every result carries: the job's,
    # then (from assemble_plan on) what choosing the notebook found
    # choose_notebook
    chosen: str | None = None  # the submitted file to grade (None: there is none)
    flags: list[str] = field(default_factory=list)
    choice_notes: list[str] = field(default_factory=list)
    # choose_notebook and read_notebook
    reads: dict = field(default_factory=dict)  # file name -> what read_submission made of it
    # read_notebook
    submitted: dict | None = None  # the chosen file read as a notebook (None: not readable)
    problem: str = ""  # why there is no notebook to grade
    # assemble_plan
    plan: Plan | None = None
    # list_checks
    checks: dict[str, list[CheckCall]] = field(default_factory=dict)  # by the test cell's grade_id
    # note_integrity
    integrity: list[str] = field(default_factory=list)
    # write_files
    private: _Private | None = None  # removed by _run, whatever happens
    notes: list[str] = field(default_factory=list)  # said while grading (after job.notes)
    # run_and_check
    runs: list[CellRun | None] = field(default_factory=list)  # one per cell of the plan
    verdicts: dict[str, CheckVerdict] = field(default_factory=dict)  # by the test cell's grade_id
    # score_results
    tests: list[TestResult] = field(default_factory=list)
    manual: list[dict] = field(default_factory=list)
    incidents: list[str] = field(default_factory=list)
    # any step that ends the job early
    finished: JobResult | None = None

    @classmethod
    def begin(cls, job: Job, start: float) -> JobState:
        return cls(job, start, nbjson.from_dict(job.source), nbjson.from_dict(job.release),
                   said=list(job.notes))

    def read(self, name: str) -> tuple[dict | None, str]:
        """The submitted file ``name`` read as a notebook, once per job (the choice reads
        every candidate; reading a large one again would cost as much again)."""
        if name not in self.reads:
            self.reads[name] = read_submission(self.job.files[name])
        return self.reads[name]


def choose_notebook(state: JobState) -> None:
    """Which submitted file is the notebook (``grader.grading.notebook.choice``). Reads the job's
    files and candidates; writes ``chosen``, ``choice_notes`` and ``flags``. The
    environment proof grades the file it names, without choosing."""
    job = state.job
    state.chosen = job.submitted_as
    if not job.proof:
        choice = choose(job.candidates, job.files, state.source, state.release, job.notebook,
                        read=state.read)
        state.chosen, state.choice_notes, state.flags = choice.name, choice.notes, choice.flags


def read_notebook(state: JobState) -> None:
    """Read the chosen file as a notebook (``grader.grading.notebook.repair.read_submission``).
    Reads ``chosen``; writes ``submitted``, ``problem`` (why there is nothing to grade)
    and ``flags`` (missing, unreadable)."""
    job, chosen = state.job, state.chosen
    if chosen is None or chosen not in job.files:
        state.submitted, state.problem = None, f"No notebook {job.notebook} was submitted."
        state.flags = state.flags or [MISSING]
    else:
        submitted, problem = state.read(chosen)
        state.submitted, state.problem = submitted, problem and f"{chosen!r}: {problem}."
        if submitted is None and UNREADABLE not in state.flags:
            state.flags = [*state.flags, UNREADABLE]


def assemble_plan(state: JobState) -> None:
    """The notebook that will run: the submission rebuilt on the assignment's cells
    (``grader.grading.notebook.repair.assemble``), or for the proof :func:`proof_plan`. Reads
    ``submitted``; writes ``plan``, and adds ``choice_notes`` to ``said`` (so that
    every result from here on carries them, a failed one too). With no notebook to
    grade the job ends here: status ``missing``, every test 0 with ``problem`` as why."""
    job = state.job
    plan = proof_plan(state.source, state.release) if job.proof else \
        assemble(state.source, state.release, state.submitted)
    state.plan = plan
    state.said = [*state.said, *state.choice_notes]
    if state.submitted is None:
        tests = missing_tests(plan, state.problem)
        manual = [{"id": gid, "max": m, "answered": False} for gid, m in _manual_cells(plan)]
        state.finished = _result(job, JobStatus.MISSING, state.start, tests=tests, manual=manual,
                                 answers=[{**a, "answered": False} for a in answers(plan)],
                                 autograded=plan.nb, notes=[*state.said, state.problem],
                                 flags=state.flags, submitted_as=state.chosen)


def list_checks(state: JobState) -> None:
    """The checks each test cell makes, read from the SOURCE notebook's cell of that
    grade_id (``grader.grading.notebook.trusted.source_tests``); for the proof, the release's
    copies of the test cells (``release:<grade_id>``) make the same checks. Reads the
    job's source; writes ``checks``."""
    checks = source_tests(state.job.source)
    if state.job.proof:
        checks.update({f"{RELEASED}{gid}": calls for gid, calls in checks.items()})
    state.checks = checks


def note_integrity(state: JobState) -> None:
    """What in the submission a person should look at (``grader.grading.notebook.integrity``),
    read from its source, never run. Reads ``plan`` and ``checks`` (the names they check);
    writes ``integrity``."""
    targets = {call.target: call.exercise for calls in state.checks.values() for call in calls}
    state.integrity = integrity_notes(state.plan, state.job.source, targets)


def write_files(state: JobState) -> None:
    """Put the submission's files beside the notebook, in a private directory the kernel
    cannot write: this worker's spare (its kernel already starting) or a new one; the next
    job's spare starts now, while this notebook runs. A file that would be imported in
    place of a real module is left out, and the course's own files replace the student's
    copies. Reads the job's files; writes ``private`` and ``notes`` (what was left out or
    could not be written)."""
    job = state.job
    private = state.private = _take_spare(job) or _Private(job)
    _launch_spare(job)  # the next job's kernel starts while this notebook runs
    hidden = shadowing(job.files)
    notes = [f"Your file {name} was not used: it would replace the module {module} "
             "that grading needs." for name, module in sorted(hidden.items())]
    notes += _write_files(private.work, {k: v for k, v in job.files.items() if k not in hidden})
    _write_files(private.work, job.course_files)
    state.notes = notes


def run_and_check(state: JobState) -> None:
    """Run ``plan``'s notebook in the sandboxed kernel (``grader.grading.notebook.kernel``), the
    trusted :class:`~grader.grading.notebook.trusted.Checker` judging each test cell with
    ``checks``. A kernel that does not start is tried once more (a busy machine can be
    slow to start one); if it fails again the job ends: status ``failed``. Reads
    ``plan``, ``checks`` and ``private``; writes ``runs`` and ``verdicts``."""
    plan, private, job = state.plan, state.private, state.job
    replayable = lambda i: plan.kinds[i] != CellKind.TEST  # noqa: E731
    checker = Checker(plan, state.checks)
    with WATCH.paused(kernel_allowance(job.limits)):  # --timeout and --wall bound this
        try:
            runs = run_notebook(plan.nb, private.kernel, job.limits, replayable, private.first,
                                on_test=checker.on_test)
        except KernelStartError:  # once more: a busy machine can be slow to start a kernel
            checker = Checker(plan, state.checks)
            try:
                runs = run_notebook(plan.nb, private.kernel, job.limits, replayable,
                                    on_test=checker.on_test)
            except KernelStartError as exc:
                state.finished = _result(job, JobStatus.FAILED, state.start, notes=state.said,
                                         error=str(exc))
                return
    state.runs, state.verdicts = runs, checker.results


def kernel_allowance(limits: Limits) -> float:
    """The longest a notebook's run may take under its limits: ``wall`` and, for each
    kernel it may start (the first twice, then one per restart), ``startup``."""
    return limits.wall + (limits.max_restarts + 2) * limits.startup


def score_results(state: JobState) -> None:
    """Each test's points and message from the runs and the verdicts
    (``grader.grading.notebook.scoring``), and what went wrong while putting the files in place.
    Reads ``plan``, ``runs``, ``verdicts`` and ``private``; writes ``tests``, ``manual``,
    ``incidents`` and ``notes``. A job whose every step ran is graded (:func:`_graded`)."""
    state.tests, state.manual, state.incidents = score(state.plan, state.runs, state.verdicts)
    state.notes += [p[0].upper() + p[1:] + "." for p in state.private.problems()]


def make_inert(state: JobState) -> None:
    """Take out of the notebook to be written whatever an instructor's browser would run
    or render of the student's (``grader.grading.notebook.inert``): here, in the grading worker, so
    that the time it takes counts against the job's own wall limit. Reads and changes
    ``plan``'s notebook; adds what was removed to ``integrity``."""
    state.integrity += inert.notebook(state.plan.nb)


# The grading of one submitted notebook, in order; :func:`_run` walks it.
STEPS = (choose_notebook, read_notebook, assemble_plan, list_checks, note_integrity,
         write_files, run_and_check, score_results, make_inert)
# The steps that judge the notebook's run, on typed data: an error there is the grader's
# own (the job fails). An error in any other step comes of reading the submission's bytes:
# that submission alone is not graded (:func:`not_graded`).
JUDGING = ("run_and_check", "score_results")
DOING = {"choose_notebook": "choosing", "read_notebook": "reading", "assemble_plan": "repairing",
         "list_checks": "listing the checks of", "note_integrity": "scanning the code of",
         "write_files": "putting in place the files of", "make_inert": "making inert the outputs of"}


def _run(job: Job, start: float) -> JobResult:
    """Walk :data:`STEPS` until one ends the job; a job whose every step ran is graded.
    The private directory is removed whatever happens."""
    state = JobState.begin(job, start)
    try:
        for step in STEPS:
            try:
                step(state)
            except OverLimit as exc:  # the notes so far go with it (run_job makes its result)
                exc.said = state.said
                raise
            except Exception as exc:  # noqa: BLE001 (one submission's bytes: that submission only)
                if step.__name__ in JUDGING:  # the grader's own bug: the job fails
                    return _result(job, JobStatus.FAILED, start, notes=state.said,
                                   error=traceback.format_exc())
                why = f"{DOING.get(step.__name__, step.__name__)} it raised {type(exc).__name__}: {exc}"
                return not_graded(job, start, why[:1000] + ".", traceback.format_exc(), state.said)
            if state.finished is not None:
                return state.finished
    finally:
        if state.private is not None:
            state.private.remove()
    return _graded(state)


def _graded(state: JobState) -> JobResult:
    """The result of a job whose every step ran."""
    job, plan = state.job, state.plan
    return _result(job, JobStatus.GRADED, state.start, tests=state.tests, manual=state.manual,
                   answers=answers(plan), repairs=plan.repairs, incidents=state.incidents,
                   autograded=plan.nb, notes=[*state.said, *state.notes], integrity=state.integrity,
                   flags=state.flags, submitted_as=state.chosen)


RELEASED = "release:"  # the grade_ids of the proof's second half


def proof_plan(source, release) -> Plan:
    """The environment proof in one notebook: the source notebook with its solutions,
    then the release's answer cells (the stubs) and test cells once more, whose tests
    are named ``release:<grade_id>``. The first half must earn full marks, the second 0."""
    full = assemble(source, release, {"cells": [dict(c) for c in source.cells]})
    stubs = assemble(source, release, None)
    cells, kinds, grade_ids = list(full.nb.cells), list(full.kinds), list(full.grade_ids)
    for cell, kind, grade_id in zip(stubs.nb.cells, stubs.kinds, stubs.grade_ids):
        if kind in {CellKind.ANSWER, CellKind.TEST}:
            cell = nbjson.from_dict(dict(cell))
            cell.id = f"release-{cell.id}"
            if kind == CellKind.TEST:
                cell.metadata = nbjson.from_dict({**cell.metadata, "nbgrader": {
                    **nbgrader_meta(cell), "grade_id": f"{RELEASED}{grade_id}"}})
                grade_id = f"{RELEASED}{grade_id}"
            cells.append(cell)
            kinds.append(kind)
            grade_ids.append(grade_id)
    plan = Plan(nbjson.new_notebook(cells, dict(full.nb.metadata)), kinds, grade_ids)
    plan.given = full.given
    link_tests(plan)
    return plan


def _manual_cells(plan):
    for cell, kind in zip(plan.nb.cells, plan.kinds):
        if kind == CellKind.MANUAL:
            meta = nbgrader_meta(cell)
            yield meta.get("grade_id", cell.id), float(meta.get("points", 0) or 0)
