"""The learner's side of the course package: what the kit ships and the grading sandbox
holds.

* ``check`` (:mod:`.checks`) and the engine behind it (:mod:`.engine`), with the cases and
  expectations as data (:mod:`.cases`, :mod:`.codec`), how values differ
  (:mod:`.difference`) and the kinds of comparison (:mod:`.comparisons`), the wording of messages
  (:mod:`.wording`), the relations (:mod:`.relations`) and the shortcut scan
  (:mod:`.shortcuts`);
* :mod:`.plugins`: the interface through which a lesson folder's ``learner.py`` adds its
  own kinds of driver, comparison and fixture (the engine names no lesson);
* the recorded checks beside the released notebooks (:mod:`.recording`);
* :mod:`.agent`: running an answer on cases, in a notebook or, at grading, inside the
  learner's sandboxed kernel (the kernel-side half of the grading bridge), with the kinds
  of driver (:mod:`.drivers`) and the test fixtures it hands to answers (:mod:`.fixtures`);
* input validation for the notebooks' given lines and the references (:mod:`.validation`)
  and the run-time helpers (:mod:`.env`).

Nothing here names a lesson or imports the instructor's side (``grader.lessons``, ``grader.reference``,
release, kit and grading); ``tests/test_boundary.py`` keeps it so.
"""
from .checks import CheckFailed, check

__all__ = ["CheckFailed", "check"]
