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
