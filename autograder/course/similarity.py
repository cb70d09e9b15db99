"""``python -m autograder similarity``: how alike the students' own code is, pair by pair, per assignment.

What is compared is each submission's own code (:func:`own_code`): its answer cells without the handed-out starter
lines, and the code cells the student added; the lesson's code cells and the test cells are left out. Every pair of
submissions of an assignment is scored (:mod:`fingerprints`: the share of normalised statements in common, and beside
it the share of winnowed token runs), and every submission also against the course's own code: the reference
solution (read from ``source/<assignment>/<assignment>.ipynb``, which ``solutions/`` is built from), the lesson's
code of the release notebook, and the student kit's public Python (``kit_contents``).

A score is evidence for a person to look at (the page shows the matching lines side by side), never a grade change.
"""

import functools
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder.course.fingerprints import (fingerprint, normalised_tokens, similarity, statement_index,
                                            statement_shares, statement_similarity, statements)
from autograder.course.progress import counted
from autograder.engine import notebooks
from autograder.kit_contents import kit_files

# Calibrated on this course (tests/course/test_similarity.py, docs/similarity.md, 2026-11-24): over the eight
# assignments, every disguised copy (renamed names, reordered functions, comments, dead code, whitespace) scored 1.0
# against its original and against the other copies of it (486 pairs), and the highest of 1168 pairs written apart
# (the second solution against the reference and the mutants' students, and their copies) scored 0.657.
THRESHOLD = 0.80
MIN_TOKENS = 60       # a side with fewer own tokens counts as this many: a few shared lines are not a copy
OUT = "after-grading"  # the pages' folder in the course directory
COURSE_SOURCES = ("reference solution", "lesson code", "student kit")


@dataclass
class Part:
    label: str        # the cell's grade id or "cell <n>", or a file's name
    lines: list       # its text, line by line, as handed in
    counted: set      # the 0-based lines that are the student's own (the starter lines are not)


@dataclass
class Submission:
    name: str                         # the student (or one of COURSE_SOURCES)
    parts: list                       # [Part]
    problem: str = ""                 # why it could not be read, when it could not

    def page_lines(self):
        """``[(text, kind)]`` as the page shows the code: a header line per part ("part"), then its lines, each
        "own" (the student's) or "given" (handed-out starter code, not compared)."""
        found = []
        for part in self.parts:
            found.append((f"# --- {part.label} ---", "part"))
            found += [(line, "own" if n in part.counted else "given") for n, line in enumerate(part.lines)]
        return found

    def tokens(self):
        if self.name == COURSE_SOURCES[2]:
            return _kit_tokens()
        return self.own_tokens()

    def own_tokens(self):
        """The normalised tokens of every part, each line numbered across the parts as the page shows them."""
        found, offset, statements_before = [], 0, 0
        for part in self.parts:
            tokens = normalised_tokens("\n".join(part.lines) + "\n", part.counted)
            for token in tokens:
                token.line += offset + 1         # after the part's header line on the page
                token.statement += statements_before        # a statement never runs on into the next cell
                found.append(token)
            offset += len(part.lines) + 1
            statements_before = found[-1].statement + 1 if found else 0
        return found


@dataclass
class Pair:
    a: str
    b: str
    score: float                                  # share of statements in common (what the threshold applies to)
    runs: float = 0.0                             # share of tokens in common runs of fingerprints.K (winnowing)
    a_lines: list = field(default_factory=list)   # lines of a (numbered as on the page) in statements in common
    b_lines: list = field(default_factory=list)
    a_share: float = 0.0                          # share of a's statements that b has too (score: the larger share)
    b_share: float = 0.0


def _starter_lines(release_nb):
    return {notebooks.grade_id(c): {line.strip() for line in notebooks.source_text(c).splitlines() if line.strip()}
            for c in release_nb["cells"] if c.get("cell_type") == "code" and notebooks.is_solution(c)}


def own_code(nb, release_nb):
    """``[Part]``: the student's own code in notebook ``nb``: each answer cell's lines that the release notebook did
    not hand out, and each code cell the student added; lesson code and test cells left out."""
    starter = _starter_lines(release_nb)
    lesson = {notebooks.grade_id(c): notebooks.source_text(c) for c in release_nb["cells"]
              if c.get("cell_type") == "code" and not notebooks.is_solution(c)}
    lesson_texts = set(lesson.values())
    parts = []
    for index, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code" or notebooks.is_graded_test(cell):
            continue
        key, text = notebooks.grade_id(cell), notebooks.source_text(cell)
        if notebooks.is_solution(cell):
            handed_out = starter.get(key, set())
        elif key in lesson or text in lesson_texts:
            handed_out = {line.strip() for line in lesson.get(key, text).splitlines()}   # an edited lesson cell:
        else:                                                                            # only the edits count
            handed_out = set()
        lines = text.splitlines()
        counted = {n for n, line in enumerate(lines) if line.strip() and line.strip() not in handed_out}
        if counted:
            parts.append(Part(key or f"cell {index}", lines, counted))
    return parts


def read_submission(course, student, assignment, release_nb):
    path = Path(course) / "submitted" / student / assignment / f"{assignment}.ipynb"
    try:
        return Submission(student, own_code(notebooks.read(path), release_nb))
    except notebooks.NotebookError as error:
        return Submission(student, [], f"{path.name}: {error}")


def file_source(name, text):
    lines = text.splitlines()
    return Submission(name, [Part(name, lines, set(range(len(lines))))])


