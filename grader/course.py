"""Where the course lives on disk, and nbgrader configuration built from it."""
from __future__ import annotations

import os
import sys
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
