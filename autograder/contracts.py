"""The contract of an exercise as data: the notebook's bullet list, clause by clause, each clause tied to the graded
items and the input cases that test it.

A topic declares ``CONTRACTS`` in ``autograder/checks/<topic>/contract.py``, one :class:`Contract` per exercise
(per solution cell of the notebook, named by its grade id)::

    CONTRACTS = (
        Contract("row_sum", (
            Clause("a `[N]` vector gives a 0-d tensor ...", items=("row_sum",), inputs=("rank_1", "zero_rows")),
            ...
        )),
    )

``python -m autograder build`` writes each contract's bullet list into the notebook's markdown cell, between the
lines ``<!-- contract: row_sum -->`` and ``<!-- end of contract -->``, and its table into ``docs/<topic>.md``; so
the text a student reads and what the checks test cannot drift apart. A check names the input case it sends with
:func:`exercised`; ``tests/checks/test_contracts.py`` grades the reference inside :func:`recording` and fails when
an item never sends an input that a clause says it sends.

This module ships in the student kit: it holds the lesson's own text, no answer.
"""

import contextlib
import re
import textwrap
from dataclasses import dataclass

from autograder.spec import current_check

BEGIN = "<!-- contract: {exercise} -->"
END = "<!-- end of contract -->"
TABLE_BEGIN = "<!-- contract table -->"
TABLE_END = "<!-- end of contract table -->"
WIDTH = 118                  # the notebooks' line length
CUDA_SUFFIX = "_cuda"        # a label that only a machine with CUDA can exercise ("on_cuda")


@dataclass(frozen=True)
class Clause:
    """One bullet of an exercise's contract: its Markdown (one paragraph; the build wraps it), the graded items
    that test it (ids: ``"row_sum"`` for ``check_row_sum``), and the labels of the input cases those items send
    for it (short snake_case names, as the checks pass them to :func:`exercised`)."""

    text: str
    items: tuple = ()
    inputs: tuple = ()


@dataclass(frozen=True)
class Contract:
    """An exercise's contract: ``exercise`` is the grade id of its solution cell (the function or class the
    notebook asks for), ``clauses`` its bullet list in order."""

    exercise: str
    clauses: tuple

    def markdown(self):
        """The bullet list, as the notebook shows it (each clause wrapped at :data:`WIDTH`)."""
        return "\n".join(bullet(clause.text) for clause in self.clauses)


_STARTS_BLOCK = re.compile(r"([-*+>#]+|\d+[.)])(\s|$)")   # a line that Markdown would read as a new list item, quote...


def bullet(text, width=WIDTH):
    """``text`` as one Markdown bullet wrapped at ``width``, no line of it read as a new block (a wrap before ``-``
    or ``1.`` would start a list): narrower until none is."""
    while True:
        lines = textwrap.wrap(" ".join(text.split()), width, initial_indent="- ", subsequent_indent="  ",
                              break_long_words=False, break_on_hyphens=False)
        if not any(_STARTS_BLOCK.match(line.strip()) for line in lines[1:]) or width <= 20:
            return "\n".join(lines)
        width -= 1


def table(contracts):
    """The Markdown table of ``contracts`` for ``docs/<topic>.md``: exercise, clause, items, inputs."""
    rows = ["| exercise | clause | items | inputs |", "| --- | --- | --- | --- |"]
    for contract in contracts:
        for clause in contract.clauses:
            text = " ".join(clause.text.split()).replace("|", "\\|")
            rows.append(f"| `{contract.exercise}` | {text} | {', '.join(f'`{i}`' for i in clause.items)} | "
                        f"{', '.join(clause.inputs)} |")
    return "\n".join(rows)


def marked_exercises(text):
    """The exercises whose :data:`BEGIN` marker lines stand in ``text``, in order (twice if marked twice)."""
    head, tail = BEGIN.split("{exercise}")
    return [line.strip()[len(head):-len(tail)] for line in text.split("\n")
            if line.strip().startswith(head) and line.strip().endswith(tail)]


def between(text, begin, end, body):
    """``text`` with what lies between the lines ``begin`` and ``end`` replaced by ``body``; ``LookupError`` when
    either line is missing or comes twice."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip() == begin]
    ends = [i for i, line in enumerate(lines) if line.strip() == end and starts and i > starts[0]]
    if len(starts) != 1 or not ends:
        raise LookupError(f"expected one line {begin!r} followed by a line {end!r}")
    return "\n".join(lines[:starts[0] + 1] + body.split("\n") + lines[ends[0]:])


# ------------------------------------------------------------------ which inputs the checks send

_RECORDED = None     # the set :func:`recording` yields, or None: recording is off (the default, and in grading)


@contextlib.contextmanager
def recording():
    """Record, for the block, every ``(item id, label)`` that the checks run in it name with :func:`exercised`;
    yields the set. Off outside (``exercised`` then does nothing)."""
    global _RECORDED
    saved, _RECORDED = _RECORDED, set()
    try:
        yield _RECORDED
    finally:
        _RECORDED = saved


def exercised(*labels):
    """Say that the running check sends the input case(s) ``labels`` (the clause's ``inputs``). Call it where the
    input is built or sent, so that the label is recorded only when the case really runs."""
    if _RECORDED is not None:
        item = current_check().removeprefix("check_")
        _RECORDED.update((item, label) for label in labels)


def exercised_as(describe, *args):
    """:func:`exercised` with the labels ``describe(*args)`` reads off the input itself (its dtype, its rank, a NaN
    in it): what the case is, not what the check meant it to be. ``describe`` runs only while recording."""
    if _RECORDED is not None:
        exercised(*describe(*args))


def tensor_labels(x):
    """What any tensor input is, as labels: its dtype (``float16``), rank (``rank_2``), device (``on_cpu``),
    ``empty``, ``zero_rows`` / ``one_row``, ``non_contiguous``, ``nan`` / ``inf`` / ``neg_inf`` when it holds them."""
    labels = {str(x.dtype).removeprefix("torch."), f"rank_{x.dim()}", f"on_{x.device.type}"}
    if not x.numel():
        labels.add("empty")
    if x.dim() and x.shape[0] in (0, 1):
        labels.add(("zero_rows", "one_row")[x.shape[0]])
    if not x.is_contiguous():
        labels.add("non_contiguous")
    if x.is_floating_point() and x.numel():
        labels.update(name for name, present in (("nan", x.isnan().any()), ("inf", (x == float("inf")).any()),
                                                 ("neg_inf", (x == float("-inf")).any())) if bool(present))
    return labels
