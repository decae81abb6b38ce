"""``python -m grader release``: regenerate ``notebooks/`` from ``solutions/``.

nbgrader's ``generate_assignment`` does the work (solutions replaced by stubs, hidden
tests removed, cells locked, checksums computed). It writes into a temporary directory
with a throw-away gradebook, and the result is normalised so that a release is a pure
function of the sources:

* no outputs, no execution counts, no run-time cell metadata;
* fixed notebook metadata (kernelspec and language name only);
* nbformat's JSON layout (sorted keys, one-space indent, trailing newline).

Beside each released notebook it writes the recorded checks (``NN_slug.checks.json``,
see ``grader.learner.recording``): for every exercise the notebook checks, its visible
cases with the reference's and each catalogued mistake's outcomes, as data. A learner's
copy of the course needs them, and never the reference. A recording that still says what
the fresh one says is kept byte for byte, so that releasing on another CPU changes no file
whose meaning did not change.

``release --check`` does the same into a temporary directory and compares file by file:
notebooks byte for byte, recordings by what they say (``grader.recording_compare``):
another CPU, or another BLAS or torch kernel, rounds the last bits of a float otherwise,
and a recording written on one machine must pass on every other.
"""
from __future__ import annotations

import filecmp
import json
import logging
import shutil
import tempfile
from pathlib import Path

import nbformat

from .course import (
    NOTEBOOKS,
    SOLUTIONS,
    assignments,
    course_root,
    ensure_scripts_on_path,
    exercises_checked,
    nbgrader_config,
)
from .learner import recording
from .recording_compare import file_differences

KEEP_CELL_METADATA = ("nbgrader", "editable", "deletable", "tags", "jupyter")
NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


class ReleaseError(RuntimeError):
    pass


