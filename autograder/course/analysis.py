"""Item analysis from the verdict records: per graded item, who earned it, why the others did not, and whether the
item itself looks broken (strong students fail it) or trivial (weak students pass it).

It reads the records in force (``records.RecordStore.all_latest``), so it works for every path that graded:
``grade``, nbgrader's autograde, the Dask jobs. "under review" (an instructor decides), "pending" (waits for a GPU)
and "grader error" (the grader's fault) are counted apart from "failed" and left out of the pass rates.
"""

import re
from collections import Counter
from dataclasses import dataclass, field

from autograder.engine.records import RecordStore
from autograder.engine.results import FAILED, GRADER_ERROR, PASSED, PENDING, UNDER_REVIEW

STRONG, WEAK = 0.8, 0.2        # a student's share of the *other* items' points that makes them strong, or weak
BROKEN = 0.5                   # suspicious: at least this share of the strong students fail the item ...
TRIVIAL = 0.8                  # ... or at least this share of the weak students pass it
LOW, HIGH = 0.2, 0.99          # ... or its pass rate is below LOW (with no strong student to tell) or above HIGH
MIN_GROUP = 3                  # a strong or weak group smaller than this tells nothing


@dataclass
class ItemStats:
    item: str
    check: str
    max_score: float
    counts: Counter = field(default_factory=Counter)       # status -> students
    messages: Counter = field(default_factory=Counter)     # (check, property) -> students who failed with it: one
                                                           # property per kind of failure, in its first words
    strong: int = 0            # strong students (on the other items) graded on this item
    strong_failed: int = 0
    weak: int = 0
    weak_passed: int = 0

    @property
    def judged(self):
        """Students with a verdict on the item: passed or failed (not pending, under review or a grader error)."""
        return self.counts[PASSED] + self.counts[FAILED]

    @property
    def pass_rate(self):
        return self.counts[PASSED] / self.judged if self.judged else None

    @property
    def broken_share(self):
        return self.strong_failed / self.strong if self.strong >= MIN_GROUP else None

    @property
    def trivial_share(self):
        return self.weak_passed / self.weak if self.weak >= MIN_GROUP else None

    def top_message_share(self):
        failed = self.counts[FAILED]
        return max(self.messages.values()) / failed if failed and self.messages else 0.0

    def suspicion(self):
        """``(why, how strong)`` when the item looks broken or trivial, else None; the larger the more suspicious."""
        if self.broken_share is not None and self.broken_share >= BROKEN:
            return "broken?", 1.0 + self.broken_share + self.top_message_share()
        if self.trivial_share is not None and self.trivial_share >= TRIVIAL:
            return "trivial?", self.trivial_share
        rate = self.pass_rate
        if rate is not None and self.judged >= MIN_GROUP and rate < LOW and self.broken_share is None:
            return "hard or broken?", 1.0 - rate + self.top_message_share()
        if rate is not None and self.judged >= MIN_GROUP and rate > HIGH and self.trivial_share is None:
            return "trivial?", rate - HIGH
        return None


@dataclass
class AssignmentStats:
    assignment: str
    items: list                        # [ItemStats], in the records' order
    totals: list                       # each graded student's points
    max_score: float
    statuses: Counter                  # record status ("graded", "error", "missing") -> students

    def suspicious(self):
        """``[(ItemStats, why, how strong)]``, the most suspicious first."""
        found = [(item, *item.suspicion()) for item in self.items if item.suspicion()]
        return sorted(found, key=lambda f: -f[2])


def message_key(check, message):
    """The property a failure message is about: its first line, the check's name taken off, numbers and quoted
    values masked, so that the same property failing on different inputs counts once."""
    first = (message or "").strip().splitlines()[0] if (message or "").strip() else "(no message)"
    first = re.sub(r"^\[[^\]]*\]\s*", "", first)
    first = re.sub(r"`[^`]*`|'[^']*'", "…", first)
    first = re.sub(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", "#", first)
    return check, first[:160]


def records_by_assignment(course, assignments=None):
    """``{assignment: [record in force]}`` from the record store."""
    found = {}
    for key, (record, _lateness) in RecordStore(course).all_latest().items():
        assignment = record.get("assignment") or key.split("/")[1]
        if assignments is None or assignment in assignments:
            found.setdefault(assignment, []).append(record)
    return found


def analyse(assignment, records):
    """:class:`AssignmentStats` of one assignment's records in force."""
    statuses = Counter(r.get("status", "graded") for r in records)
    graded = [r for r in records if r.get("status") == "graded" and r.get("items")]
    stats, order = {}, []
    for record in graded:
        for item in record["items"]:
            if item["item"] not in stats:
                stats[item["item"]] = ItemStats(item["item"], item.get("check", ""), float(item.get("max_score", 0)))
                order.append(item["item"])
    totals, shown = [], {}      # shown: (check, kind) -> the words of the first failure of that kind
    for record in graded:
        items = {i["item"]: i for i in record["items"]}
        earned = sum(float(i.get("score", 0)) for i in items.values())
        possible = sum(float(i.get("max_score", 0)) for i in items.values())
        totals.append(earned)
        for item_id, item in items.items():
            entry = stats[item_id]
            status = item.get("status", FAILED)
            entry.counts[status] += 1
            if status == FAILED:      # failures are grouped by their kind (a record's data), shown in words
                words = message_key(item.get("check", ""), item.get("message", ""))
                entry.messages[shown.setdefault((words[0], item.get("kind") or words[1]), words)] += 1
            if status not in (PASSED, FAILED):
                continue
            rest_possible = possible - float(item.get("max_score", 0))
            if rest_possible <= 0:
                continue
            rest = (earned - float(item.get("score", 0))) / rest_possible
            if rest >= STRONG:
                entry.strong += 1
                entry.strong_failed += status == FAILED
            elif rest <= WEAK:
                entry.weak += 1
                entry.weak_passed += status == PASSED
    maximum = max((sum(float(i.get("max_score", 0)) for i in r["items"]) for r in graded), default=0.0)
    return AssignmentStats(assignment, [stats[i] for i in order], totals, maximum, statuses)


def analyse_course(course, assignments=None):
    """``[AssignmentStats]`` for every assignment with records (in ``assignments``' order when given)."""
    found = records_by_assignment(course, assignments)
    names = [a for a in (assignments or sorted(found)) if a in found]
    return [analyse(a, found[a]) for a in names]


STATUS_ORDER = (PASSED, FAILED, UNDER_REVIEW, PENDING, GRADER_ERROR)
