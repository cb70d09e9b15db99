"""Reading and writing nbgrader notebooks: cell roles, solution extraction, authoring helpers.

Uses only ``json`` so that it runs wherever the checks run.
"""

import json
import re

SCHEMA = 3
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


class NotebookError(ValueError):
    """A notebook that cannot be read or lacks what grading needs."""


def source_text(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def is_solution(cell):
    return bool(nbgrader_meta(cell).get("solution"))


def is_graded_test(cell):
    meta = nbgrader_meta(cell)
    return bool(meta.get("grade")) and not meta.get("solution") and cell.get("cell_type") == "code"


def grade_id(cell):
    return nbgrader_meta(cell).get("grade_id")


def read(path):
    """Load a notebook as a dict, or raise :class:`NotebookError` saying what is wrong with it."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise NotebookError("the file does not exist") from None
    return loads(data)


def loads(data):
    """A notebook from its bytes, as :func:`read` does from a file."""
    try:
        nb = json.loads(data.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise NotebookError(f"not valid notebook JSON ({error})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("JSON, but not a notebook (no list of cells)")
    for index, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict):
            raise NotebookError(f"JSON, but not a notebook (cell {index} is {json.dumps(cell)[:40]}, not a cell)")
        meta = cell.get("metadata", {})
        if not isinstance(meta, dict) or not isinstance(meta.get("nbgrader", {}), dict):
            raise NotebookError(f"JSON, but not a notebook (cell {index}'s metadata is not a JSON object)")
        source = cell.get("source", "")
        if not (isinstance(source, str) or isinstance(source, list) and all(isinstance(s, str) for s in source)):
            raise NotebookError(f"JSON, but not a notebook (cell {index}'s source is not text)")
    return nb


def write(nb, path):
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(nb, handle, indent=1, ensure_ascii=False, sort_keys=True)
        handle.write("\n")


def strip_markers(source):
    """The solution as the student would write it: marker lines removed, hidden tests dropped."""
    source = re.sub(rf"[ \t]*{re.escape(BEGIN_HIDDEN)}.*?{re.escape(END_HIDDEN)}[ \t]*\n?", "", source, flags=re.S)
    lines = [line for line in source.splitlines() if line.strip() not in (BEGIN_SOLUTION, END_SOLUTION)]
    return "\n".join(lines).rstrip() + "\n"


def solutions_module(nb, topic):
    """The solution cells of a source notebook as the text of an importable module."""
    parts = [f'"""Reference solutions for the `{topic}` assignment.\n\n'
             f"Generated from source/{topic}/{topic}.ipynb by `python -m autograder build`; do not edit.\n"
             '"""\n']
    for cell in nb["cells"]:
        if cell.get("cell_type") == "code" and is_solution(cell):
            parts.append(f"# --- cell {grade_id(cell)} ---\n" + strip_markers(source_text(cell)))
    return "\n\n".join(parts)


def solution_sources(nb):
    """``{grade_id: solution text}`` for every solution cell (what a perfect student types)."""
    return {grade_id(c): strip_markers(source_text(c)) for c in nb["cells"]
            if c.get("cell_type") == "code" and is_solution(c)}


def graded_test_ids(nb):
    return [grade_id(c) for c in nb["cells"] if is_graded_test(c)]


# ------------------------------------------------------------------ authoring

def lines(text):
    """Notebook JSON's list-of-lines form of ``text``."""
    return text.strip("\n").splitlines(keepends=True)


def _meta(cell_id, *, grade=False, solution=False, locked=False, points=None):
    meta = {"grade": grade, "grade_id": cell_id, "locked": locked, "schema_version": SCHEMA,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def markdown(cell_id, text):
    """A read-only lesson cell."""
    return {"cell_type": "markdown", "id": cell_id, "metadata": _meta(cell_id, locked=True),
            "source": lines(text)}


def code(cell_id, text):
    """A read-only example cell that students run (not graded)."""
    return {"cell_type": "code", "execution_count": None, "id": cell_id, "metadata": _meta(cell_id, locked=True),
            "outputs": [], "source": lines(text)}


def solution(cell_id, text):
    """A cell the student edits; the part between the solution markers becomes the stub."""
    return {"cell_type": "code", "execution_count": None, "id": cell_id,
            "metadata": _meta(cell_id, solution=True), "outputs": [], "source": lines(text)}


def test(cell_id, text, points):
    """An autograded test cell worth ``points``."""
    return {"cell_type": "code", "execution_count": None, "id": cell_id,
            "metadata": _meta(cell_id, grade=True, locked=True, points=points), "outputs": [],
            "source": lines(text)}


def notebook(cells, title):
    return {"cells": cells, "metadata": {"kernelspec": KERNELSPEC, "language_info": {"name": "python"},
                                         "title": title},
            "nbformat": 4, "nbformat_minor": 5}


def code_cells(nb, topic=None):
    """``[(cell key, source)]``: the code a notebook runs when graded, the one rule for it everywhere (the trusted
    grader, ``check``, the jobs): every code cell of ``nb`` but the graded test cells (``topic``'s, when given; else
    those marked as graded tests), in order; the key is the cell's grade id or ``cell <index>``."""
    if topic is not None:
        from autograder.checks import items_of

        tests = {item.cell_id for item in items_of(topic)}
        keep = [grade_id(cell) not in tests for cell in nb["cells"]]
    else:
        keep = [not is_graded_test(cell) for cell in nb["cells"]]
    return [(grade_id(cell) or f"cell {index}", source_text(cell))
            for index, (cell, kept) in enumerate(zip(nb["cells"], keep)) if kept and cell.get("cell_type") == "code"]