def course_sources(course, assignment, release_nb):
    """The course's own code a submission is also compared with (:data:`COURSE_SOURCES`)."""
    found = []
    source = Path(course) / "source" / assignment / f"{assignment}.ipynb"     # solutions/ is derived from it
    if source.exists():
        found.append(file_source(COURSE_SOURCES[0], notebooks.solutions_module(notebooks.read(source), assignment)))
    lesson = [Part(notebooks.grade_id(c) or f"cell {i}", notebooks.source_text(c).splitlines(),
                   set(range(len(notebooks.source_text(c).splitlines()))))
              for i, c in enumerate(release_nb["cells"]) if c.get("cell_type") == "code"
              and not notebooks.is_solution(c) and not notebooks.is_graded_test(c)]
    found.append(Submission(COURSE_SOURCES[1], lesson))
    found.append(_kit_source())
    return found


@functools.cache
def _kit_tokens():
    return _kit_source().own_tokens()


@functools.cache
def _kit_source():
    package = Path(__file__).resolve().parents[1]
    return Submission(COURSE_SOURCES[2], [file_source(relative, path.read_text(encoding="utf-8")).parts[0]
                                          for relative, path in kit_files(package)])


def compare(submissions, threshold=THRESHOLD, handed_out=()):
    """Every pair of ``submissions`` (the course's own sources, by their names in :data:`COURSE_SOURCES`, only
    against students), highest score first, as :class:`Pair` s. Statements of ``handed_out`` (the lesson's code,
    given to everyone) count for nobody."""
    ignored = frozenset(text for s in handed_out for text in statements(s.tokens()))
    tokens = {s.name: s.tokens() for s in submissions if not s.problem}
    prints = {name: fingerprint(found) for name, found in tokens.items()}
    plain = {name: statement_index(found) for name, found in tokens.items()}
    without_given = {name: statement_index(found, ignored) for name, found in tokens.items()}
    names = list(tokens)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if a in COURSE_SOURCES and b in COURSE_SOURCES:
                continue
            index = plain if a in COURSE_SOURCES or b in COURSE_SOURCES else without_given
            score, a_lines, b_lines = statement_similarity(index[a], index[b], MIN_TOKENS)
            runs = similarity(prints[a], prints[b], MIN_TOKENS)[0]
            pair = Pair(a, b, round(score, 3), round(runs, 3))
            if score >= threshold:
                pair.a_lines, pair.b_lines = sorted(a_lines), sorted(b_lines)
                pair.a_share, pair.b_share = (round(x, 3) for x in statement_shares(index[a], index[b], MIN_TOKENS))
            pairs.append(pair)
    return sorted(pairs, key=lambda p: (-p.score, -p.runs, p.a, p.b))


def nearest(pairs, students):
    """``{student: (nearest other student or course source, score)}``."""
    best = {}
    for pair in pairs:
        for me, other in ((pair.a, pair.b), (pair.b, pair.a)):
            if me in students and (me not in best or pair.score > best[me][1]):
                best[me] = (other, pair.score)
    return best


def assignment_similarity(course, assignment, threshold=THRESHOLD):
    """``(submissions, pairs)`` of an assignment as submitted under ``submitted/``."""
    course = Path(course)
    release_nb = notebooks.read(course / "release" / assignment / f"{assignment}.ipynb")
    root = course / "submitted"
    students = sorted(p.name for p in root.iterdir() if (p / assignment).is_dir()) if root.exists() else []
    submissions = [read_submission(course, s, assignment, release_nb) for s in students]
    sources = course_sources(course, assignment, release_nb)
    submissions += sources
    return submissions, compare(submissions, threshold, handed_out=[sources[1]])


def summary_line(assignment, submissions, pairs, threshold=THRESHOLD, page=None):
    """One line for ``grade``'s output (which names the command that writes the page), or for ``similarity``'s
    (which has just written ``page``)."""
    students = [s.name for s in submissions if s.name not in COURSE_SOURCES]
    flagged = [p for p in pairs if p.score >= threshold]
    if not flagged:
        return f"  {assignment}: {counted(len(students), 'submission')}, no pair at or above {threshold:g}"
    top = ", ".join(f"{p.a} ~ {p.b} {p.score:.2f}" for p in flagged[:3])
    shown = (f"side by side in {page}" if page else
             f"`python -m autograder similarity {assignment}` shows them side by side")
    return f"  {assignment}: {counted(len(flagged), 'pair')} at or above {threshold:g} (e.g. {top}); {shown}"


def write_json(path, assignment, submissions, pairs, threshold):
    data = {"assignment": assignment, "threshold": threshold,
            "problems": {s.name: s.problem for s in submissions if s.problem},
            "pairs": [asdict(p) for p in pairs]}
    Path(path).write_text(json.dumps(data, indent=1), encoding="utf-8")


def nearest_column(course, assignment):
    """``{student: "nearest score"}`` for the CSV export and ``grade``'s summary (the nearest other student or course
    source, and the score); empty when the assignment cannot be compared (no release notebook)."""
    try:
        submissions, pairs = assignment_similarity(course, assignment)
    except (notebooks.NotebookError, OSError):
        return {}
    students = {s.name for s in submissions if s.name not in COURSE_SOURCES and s.parts}
    found = {s.name: "(no code of their own)" if not s.problem else "(not compared: the notebook cannot be read)"
             for s in submissions if s.name not in COURSE_SOURCES and not s.parts}
    found.update({student: f"{other} {score:.2f}" for student, (other, score) in nearest(pairs, students).items()})
    return found
