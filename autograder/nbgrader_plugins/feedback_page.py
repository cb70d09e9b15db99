"""The HTML page ``nbgrader generate_feedback`` writes for a student, with each item named as the student knows it.

nbgrader's feedback template lists every graded test cell in the page's contents as "Test cell"; a student reads
``check_softmax_forward`` in their notebook and in every message, so the contents say that (the anchor is the test
cell's grade id, ``test_<item>``: :attr:`autograder.spec.Item.cell_id`)."""

import re

from nbconvert.exporters import HTMLExporter

_TEST_CELL = re.compile(r'<a href="#test_([A-Za-z0-9_]+)">Test cell</a>')


def name_the_items(html):
    """``html`` with each "Test cell" entry of the contents named after its check."""
    return _TEST_CELL.sub(r'<a href="#test_\1">check_\1</a>', html)


class FeedbackPage(HTMLExporter):
    """nbgrader's feedback page (its template and settings), its contents naming each item's check."""

    def from_notebook_node(self, nb, resources=None, **kw):
        html, resources = super().from_notebook_node(nb, resources, **kw)
        return name_the_items(html), resources
