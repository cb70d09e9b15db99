"""The steps of ``nbgrader generate_feedback`` that are ours (``nbgrader_config.py``): every one configurable as
nbconvert expects, and the hidden tests left out of the feedback with words a student reads."""


from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor
from traitlets import List


class FeedbackStep(NbGraderPreprocessor):
    """A step of ``nbgrader generate_feedback``. nbconvert's HTML exporter configures ``display_data_priority`` for
    every step (as ``NbConvertBase``) and nbgrader's steps declare it unconfigurable, so each run warned "Config
    option `display_data_priority` not recognized" once per step; here it is configurable (and unused)."""

    display_data_priority = List(NbGraderPreprocessor.display_data_priority.default_value).tag(config=True)


UNCHANGED = "No response."   # what nbgrader's autograde writes as the comment of an answer cell left as handed out


class FeedbackClearHiddenTests(FeedbackStep, ClearHiddenTests):
    """nbgrader's ClearHiddenTests (the hidden tests' code left out of the feedback), and an answer cell left as it
    was handed out says so in words a student reads, instead of nbgrader's "Comments: No response."."""

    def preprocess_cell(self, cell, resources, cell_index):
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        meta = cell.metadata.get("nbgrader") or {}
        if meta.get("solution") and meta.get("comment") == UNCHANGED:
            meta["comment"] = "This answer cell is as it was handed out: no answer was written in it."
        return cell, resources
