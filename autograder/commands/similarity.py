"""The similarity report of one assignment as an HTML page: the pairs at or above the threshold, highest first, each
with both sides' code side by side and the statements they have in common marked; then every student's nearest
neighbour. Plain HTML and CSS, no JavaScript; a person reads it, nothing is graded from it."""

import html
from pathlib import Path

from autograder.course.similarity import COURSE_SOURCES, MIN_TOKENS, nearest

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; max-width: 1400px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table.list { border-collapse: collapse; } table.list td, table.list th { padding: 0.25em 0.8em;
  border-bottom: 1px solid #ddd; text-align: left; } th { background: #f2f2f2; }
.high { color: #a40000; font-weight: bold; }
.note { color: #555; max-width: 60em; }
table.code { border-collapse: collapse; width: 100%; table-layout: fixed; margin-bottom: 1em; }
table.code td { vertical-align: top; width: 50%; padding: 0 0.4em; border: 1px solid #ccc; }
pre { margin: 0; font-size: 12.5px; line-height: 1.35; white-space: pre-wrap; }
pre span { display: block; } .same { background: #ffe08a; } .given { color: #999; } .part { color: #3b5bdb; }
"""


def _code(submission, marked):
    out = []
    for number, (text, kind) in enumerate(submission.page_lines()):
        css = "same" if number in marked else kind if kind != "own" else ""
        out.append(f'<span class="{css}">{html.escape(text) or " "}</span>')
    return "<pre>" + "".join(out) + "</pre>"


def shares_text(pair):
    """Why the two sides of a pair can have different lines marked at a score of 1.00: the score is the larger side's
    share, and the code one side has beyond the other (added statements, or its own) is not marked."""
    a, b = html.escape(pair.a), html.escape(pair.b)
    text = (f"Marked: the statements the two have in common, on each side wherever they are. {a}: "
            f"{pair.a_share:.2f} of their statements are in {b}'s code; {b}: {pair.b_share:.2f} of theirs are in {a}'s.")
    if abs(pair.a_share - pair.b_share) >= 0.005:
        more = b if pair.a_share > pair.b_share else a
        text += f" The lines of {more} that are not marked are code the other side does not have."
    return text


def page(assignment, submissions, pairs, threshold):
    """The page's HTML."""
    by_name = {s.name: s for s in submissions}
    flagged = [p for p in pairs if p.score >= threshold]
    students = [s.name for s in submissions if s.name not in COURSE_SOURCES and not s.problem]
    rows = "".join(
        f'<tr><td><a href="#pair-{n}">{html.escape(p.a)} ~ {html.escape(p.b)}</a></td>'
        f'<td class="high">{p.score:.2f}</td><td>{p.runs:.2f}</td></tr>' for n, p in enumerate(flagged))
    best = nearest(pairs, set(students))
    neighbours = "".join(
        f"<tr><td>{html.escape(s)}</td><td>no code of their own</td><td>-</td></tr>" if not by_name[s].parts else
        f"<tr><td>{html.escape(s)}</td><td>{html.escape(best[s][0])}</td>"
        f"<td class=\"{'high' if best[s][1] >= threshold else ''}\">{best[s][1]:.2f}</td></tr>" if s in best else
        f"<tr><td>{html.escape(s)}</td><td>-</td><td>-</td></tr>" for s in students)
    problems = "".join(f"<li>{html.escape(s.name)}: {html.escape(s.problem)}</li>" for s in submissions if s.problem)
    sections = []
    for n, p in enumerate(flagged):
        a, b = by_name[p.a], by_name[p.b]
        sections.append(
            f'<h2 id="pair-{n}">{html.escape(p.a)} ~ {html.escape(p.b)}: {p.score:.2f} of the statements in common'
            f" (token runs {p.runs:.2f})</h2>"
            f'<table class="code"><tr><th>{html.escape(p.a)}</th><th>{html.escape(p.b)}</th></tr>'
            f"<tr><td>{_code(a, set(p.a_lines))}</td><td>{_code(b, set(p.b_lines))}</td></tr></table>"
            f'<p class="note">{shares_text(p)}</p>')        # under the pair's code: the heading's table follows it
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Similarity: {html.escape(assignment)}</title>
<style>{STYLE}</style></head><body>
<h1>Similarity between submissions: {html.escape(assignment)}</h1>
<p class="note">Each student's own code (answer cells without the handed-out lines, and added cells; the lesson's
code and the test cells left out) against every other student's, the reference solution, the lesson's code and the
student kit's public code. <b>Score</b>: the share of the statements (normalised: names, comments, docstrings,
whitespace and the order of functions do not count) that the two have in common, on the side that has the larger
share; a side with fewer than {MIN_TOKENS} tokens counts as {MIN_TOKENS}. <b>Token runs</b>: the same share
over runs of tokens (winnowing). The page is evidence for a person to read, never a grade change.</p>
<h2>Pairs at or above {threshold:g} ({len(flagged)} of {len(pairs)})</h2>
{'<table class="list"><tr><th>pair</th><th>score</th><th>token runs</th></tr>' + rows + '</table>'
 if flagged else '<p>None.</p>'}
{'<h2>Not compared</h2><ul>' + problems + '</ul>' if problems else ''}
<h2>Each student's nearest neighbour</h2>
<table class="list"><tr><th>student</th><th>nearest</th><th>score</th></tr>{neighbours}</table>
{''.join(sections)}
</body></html>
"""


def write_page(path, assignment, submissions, pairs, threshold):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page(assignment, submissions, pairs, threshold), encoding="utf-8")
    return path


def write_reports(course, assignments, threshold=None, progress=print):
    """``python -m autograder similarity``: ``after-grading/similarity-<assignment>.html`` (and ``.json``, the pairs
    as data) for each assignment with submissions; returns the pages' paths."""
    from autograder.course.similarity import OUT, THRESHOLD, assignment_similarity, summary_line, write_json

    threshold = THRESHOLD if threshold is None else threshold
    written = []
    for assignment in assignments:
        submitted = Path(course) / "submitted"
        if not any(submitted.glob(f"*/{assignment}")):
            continue                                   # nobody submitted it: nothing to compare
        try:
            submissions, pairs = assignment_similarity(course, assignment, threshold)
        except (OSError, ValueError) as error:         # no release notebook to tell the starter code from
            if progress:
                progress(f"  {assignment}: not compared (release/{assignment}/{assignment}.ipynb: {error})")
            continue
        out = Path(course) / OUT
        written.append(write_page(out / f"similarity-{assignment}.html", assignment, submissions, pairs, threshold))
        write_json(out / f"similarity-{assignment}.json", assignment, submissions, pairs, threshold)
        if progress:
            progress(summary_line(assignment, submissions, pairs, threshold, page=written[-1]))
    return written


def summary_text(course, assignments):
    """``grade``'s short summary: per assignment, the pairs at or above the threshold (the page is written by
    ``python -m autograder similarity``)."""
    from autograder.course.similarity import THRESHOLD, assignment_similarity, summary_line

    lines = [f"\nSimilarity between submissions (pairs at or above {THRESHOLD:g}; evidence for a person, not a grade):"]
    for assignment in assignments:
        try:
            submissions, pairs = assignment_similarity(course, assignment)
        except (OSError, ValueError) as error:     # no release notebook to tell the starter code from
            lines.append(f"  {assignment}: not compared ({error})")
            continue
        lines.append(summary_line(assignment, submissions, pairs))
    return "\n".join(lines)


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    parser.add_argument("assignments", nargs="*", help="only these assignments (default: all)")
    parser.add_argument("--threshold", type=float, default=None,
                        help="list the pairs at or above this score (default: the calibrated one, see docs/similarity.md)")


def from_command_line(args, parser):
    """``python -m autograder similarity``: what the command prints, and its exit status."""
    from autograder.commands.build import topics
    pages = write_reports(args.course, args.assignments or topics(args.course), args.threshold)
    print("\n".join(f"wrote {path}" for path in pages) or "No submission found under submitted/.")
    return 0