def normalise(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Strip everything that depends on a run or a machine, in place, and return ``nb``."""
    nb.metadata = nbformat.from_dict(NOTEBOOK_METADATA)
    nb.nbformat, nb.nbformat_minor = 4, 5
    for index, cell in enumerate(nb.cells):
        cell.metadata = nbformat.from_dict(
            {k: v for k, v in cell.metadata.items() if k in KEEP_CELL_METADATA}
        )
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        if "attachments" in cell and not cell.attachments:
            del cell["attachments"]
        if not cell.get("id"):
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            cell.id = grade_id or f"cell-{index:03d}"
    return nb


def write_notebook(nb: nbformat.NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")


def clean_sources(root: Path) -> list[Path]:
    """Strip outputs from the source notebooks; return the ones that changed."""
    changed = []
    for name in assignments(root):
        path = root / SOLUTIONS / name / f"{name}.ipynb"
        before = path.read_text(encoding="utf-8")
        nb = normalise(nbformat.reads(before, as_version=4))
        write_notebook(nb, path)
        if path.read_text(encoding="utf-8") != before:
            changed.append(path)
    return changed


def _generate(root: Path, out: Path, names: list[str]) -> None:
    from nbgrader.converters import GenerateAssignment
    from nbgrader.coursedir import CourseDirectory

    ensure_scripts_on_path()
    with tempfile.TemporaryDirectory() as tmp:
        config = nbgrader_config(
            root,
            CourseDirectory={
                "release_directory": str(out),
                "db_url": f"sqlite:///{tmp}/gradebook.db",
            },
            # Not the course's post-convert hook (`after_generate`): that hook calls this.
            GenerateAssignment={"create_assignment": True, "force": True,
                                "post_convert_hook": _no_hook},
        )
        for name in names:
            coursedir = CourseDirectory(config=config)
            coursedir.assignment_id = name
            converter = GenerateAssignment(coursedir=coursedir, config=config)
            converter.log.setLevel(logging.WARNING)
            try:
                converter.start()
            except Exception as exc:  # nbgrader reports problems as assorted exceptions
                raise ReleaseError(f"nbgrader could not generate {name}: {exc}") from exc
    for nb_path in sorted(out.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in nb_path.parts:
            continue
        write_notebook(normalise(nbformat.read(nb_path, as_version=4)), nb_path)
    for name in names:
        write_recording(root, name, out / name)


def _no_hook(**_) -> None:
    pass


def after_generate(root: Path, assignment: str) -> None:
    """``nbgrader generate_assignment``'s post-convert hook (``nbgrader_config.py``): what
    formgrader's Generate button or the command wrote into ``notebooks/`` is replaced by
    ``python -m grader release ASSIGNMENT``'s output, byte for byte, recorded checks
    included. nbgrader only logs a failing hook, so a failure is logged as an error."""
    from traitlets.log import get_logger

    try:
        release(Path(root), [assignment])
    except Exception as exc:  # noqa: BLE001 (shown where nbgrader's log is shown)
        get_logger().error("notebooks/%s is nbgrader's output, not the course's release: `python -m "
                           "grader release %s` failed: %s", assignment, assignment, exc)
        raise
    get_logger().info("notebooks/%s rewritten as `python -m grader release %s` writes it",
                      assignment, assignment)


def write_recording(root: Path, name: str, folder: Path) -> Path:
    """The recorded checks of assignment ``name``'s notebook, written into ``folder``."""
    from .lessons import expectations

    source = json.loads((root / SOLUTIONS / name / f"{name}.ipynb").read_text(encoding="utf-8"))
    try:
        recorded = {ex: expectations(ex, False) for ex in exercises_checked(source)}
    except Exception as exc:  # a lesson's cases or reference failing
        raise ReleaseError(f"could not record the checks of {name}: {type(exc).__name__}: {exc}") from exc
    path = recording.recording_path(folder / f"{name}.ipynb")
    path.write_text(recording.dumps(name, recorded), encoding="utf-8")
    return path


def build(root: Path, out: Path, only: list[str] | None = None) -> None:
    """Generate every assignment of ``root`` (or those in ``only``) into ``out``
    (created fresh)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    names = assignments(root)
    if not names:
        raise ReleaseError(f"no source notebooks found under {root / SOLUTIONS}")
    unknown = sorted(set(only or ()) - set(names))
    if unknown:
        raise ReleaseError(f"no such assignment: {', '.join(unknown)} (there are {', '.join(names)})")
    _generate(root, out, [n for n in names if not only or n in only])


def _tree(path: Path) -> set[Path]:
    return {p.relative_to(path) for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def stale_files(root: Path, only: list[str] | None = None) -> list[str]:
    """What differs between ``notebooks/`` and a fresh release, as readable lines; with
    ``only``, of those assignments (and files in ``notebooks/`` that belong to none)."""
    problems = []
    names = assignments(root)
    for name in [n for n in names if not only or n in only]:
        src = root / SOLUTIONS / name / f"{name}.ipynb"
        nb = nbformat.read(src, as_version=4)
        if any(c.cell_type == "code" and (c.outputs or c.execution_count) for c in nb.cells):
            problems.append(f"{src.relative_to(root)} has outputs (release strips them)")
    current = root / NOTEBOOKS
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / NOTEBOOKS
        build(root, fresh, only)
        from .lessons.error_model import STORE, stale_entries

        for name in stale_entries():
            problems.append(f"{STORE.relative_to(root) if STORE.is_relative_to(root) else STORE} has no "
                            f"current entry for {name} (the mutants it keeps)")
        want, have = _tree(fresh), _tree(current) if current.exists() else set()
        if only:
            have = {rel for rel in have if rel.parts[0] in only or rel.parts[0] not in names}
        for rel in sorted(want - have):
            problems.append(f"{NOTEBOOKS}/{rel} is missing")
        for rel in sorted(have - want):
            problems.append(f"{NOTEBOOKS}/{rel} is not produced by the release")
        for rel in sorted(want & have):
            if filecmp.cmp(fresh / rel, current / rel, shallow=False):
                continue
            if not rel.name.endswith(recording.SUFFIX):
                problems.append(f"{NOTEBOOKS}/{rel} differs from a fresh release")
                continue
            found = file_differences(current / rel, fresh / rel)
            if found:
                lines = "\n".join(f"      {line}" for line in found)
                problems.append(f"{NOTEBOOKS}/{rel} differs from a fresh release beyond the "
                                f"checks' tolerance:\n{lines}")
    return problems


def same_recording(a: Path, b: Path) -> bool:
    """Whether two recordings say the same, as the checks read them
    (``grader.recording_compare``): floats within each case's tolerance, stand-ins by
    what they unlock, everything else exactly."""
    return not file_differences(a, b)


def keep_recordings_that_say_the_same(fresh: Path, current: Path) -> list[Path]:
    """Put each recording of ``current`` that says what its fresh twin says in the fresh
    twin's place, byte for byte, and return the ones kept: a release on a machine whose
    CPU rounds the last bits otherwise rewrites only the recordings whose meaning changed."""
    kept = []
    for path in sorted(fresh.glob(f"*/*{recording.SUFFIX}")):
        old = current / path.relative_to(fresh)
        if not old.is_file() or old.read_bytes() == path.read_bytes():
            continue
        if not file_differences(old, path):
            shutil.copyfile(old, path)
            kept.append(old)
    return kept


def release(root: Path | None = None, only: list[str] | None = None) -> list[str]:
    """Clean the sources and rewrite ``notebooks/`` (only the folders of ``only``, if
    given); return the assignment names released. A recording that says the same as
    before is left as it was (:func:`keep_recordings_that_say_the_same`)."""
    root = root or course_root()
    clean_sources(root)
    out = root / NOTEBOOKS
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / NOTEBOOKS
        build(root, fresh, only)
        from .lessons import load_all
        from .lessons.error_model import stale_entries, store

        if stale_entries():
            store(stale_entries(), load_all())
        keep_recordings_that_say_the_same(fresh, out)
        if only:
            for name in only:
                shutil.rmtree(out / name, ignore_errors=True)
                shutil.copytree(fresh / name, out / name)
            return list(only)
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(fresh, out)
    return assignments(root)
