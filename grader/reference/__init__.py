"""Every graded function's reference, under the names in COURSE.md.

The references live in their lessons' folders (``grader/lessons/NN_slug/reference.py``);
``grader.reference.matmul_dot`` finds a name in the lessons in reading order and imports
only as far as needed (a lesson-01 name never imports torch). This is the instructor's
side: a learner's copy of the course has no ``grader.reference``.
"""
from ..lessons import lesson_module, lessons


def _modules():
    for lesson in lessons():
        yield lesson_module(lesson, "reference")


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    for module in _modules():
        if name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            globals()[name] = value
            return value
    raise AttributeError(f"grader.reference has no {name!r}")


def names() -> list[str]:
    return [name for module in _modules() for name in module.__all__]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(names()))
