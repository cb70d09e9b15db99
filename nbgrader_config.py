"""nbgrader configuration: this directory is the course directory.

Every number here comes from the course's settings (``course_settings.json`` beside this file, read by
``autograder/settings.py``; a JSON file named in ``AUTOGRADER_SETTINGS`` applies on top, and every command says so),
so that plain ``nbgrader autograde``, the formgrader, ``generate_feedback`` and ``python -m autograder grade`` grade
with the same limits, deadlines and gradebook.
"""

import os
import sys

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.converters.autograde import Autograde
from nbgrader.preprocessors import GetGrades

from autograder.nbgrader_plugins.execute import TrustedExecute
from autograder.nbgrader_plugins.feedback_page import FeedbackPage
from autograder.nbgrader_plugins.feedback_steps import FeedbackClearHiddenTests
from autograder.nbgrader_plugins.late import DeadlinePenalties, LateNote, LatePolicy
from autograder.nbgrader_plugins.metadata import TrustedMetadata
from autograder.nbgrader_plugins.save_grades import RecordedGrades
from autograder.nbgrader_plugins.trusted_gradebook import TrustedGradebook
from autograder.nbgrader_plugins.zip_collect import CanvasCollector, TimedExtractor
from autograder.settings import SettingsError, settings, use_course

c = get_config()  # noqa: F821 - provided by nbgrader

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    use_course(HERE)        # course_settings.json (and AUTOGRADER_SETTINGS over it), for every nbgrader command
except SettingsError as error:
    print(f"Cannot use the course's settings: {error}", file=sys.stderr)
    sys.exit(2)

c.CourseDirectory.course_id = "effective-pytorch-lab"
c.CourseDirectory.root = HERE
# The gradebook: SQLite in the course directory by default, PostgreSQL where several graders share one.
c.CourseDirectory.db_url = settings.grading.gradebook_url(HERE)

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
# nbgrader's default autograde pipeline, with an Execute that grades the trusted way: no kernel; the student's code
# in a sandboxed worker, every check in the grader (autograder/nbgrader_plugins/execute.py; time limits and the
# sandbox's limits come from settings.grading). Each run leaves one verdict record: RecordedGrades writes every automatic
# score from it (never from the cells' outputs) and appends it to grading-records/ (autograder/engine/records.py);
# an instructor's manual scores and extra credit are kept across regrades. Late work loses what settings.deadlines
# says: the due date and the
# student's extension go into the gradebook first, then nbgrader's late-penalty step runs our policy (DeadlinePenalties
# with the LatePolicy plugin; autograder/nbgrader_plugins/late.py, docs/deadlines.md).
c.Autograde.autograde_preprocessors = [
    {"Execute": TrustedExecute, "SaveAutoGrades": RecordedGrades, "AssignLatePenalties": DeadlinePenalties}.get(
        step.__name__, step)
    for step in Autograde.class_traits()["autograde_preprocessors"].make_dynamic_default()
]
c.AssignLatePenalties.plugin_class = LatePolicy
c.TrustedExecute.course_root = HERE
c.RecordedGrades.course_root = HERE
# Before nbgrader reads a submission, every cell's nbgrader metadata is the instructor's (from source/, by grade id);
# metadata a student wrote or pasted is dropped, and a deleted test cell is put back so that its item, graded from the
# spec whatever the cell says, is scored (TrustedMetadata; nbgrader's own add_missing_cells fails where the cell
# before it in the source is neither a graded nor a solution cell).
c.TrustedMetadata.course_root = HERE
c.Autograde.sanitize_preprocessors = [TrustedMetadata] + list(
    Autograde.class_traits()["sanitize_preprocessors"].make_dynamic_default())
# Feedback shows each check's message, never the hidden tests' code (nbgrader's default keeps it in the cells), and
# how late the submission was and what that cost (LateNote: "late by 3 h 12 min: -10% (2.1 points)").
# TrustedGradebook refuses, before nbgrader removes or writes any feedback, a gradebook that is missing or does not
# match the verdict records (autograder/course/gradebook_state.py), with the command that repairs it.
c.GenerateFeedback.preprocessors = [TrustedGradebook, GetGrades, FeedbackClearHiddenTests, LateNote,
                                    CSSHTMLHeaderPreprocessor]
# The page's contents name each item by its check (`check_softmax_forward`), not "Test cell".
c.GenerateFeedback.exporter_class = FeedbackPage
# An LMS download (Canvas's "Download Submissions" zip): `python -m autograder collect-zip` runs nbgrader's zip_collect
# with these; each entry keeps its zip date as its submission time, and Canvas's file names give the student
# (autograder/commands/collect_zip.py, docs/lms.md).
c.ZipCollectApp.extractor_plugin = TimedExtractor
c.ZipCollectApp.collector_plugin = CanvasCollector
# Keep graded notebooks small even when a submission prints without end.
c.LimitOutput.max_lines = 200
c.LimitOutput.max_traceback = 100
# nbgrader collect takes only submissions their student made, when they made them: no submission in another
# student's name, no backdated one, no symbolic link to the instructor's files (autograder/nbgrader_plugins/exchange_collect.py).
c.ExchangeFactory.collect = "autograder.nbgrader_plugins.exchange_collect.VerifiedCollect"
