"""Deadlines and late work, applied through nbgrader (docs/deadlines.md).

The policy lives in ``settings.deadlines``: a due date per assignment, a grace period, a penalty per started day
late up to a cap, a cut-off after which a submission scores 0, and per-student extensions. nbgrader keeps the
facts: the assignment's ``duedate``, the student's ``SubmittedAssignment.extension`` and ``timestamp`` (from the
submission's ``timestamp.txt``), hence ``total_seconds_late``; and it applies the penalty per notebook in its
autograde step ``AssignLatePenalties`` through a ``LateSubmissionPlugin``. :class:`LatePolicy` is that plugin and
:class:`DeadlinePenalties` that step, which first writes the due date and every extension on it from the settings
into the gradebook (``autograder/course/lateness.py``), so plain ``nbgrader autograde``, the formgrader and
``python -m autograder grade`` agree (``nbgrader_config.py``). :class:`LateNote` tells the student in the feedback.
"""

from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties
from traitlets import Type

from autograder.course.late_policy import Lateness, lateness
from autograder.course.lateness import write_deadlines
from autograder.nbgrader_plugins.feedback_steps import FeedbackStep
from autograder.settings import use_course

# ------------------------------------------------------------------ nbgrader

class LatePolicy(LateSubmissionPlugin):
    """nbgrader's late-submission plugin with the course's policy (``settings.deadlines``): the points a notebook
    that earned ``score`` loses for ``total_seconds_late`` (nbgrader counts them from the due date with the
    student's extension)."""

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        late = lateness(score, total_seconds_late)
        self.log.info("%s: %s", student_id, late.describe())
        return late.points


class DeadlinePenalties(AssignLatePenalties):
    """nbgrader's ``AssignLatePenalties`` with :class:`LatePolicy`, after writing the assignment's due date and the
    student's extension from the settings into the gradebook (nbgrader's own autograde reads the submission time
    from ``timestamp.txt`` before this step)."""

    plugin_class = Type(LatePolicy, klass=LateSubmissionPlugin).tag(config=True)

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        info = resources["nbgrader"]
        root = self.config.CourseDirectory.get("root")
        if root:            # a formgrader started before course_settings.json was edited grades with the file as it is
            use_course(root)
        with Gradebook(info["db_url"]) as gradebook:
            write_deadlines(gradebook, info["assignment"])
        return super().preprocess(nb, resources)


class LateNote(FeedbackStep):   # display_data_priority configurable: no warning
    """Feedback (``nbgrader generate_feedback``): a first cell that tells the student how late the submission was
    and what that cost, from nbgrader's gradebook ("late by 3 h 12 min: -10% (2.1 points)"). nbgrader's own
    template shows only the points taken."""

    def preprocess(self, nb, resources):
        from nbformat.v4 import new_markdown_cell
        from nbgrader.api import Gradebook, MissingEntry

        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            try:
                submission = gradebook.find_submission(info["assignment"], info["student"])
                notebook = gradebook.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            except MissingEntry:
                return nb, resources
            if submission.duedate is None or submission.timestamp is None:
                return nb, resources
            seconds = submission.total_seconds_late
            late = lateness(notebook.score, seconds)
            recorded = round(float(notebook.late_submission_penalty or 0.0), 6)
            if abs(late.points - recorded) > 1e-6:    # graded under other deadlines than this process has: the
                share = 100 * recorded / notebook.score if notebook.score else 0.0   # gradebook's penalty stands
                late = Lateness(seconds, round(share, 2), recorded, late.grace_minutes)
            due, submitted = (f"{when:%Y-%m-%d %H:%M:%S} UTC" for when in (submission.duedate, submission.timestamp))
        text = (f"**Submission time: {late.describe()}.** Submitted {submitted}, due {due}"
                + (" (with your extension)" if submission.extension else "") + ".")
        cell = new_markdown_cell(text)
        cell.metadata["late_note"] = True
        nb.cells.insert(0, cell)
        return nb, resources
