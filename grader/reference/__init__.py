"""Reference implementations of every graded function, under the names in COURSE.md.

Each lesson keeps its references in its own module here; this package re-exports every
public name, so ``grader.reference.matmul_dot`` works whatever lesson it comes from.
"""
import importlib as _importlib
import pkgutil as _pkgutil

__all__: list[str] = []

for _info in sorted(_pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name.startswith("_"):
        continue
    _module = _importlib.import_module(f"{__name__}.{_info.name}")
    for _name in _module.__all__:
        # A function may share its module's name (lesson 03's attention_by_hand): the
        # function wins, and the module stays importable as grader.reference.<module>.
        if _name in globals() and globals()[_name] is not _module:
            raise ImportError(f"grader.reference.{_name} is defined by two lessons")
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)
