"""The first of nbgrader's autograde steps (``nbgrader_config.py``): every cell's nbgrader metadata is the
instructor's, and a deleted test cell is put back, before nbgrader reads anything of a submission."""


from nbformat import from_dict
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode


class TrustedMetadata(NbGraderPreprocessor):
    """Before nbgrader reads anything of a submission: every cell's nbgrader metadata is the instructor's, from the
    source notebook, found by the cell's grade id. A cell whose id the source does not have (a student's own cell,
    or a pasted copy given a new id or points) loses its nbgrader metadata and is plain code; a second cell with
    an id already seen loses it too. Nothing a student writes in metadata is read by nbgrader or the grader. A graded
    test cell the student deleted is put back from the source (``jobs.restore_test_cells``), so that nbgrader has a
    cell to score the item, which is graded from the spec either way."""

    course_root = Unicode("", help="the course directory (source/<assignment>/<notebook>.ipynb is read from it)").tag(
        config=True)

    def preprocess(self, nb, resources):
        from autograder.engine.jobs import (restore_metadata, restore_test_cells,  # as in TrustedExecute.preprocess
                                            source_map)
        from autograder.engine.trusted_runner import TRUSTED_PROBLEM

        info = resources.get("nbgrader") or {}
        course = self.course_root or "."
        assignment = str(info.get("assignment"))
        source = source_map(course, assignment, info.get("notebook"))
        for cell_id in restore_metadata(nb, source):
            self.log.warning("%s a cell's nbgrader metadata (grade id %r) is not the instructor's: ignored",
                             TRUSTED_PROBLEM, cell_id)
        restored = restore_test_cells(nb, source, assignment)
        for cell_id in restored:
            self.log.info("test cell %s was missing: put back from the source (graded from the spec)", cell_id)
        if restored:
            nb.cells = [from_dict(cell) for cell in nb.cells]     # nbconvert's steps read cells as NotebookNodes
        return nb, resources
