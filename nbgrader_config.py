"""nbgrader course directory for the attention course.

solutions/NN_slug/NN_slug.ipynb is the single source of truth; `python -m grader release`
writes the student versions into notebooks/. Student data (submitted/, autograded/,
feedback/, gradebook.db) lives here too and is ignored by git.
"""
import os

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)

here = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.root = here
c.CourseDirectory.course_id = "attention"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(here, "gradebook.db")
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".*"]
c.Exchange.root = os.path.join(here, ".nbgrader_exchange")
# nbgrader never creates the exchange itself: without it the assignment list stays on
# "Loading, please wait..." and formgrader warns that release and collect are unavailable.
os.makedirs(c.Exchange.root, exist_ok=True)
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.ExecutePreprocessor.timeout = 120


# formgrader's Generate button (and `nbgrader generate_assignment`) writes notebooks/ as
# `python -m grader release` does: nbgrader's own output is replaced by the release,
# recorded checks included, so notebooks/ never drifts from what `release --check` wants.
def _release_as_the_course_does(assignment, **_):
    from grader.release import after_generate

    after_generate(here, assignment)


c.GenerateAssignment.post_convert_hook = _release_as_the_course_does

# `nbgrader generate_feedback` (and formgrader's Generate Feedback button) writes the
# course's feedback page: the checker's messages and diagnoses, hidden tests by name and
# message only, points and comments given by hand, the late penalty.
c.GenerateFeedback.exporter_class = "grader.grading.classroom.nbfeedback.FeedbackExporter"

# Late submissions: `python -m grader grade` applies nbgrader's own late-penalty step with
# these settings and the due dates in the gradebook (formgrader's Manage Assignments, or
# `nbgrader db assignment add NAME --duedate="2025-03-01 17:00:00 UTC"`).
# penalty_method "none" records lateness without a penalty; "zero" takes every point of a
# late notebook. A plugin of your own: c.AssignLatePenalties.plugin_class = "module.Class".
c.LateSubmissionPlugin.penalty_method = "none"
