"""nbgrader configuration: this directory is the course directory.

Per-submission limits live in autograder's settings (see README); the values here
are nbgrader's own and are read by every nbgrader command run from this directory.
"""

from nbgrader.converters.autograde import Autograde

from autograder.course.resilient import ResilientExecute

c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.course_id = "effective-pytorch-lab"
c.CourseDirectory.root = "."
# The embedded SQLite gradebook in the course directory (nbgrader's default, spelled out).
c.CourseDirectory.db_url = "sqlite:///gradebook.db"

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
# A cell that runs longer than this is stopped and scored 0; the rest of the notebook still runs.
c.Execute.timeout = 300
c.Execute.interrupt_on_timeout = True
# nbgrader's default autograde pipeline, with an Execute that survives a dying kernel (a crash costs only the
# checks after it, not the whole notebook).
c.Autograde.autograde_preprocessors = [
    ResilientExecute if step.__name__ == "Execute" else step
    for step in Autograde.class_traits()["autograde_preprocessors"].make_dynamic_default()
]
# Keep graded notebooks small even when a submission prints without end.
c.LimitOutput.max_lines = 200
c.LimitOutput.max_traceback = 100
