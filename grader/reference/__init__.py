"""Reference implementations of every graded function, under the names in COURSE.md.

Each lesson keeps its references in its own module here; this package re-exports every
public name, so ``grader.reference.matmul_dot`` works whatever lesson it comes from.

Names are resolved lazily: the package reads each module's ``__all__`` from its source
(without importing it) and imports a module only when one of its names is first used.
A lesson-01 check therefore never pays for importing torch.
"""
import ast as _ast
import importlib as _importlib
import pkgutil as _pkgutil
from pathlib import Path as _Path


def _public_names(module: str) -> list[str]:
    source = (_Path(__file__).parent / f"{module}.py").read_text(encoding="utf-8")
    for node in _ast.parse(source).body:
        if isinstance(node, _ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return list(_ast.literal_eval(node.value))
    raise ImportError(f"grader.reference.{module} has no literal __all__")


def _build_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for info in sorted(_pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        for name in _public_names(info.name):
            if name in index:
                raise ImportError(
                    f"grader.reference.{name} is defined by two lessons: "
                    f"{index[name]} and {info.name}"
                )
            if name == info.name:
                raise ImportError(f"grader.reference.{info.name} defines a name equal to its module's")
            index[name] = info.name
    return index


_INDEX = _build_index()
__all__ = sorted(_INDEX)


def __getattr__(name: str):
    module = _INDEX.get(name)
    if module is None:
        raise AttributeError(f"grader.reference has no {name!r}; known names: {', '.join(__all__)}")
    value = getattr(_importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
