"""Late submissions, exactly as ``nbgrader autograde`` treats them.

The due date is the gradebook's (``nbgrader db assignment add NAME --duedate=...`` or
formgrader's Manage Assignments page), with a student's extension if they have one; the
submission time is the gradebook's, from the submission's ``timestamp.txt``. The penalty
is what the configured ``LateSubmissionPlugin`` (``c.AssignLatePenalties.plugin_class``,
``c.LateSubmissionPlugin.penalty_method`` in ``nbgrader_config.py``) gives, applied by
nbgrader's own ``AssignLatePenalties`` preprocessor, once per notebook: the gradebook
then holds the same ``late_submission_penalty`` that stock autograde would have written,
and ``nbgrader export``, formgrader and the feedback all show it.
"""
from __future__ import annotations

import logging
import warnings


class LateConfigError(RuntimeError):
    """The late-submission settings of ``nbgrader_config.py`` cannot be used."""


def _quiet() -> logging.Logger:
    log = logging.getLogger("grader.late")
    log.setLevel(logging.CRITICAL)
    log.propagate = False
    return log


class LatePolicy:
    """The course's late-submission plugin. Constructing one checks the configuration, so
    a mistake in it stops ``grade`` before anybody is graded."""

    def __init__(self, config):
        self.config = config
        try:
            processor = self._processor()
            processor.init_plugin()
        except Exception as exc:  # noqa: BLE001 (traitlets and imports raise many kinds)
            raise LateConfigError(
                "the late-submission settings in nbgrader_config.py cannot be used "
                f"(AssignLatePenalties.plugin_class, LateSubmissionPlugin.penalty_method): "
                f"{type(exc).__name__}: {exc}") from None
        plugin = processor.plugin_inst
        method = getattr(plugin, "penalty_method", None)
        self.describe = type(plugin).__name__ + (f" (penalty_method = {method!r})" if method else "")

    def _processor(self):
        from nbgrader.preprocessors import AssignLatePenalties

        return AssignLatePenalties(config=self.config, log=_quiet())

    def apply(self, db_url: str, student: str, assignment: str, notebooks: list[str]) -> None:
        """Write each notebook's late penalty into the gradebook (None when on time)."""
        from nbformat.v4 import new_notebook

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for notebook in notebooks:
                resources = {"nbgrader": {"db_url": db_url, "assignment": assignment,
                                          "student": student, "notebook": notebook}}
                self._processor().preprocess(new_notebook(), resources)


def describe_lateness(seconds: float) -> str:
    """``1 day 2 h``, ``3 h 5 min``, ``40 s``: how late, for people."""
    seconds = int(round(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} day{'s' if days != 1 else ''}" + (f" {hours} h" if hours else "")
    if hours:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    if minutes:
        return f"{minutes} min"
    return f"{secs} s"
