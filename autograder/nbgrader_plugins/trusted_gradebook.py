"""The first step of ``nbgrader generate_feedback``: no feedback from a gradebook that cannot be trusted
(``autograder/course/gradebook_state.py`` says why and how to repair it)."""

import os

from autograder.course.gradebook_state import GradebookStateError, require_gradebook
from autograder.nbgrader_plugins.feedback_steps import FeedbackStep


class TrustedGradebook(FeedbackStep):
    """The first of ``generate_feedback``'s steps (``nbgrader_config.py``): the gradebook checked when the step is
    set up, before nbgrader removes or writes any feedback; a gradebook that is missing or does not match the records
    stops the command with the reason and the repair."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        from nbgrader.converters.base import NbGraderException

        course = self.config.CourseDirectory.get("root") or os.getcwd()
        try:
            require_gradebook(course)
        except GradebookStateError as error:
            self.log.error("Cannot write feedback: %s", error)
            raise NbGraderException(str(error)) from None

    def preprocess(self, nb, resources):
        return nb, resources
