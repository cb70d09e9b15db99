"""``python -m autograder review``: the items under review, and the instructor's decision on each.

An item is under review when the submitted source holds a construct that only serves to evade grading
(``autograder.source_evidence.evasion``), or when a check does not believe a measurement without a person (a speedup past the
device's ceiling, less traffic than the exchange needs: listed as "the grader's measurement", and accepting it
passes the item): it scores 0 until an instructor decides. ``review`` lists them (student, assignment,
item, construct, cell and line, the line's code); ``review --accept STUDENT ASSIGNMENT ITEM [--note TEXT]`` grades
the item on its evidence as if it were not flagged (the check's own verdict, kept in the record: accept means "not
evasion", not "full marks"); ``--reject ... [--note TEXT]`` keeps 0 with the note for the student. The decision is
kept in the grading record (``engine.records.RecordStore.decide``: a record of its own in the history) and applies
again only to the same item with the same constructs in the same code: each construct carries the digest of the
code the item's answers run (``evasion.code_digest``: every definition they reach and every module-level
statement, as Python parses them), so a resubmission that keeps an accepted line but changes what it does is
reviewed again. The gradebook's automatic score is written from the decision at once, so the printed gradebook and
every export follow.
"""

from autograder.engine.records import ACCEPTED, REJECTED, RecordStore
from autograder.engine.results import UNDER_REVIEW
from autograder.settings import settings


def under_review(course):
    """``[{"student", "assignment", "item", "construct", "where", "snippet", "code", "decision"}]`` for every item of a
    record in force that was put under review (decided ones say how)."""
    found = []
    for key, (record, _) in sorted(RecordStore(course).all_latest().items()):
        for item in record.get("items", []):
            review = (item.get("evidence") or {}).get("review")
            if not review:
                continue
            decision = (review.get("decision") or {}).get("decision") or ""
            for construct in review.get("constructs", []):
                found.append({"student": record["student"], "assignment": record["assignment"],
                              "item": item["item"], "construct": construct.get("construct", ""),
                              "where": construct.get("part") if construct.get("line") is None else
                              f"{construct.get('part')}, line {construct.get('line')}",
                              "snippet": construct.get("snippet", ""), "code": construct.get("code", ""),
                              "decision": decision if item.get("status") != UNDER_REVIEW else ""})
    return found


def review_text(course, everything=False):
    rows = [r for r in under_review(course) if everything or not r["decision"]]
    if not rows:
        return "No item is waiting for review." if not everything else "No item was put under review."
    lines = [f"{len({(r['student'], r['assignment'], r['item']) for r in rows})} item(s) under review "
             "(0 points until you decide: python -m autograder review --accept|--reject STUDENT ASSIGNMENT ITEM "
             "[--note TEXT]):"]
    for r in rows:
        decided = f"  [{r['decision']}]" if r["decision"] else ""
        code = f"  [code {r['code'][:8]}]" if r["code"] else ""
        lines.append(f"  {r['student']}/{r['assignment']} {r['item']}: {r['construct']} ({r['where']}): "
                     f"{r['snippet']}{code}{decided}")
    return "\n".join(lines)


def decide(course, student, assignment, item, decision, note=""):
    """Keep the decision in the record and write the item's automatic score into nbgrader's gradebook."""
    if decision not in (ACCEPTED, REJECTED):
        raise ValueError(f"a decision is {ACCEPTED} or {REJECTED}, not {decision!r}")
    record = RecordStore(course).decide(student, assignment, item, decision, note)
    verdict = next(i for i in record["items"] if i["item"] == item)
    write_score(course, student, assignment, item, float(verdict.get("score", 0.0)))
    return verdict


def write_score(course, student, assignment, item, score):
    """The item's automatic score in nbgrader's gradebook (the instructor's manual score, if any, is kept)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(settings.grading.gradebook_url(course)) as gradebook:
        try:
            grade = gradebook.find_grade(f"test_{item}", assignment, assignment, student)
        except MissingEntry:
            return False
        grade.auto_score = score
        grade.needs_manual_grade = grade.manual_score is not None
        gradebook.db.commit()
    return True


def run(course, accept=None, reject=None, note="", everything=False):
    """The command: list, or decide one item (``accept``/``reject``: ``[student, assignment, item]``)."""
    chosen = accept or reject
    if chosen:
        decision = ACCEPTED if accept else REJECTED
        try:
            verdict = decide(course, *chosen, decision, note)
        except LookupError as error:
            print(f"Cannot review: {error}")
            return 1
        print(f"{'/'.join(chosen[:2])} {chosen[2]}: {decision}; now {verdict.get('status')}, "
              f"{float(verdict.get('score', 0)):g}/{float(verdict.get('max_score', 0)):g}")
        return 0
    print(review_text(course, everything))
    return 0


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    decide = parser.add_mutually_exclusive_group()
    decide.add_argument("--accept", nargs=3, metavar=("STUDENT", "ASSIGNMENT", "ITEM"),
                        help="not evasion: grade the item on its evidence as if it were not flagged")
    decide.add_argument("--reject", nargs=3, metavar=("STUDENT", "ASSIGNMENT", "ITEM"), help="0 points, with --note")
    parser.add_argument("--note", default="", help="the instructor's note (the student sees it on a rejection)")
    parser.add_argument("--all", action="store_true", help="list decided items too")


def from_command_line(args, parser):
    """``python -m autograder review``: what the command prints, and its exit status."""
    return run(args.course, accept=args.accept, reject=args.reject, note=args.note, everything=args.all)
