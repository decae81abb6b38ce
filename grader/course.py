"""Where the course lives on disk, and nbgrader configuration built from it."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = "solutions"
NOTEBOOKS = "notebooks"


def course_root() -> Path:
    """The course directory: ``$ATTENTION_COURSE_ROOT`` if set, else this checkout."""
    return Path(os.environ.get("ATTENTION_COURSE_ROOT", ROOT)).resolve()


def assignments(root: Path | None = None) -> list[str]:
    """Assignment names (``NN_slug``) in reading order, from ``solutions/``."""
    root = root or course_root()
    src = root / SOLUTIONS
    return sorted(
        p.name for p in src.iterdir()
        if p.is_dir() and not p.name.startswith(".") and (p / f"{p.name}.ipynb").exists()
    )


def sources(root: Path | None = None) -> dict[str, dict[str, dict]]:
    """Every assignment's source notebooks: name -> file name -> notebook JSON."""
    import json

    root = root or course_root()
    return {name: {p.name: json.loads(p.read_text(encoding="utf-8"))
                   for p in sorted((root / SOLUTIONS / name).glob("*.ipynb"))}
            for name in assignments(root)}


def source_notebook(name: str, root: Path | None = None) -> Path:
    return (root or course_root()) / SOLUTIONS / name / f"{name}.ipynb"


def released_notebook(name: str, root: Path | None = None) -> Path:
    return (root or course_root()) / NOTEBOOKS / name / f"{name}.ipynb"


def nbgrader_config(root: Path | None = None, **overrides) -> Config:
    """The course's ``nbgrader_config.py``, with ``overrides`` such as
    ``{"CourseDirectory": {"release_directory": "/tmp/x"}}`` merged on top."""
    root = root or course_root()
    loader = PyFileConfigLoader("nbgrader_config.py", path=str(root))
    config = loader.load_config()
    config.CourseDirectory.root = str(root)
    extra = Config()
    for section, values in overrides.items():
        for key, value in values.items():
            extra[section][key] = value
    config.merge(extra)
    return config


def ensure_scripts_on_path() -> None:
    """nbgrader runs ``alembic`` as a subprocess when it creates a gradebook; make sure the
    scripts of this interpreter's environment are found even when the venv is not active."""
    scripts = str(Path(sys.executable).parent)
    parts = os.environ.get("PATH", "").split(os.pathsep)
    if scripts not in parts:
        os.environ["PATH"] = os.pathsep.join([scripts, *parts])


# ----------------------------------------------------------------------------- test cells

@dataclass(frozen=True)
class CheckCall:
    """One ``check("exercise", target[, hidden=True])`` of a test cell."""

    exercise: str
    target: str
    hidden: bool = False


class TestCellError(ValueError):
    pass


def check_calls(source: str) -> list[CheckCall]:
    """The checks a graded test cell makes, read from its source (the SOURCE notebook's,
    which is the only one trusted). A test cell holds nothing but such calls and comments;
    anything else raises :class:`TestCellError`."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise TestCellError(f"the test cell is not valid Python: {exc}") from None
    calls = []
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        ok = (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "check"
              and len(call.args) == 2 and isinstance(call.args[0], ast.Constant)
              and isinstance(call.args[0].value, str) and isinstance(call.args[1], ast.Name)
              and all(k.arg == "hidden" and isinstance(k.value, ast.Constant) for k in call.keywords))
        if not ok:
            raise TestCellError(f"line {node.lineno}: a test cell may only call "
                                f"check(\"exercise\", name) or check(\"exercise\", name, hidden=True)")
        hidden = any(bool(k.value.value) for k in call.keywords)
        calls.append(CheckCall(call.args[0].value, call.args[1].id, hidden))
    if not calls:
        raise TestCellError("the test cell calls no check")
    return calls


def exercises_checked(nb) -> list[str]:
    """The exercises a notebook's test cells check, in order (``nb``: notebook JSON)."""
    names = []
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution"):
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for call in check_calls(source):
                if call.exercise not in names:
                    names.append(call.exercise)
    return names
