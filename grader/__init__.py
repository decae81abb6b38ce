"""The attention course's package.

In a notebook::

    from grader import check
    check("matmul_dot", matmul_dot)

``grader.learner`` is the learner's side (the check engine, recorded checks, input
validation, the kernel-side agent); it is what a student's copy of the course holds.
Everything else (``grader.lessons`` with the references and catalogued mistakes, release,
kit, grading) is the instructor's side. From a shell: ``python -m grader -h``.
"""
from .learner import CheckFailed, check

__all__ = ["CheckFailed", "check"]
