"""The attention course's grader: references, checks, release and grading.

In a notebook::

    from grader import check
    check("matmul_dot", matmul_dot)            # visible test
    check("matmul_dot", matmul_dot, hidden=True)  # hidden test

From a shell: ``python -m grader release | grade | check`` (see ``python -m grader -h``).
"""
from .checking import CheckFailed, check

__all__ = ["check", "CheckFailed"]
