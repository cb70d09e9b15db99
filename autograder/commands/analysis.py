"""The item analysis as HTML pages with pictures (matplotlib, PNG): one per assignment and one for the course, under
``after-grading/``; plain HTML and CSS, no JavaScript."""

import html
import importlib.util
from pathlib import Path

from autograder.course.analysis import (BROKEN, HIGH, LOW, STATUS_ORDER, STRONG, TRIVIAL, WEAK, AssignmentStats,
                                        analyse_course)
from autograder.course.progress import counted
from autograder.course.similarity import OUT

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; max-width: 1200px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.5em; }
table { border-collapse: collapse; } td, th { padding: 0.3em 0.7em; border-bottom: 1px solid #ddd;
  text-align: left; vertical-align: top; } th { background: #f2f2f2; }
.bad { color: #a40000; font-weight: bold; } .note { color: #555; max-width: 62em; }
.msg { font-family: monospace; font-size: 12px; } img { max-width: 100%; border: 1px solid #eee; }
"""


NO_PICTURES = "pictures left out: matplotlib is not installed: pip install -e '.[analysis]'"


def _plots(stats, folder):
    """Write the histogram of points and the items' pass rates; returns their names inside ``folder`` (None without
    matplotlib, the extra ``analysis``: the pages are written without pictures)."""
    if importlib.util.find_spec("matplotlib") is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.ticker import MaxNLocator

    folder.mkdir(parents=True, exist_ok=True)
    names = []
    fig, ax = plt.subplots(figsize=(6.4, 3.0), dpi=100)
    bins = max(1, min(20, int(stats.max_score) or 1))
    ax.hist(stats.totals, bins=bins, range=(0, max(stats.max_score, 1)), color="#4c72b0", edgecolor="white")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(f"points before any late penalty (out of {stats.max_score:g})")
    ax.set_ylabel("students")
    ax.set_title(f"{stats.assignment}: points of {len(stats.totals)} graded submissions")
    fig.tight_layout()
    names.append(f"{stats.assignment}-points.png")
    fig.savefig(folder / names[-1])
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.4, 0.35 * len(stats.items) + 1.0), dpi=100)
    labels = [i.item for i in stats.items][::-1]
    rates = [(i.pass_rate or 0.0) * 100 for i in stats.items][::-1]
    colors = ["#c44e52" if i.suspicion() else "#55a868" for i in stats.items][::-1]
    ax.barh(labels, rates, color=colors)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of students who earned it (red: suspicious)")
    fig.tight_layout()
    names.append(f"{stats.assignment}-items.png")
    fig.savefig(folder / names[-1])
    plt.close(fig)
    return names


def _pct(value):
    return "-" if value is None else f"{100 * value:.0f}%"


def _suspicious_rows(stats, with_assignment=False):
    rows = []
    for item, why, _ in stats.suspicious():
        top = item.messages.most_common(1)
        message = f"{top[0][1]}x {html.escape(top[0][0][1])}" if top else ""
        rows.append(f"<tr>{f'<td>{html.escape(stats.assignment)}</td>' if with_assignment else ''}"
                    f'<td class="bad">{html.escape(item.item)}</td><td>{why}</td><td>{_pct(item.pass_rate)}</td>'
                    f"<td>{item.strong_failed}/{item.strong}</td><td>{item.weak_passed}/{item.weak}</td>"
                    f'<td class="msg">{message}</td></tr>')
    return rows


SUSPICIOUS_HEAD = ("<th>item</th><th>why</th><th>pass rate</th><th>strong students who failed it</th>"
                   "<th>weak students who passed it</th><th>most frequent failure</th>")
HOW_TO_READ = (f"A student is <i>strong</i> on an item when they earned at least {STRONG:.0%} of the points of the "
               f"assignment's <i>other</i> items, <i>weak</i> at most {WEAK:.0%}. An item is suspicious as "
               f"<b>broken?</b> when at least {BROKEN:.0%} of the strong students fail it (most suspicious first: "
               f"more of them, and with one message), <b>trivial?</b> when at least {TRIVIAL:.0%} of the weak "
               f"students pass it, and by its pass rate alone (below {LOW:.0%}, above {HIGH:.0%}) when there are "
               "too few strong or weak students to tell. Pass rates count passed and failed only: <i>under "
               "review</i> (an instructor decides), <i>pending</i> (waits for a GPU) and <i>grader error</i> are "
               "counted apart.")


BEFORE_LATE = ("The points are what the checks gave, before any late penalty: this page is about the items. The "
               "grades after the penalty are in the exports (python -m autograder export) and nbgrader's gradebook.")


def assignment_page(stats: AssignmentStats, plots):
    rows = []
    for item in stats.items:
        counts = " ".join(f"{item.counts[s]} {s}" for s in STATUS_ORDER if item.counts[s])
        messages = "<br>".join(f"{n}x {html.escape(prop)}" for (_, prop), n in item.messages.most_common(3))
        rows.append(f"<tr><td>{html.escape(item.item)}</td><td>{html.escape(item.check)}</td>"
                    f"<td>{item.max_score:g}</td><td>{_pct(item.pass_rate)}</td><td>{counts}</td>"
                    f'<td class="msg">{messages}</td></tr>')
    suspicious = _suspicious_rows(stats)
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(stats.statuses.items()))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Item analysis: {html.escape(stats.assignment)}</title>
<style>{STYLE}</style></head><body>
<h1>Item analysis: {html.escape(stats.assignment)}</h1>
<p class="note">From the verdict records in force ({statuses}). <a href="analysis.html">The course</a>.</p>
<h2>Suspicious items</h2>
{'<table><tr>' + SUSPICIOUS_HEAD + '</tr>' + ''.join(suspicious) + '</table>' if suspicious else '<p>None.</p>'}
<p class="note">{HOW_TO_READ}</p>
{_pictures(stats, plots)}
<table><tr><th>item</th><th>check</th><th>points</th><th>pass rate</th><th>students</th>
<th>most frequent failures (check's property; numbers masked)</th></tr>{''.join(rows)}</table>
</body></html>
"""


def _pictures(stats, plots):
    """The points' histogram and the items' pass rates (points before any late penalty), or a note where matplotlib
    is missing."""
    head = f'<h2>Points</h2><p class="note">{BEFORE_LATE}</p>'
    if plots is None:
        return f'{head}<p class="note">The {NO_PICTURES}.</p>\n<h2>Items</h2>'
    name = html.escape(stats.assignment)
    return (f'{head}<img src="plots/{plots[0]}" alt="histogram of the points of {name}">\n'
            f'<h2>Items</h2><img src="plots/{plots[1]}" alt="share of students who earned each item">')


def course_page(all_stats):
    rows, suspicious = [], []
    for stats in all_stats:
        mean = sum(stats.totals) / len(stats.totals) if stats.totals else 0.0
        rows.append(f'<tr><td><a href="analysis-{html.escape(stats.assignment)}.html">{html.escape(stats.assignment)}'
                    f"</a></td><td>{len(stats.totals)}</td><td>{mean:.1f} / {stats.max_score:g}</td>"
                    f"<td>{len(stats.suspicious())}</td></tr>")
        suspicious += [(score, row) for (_, _, score), row in zip(stats.suspicious(), _suspicious_rows(stats, True))]
    suspicious = [row for _, row in sorted(suspicious, key=lambda s: -s[0])]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Item analysis: the course</title>
<style>{STYLE}</style></head><body>
<h1>Item analysis: the course</h1>
<table><tr><th>assignment</th><th>graded submissions</th><th>mean points before any late penalty</th>
<th>suspicious items</th></tr>
{''.join(rows)}</table>
<p class="note">{BEFORE_LATE}</p>
<h2>Suspicious items, the most suspicious first</h2>
{'<table><tr><th>assignment</th>' + SUSPICIOUS_HEAD + '</tr>' + ''.join(suspicious) + '</table>'
 if suspicious else '<p>None.</p>'}
<p class="note">{HOW_TO_READ}</p>
</body></html>
"""


def write_pages(course, assignments=None, progress=print):
    """``python -m autograder analysis``: ``after-grading/analysis.html`` and ``analysis-<assignment>.html`` with
    their pictures; returns the course page's path (None when no record was found)."""
    out = Path(course) / OUT
    all_stats = analyse_course(course, assignments)
    if not all_stats:
        if progress:
            progress("No verdict record found under grading-records/: grade first (python -m autograder grade).")
        return None
    out.mkdir(parents=True, exist_ok=True)
    if progress and importlib.util.find_spec("matplotlib") is None:
        progress(f"  The {NO_PICTURES}")
    for stats in all_stats:
        plots = _plots(stats, out / "plots")
        (out / f"analysis-{stats.assignment}.html").write_text(assignment_page(stats, plots), encoding="utf-8")
        if progress:
            top = stats.suspicious()
            progress(f"  {stats.assignment}: {len(stats.totals)} graded, {counted(len(top), 'suspicious item')}"
                     + (f", first {top[0][0].item} ({top[0][1]})" if top else ""))
    path = out / "analysis.html"
    path.write_text(course_page(all_stats), encoding="utf-8")
    return path


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    parser.add_argument("assignments", nargs="*", help="only these assignments (default: all)")


def from_command_line(args, parser):
    """``python -m autograder analysis``: what the command prints, and its exit status."""
    from autograder.course.gradebook_state import require_gradebook
    require_gradebook(args.course)      # the records go with a gradebook: missing or out of step, it stops here
    page = write_pages(args.course, args.assignments or None)
    print(f"wrote {page} (and a page per assignment beside it)" if page else "", end="\n" if page else "")
    return 0 if page else 1
