"""How often the named-mistake hint is right on mistakes written apart from the mutants (docs/feedback.md).

``python -m tests.named_mistakes.measure [--seed N] [--sets ...]`` grades every mistake of the sets as grading does
(every item, the hidden variants, seed 0 unless told) and prints, for each, what the hint named against the truth,
and each set's counts. Each set was written by someone who graded none of it, its truths set before any grading:

* the first (``tests/named_mistakes/<topic>.py``) was looked at while the hint was refined, twice;
* the second (``second_set.py``) was blind at its first grading, and looked at for the second refinement;
* the third (``third_set.py``) was blind at its first grading, and looked at for the third refinement;
* the fourth (``fourth_set.py``, 30 mistakes) was blind at its first grading, and looked at for the third
  refinement;
* the fifth (``fifth_set.py``, 30 mistakes) was blind at its first grading (after the fourth refinement), and
  looked at for the fifth refinement;
* the sixth (``sixth_set.py``, 30 mistakes) was graded first after the fifth refinement: the blind measure;
* the seventh (``seventh_set.py``, 33 mistakes, memory and distributed) was committed before the sixth refinement
  (right or silent) and graded once with the code before it; its author then made the refinement;
* the eighth (``eighth_set.py``, 50 mistakes, 5 on each of the ten assignments) was written blind by a helper who
  saw no signature, no feedback code and no mutant's code, and graded nothing.

An outcome is one of:

* ``right``: the hint named the truth's mistake (or a mutant with the same description: the same mistake, told
  the same way), or named nothing where no mutant is that mistake;
* ``wrong``: it named another mistake (worse than naming nothing);
* ``silent``: it named nothing although a mutant is that mistake;
* ``passed``: the mistake lost no point (nothing to name; counted apart, a gap for the proofs).
"""

import argparse
import importlib
import sys
from collections import Counter

import torch

from autograder.commands.build import topics
from autograder.engine.results import FAILED, grade_items
from tests.proving import ROOT, with_replacements

TOPICS = ("operators", "stability", "basics", "broadcasting", "memory", "modules")   # the first set's
ASSIGNMENTS = topics(ROOT)     # all ten, in the order students see them: the table has a line for each


def outcome(topic, truth, results):
    """``(outcome, id of the mistake named or None)`` of one graded mistake."""
    failed = [r for r in results if r.status == FAILED]
    if not failed:
        return "passed", None
    named = failed[0].evidence.get("looks_like")
    if named is None:
        return ("right" if truth is None else "silent"), None
    says = importlib.import_module(f"tests.mutants.{topic}").DESCRIPTIONS
    same = truth is not None and says[named] == says[truth]
    return ("right" if same else "wrong"), named


SETS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def mistakes_of(which):
    """``{topic: {what it is: (replacements, truth)}}`` of the set ``which`` (one of :data:`SETS`)."""
    if which == "first":
        return {topic: importlib.import_module(f"tests.named_mistakes.{topic}").MISTAKES for topic in TOPICS}
    return importlib.import_module(f"tests.named_mistakes.{which}_set").MISTAKES


def measure(sets=("first",), seed=0, topics=None):
    """``[(topic, what it is, truth, outcome, named, {check: message})]`` for every mistake of ``sets`` (of the
    assignments ``topics``, all by default)."""
    rows = []
    for which in sets:
        for topic, mistakes in mistakes_of(which).items():
            if topics is not None and topic not in topics:
                continue
            for what, (replacements, truth) in mistakes.items():
                torch.manual_seed(0)
                results = grade_items(topic, with_replacements(topic, replacements), seed=seed)
                messages = {r.check: r.message for r in results if r.message}
                rows.append((topic, what, truth, *outcome(topic, truth, results), messages))
    return rows


def counted(rows):
    counts = Counter(row[3] for row in rows)
    return f"{len(rows)} mistakes: " + ", ".join(f"{counts[k]} {k}" for k in ("right", "wrong", "silent", "passed"))


def per_topic(rows):
    """``{topic: [caught, named, named right]}`` over ``rows`` (a mistake that lost no point is not caught):
    precision is named right / named, coverage named / caught (docs/feedback.md)."""
    table = {}
    for topic, _, _, result, named, _ in rows:
        counts = table.setdefault(topic, [0, 0, 0])
        if result != "passed":
            counts[0] += 1
            counts[1] += named is not None
            counts[2] += named is not None and result == "right"
    return table


def precision_table(rows):
    """The per-assignment precision and coverage of ``rows`` as text lines: every assignment of the course, in the
    order students see them (one that no mistake of ``rows`` belongs to says so), then all of them together."""
    counts = per_topic(rows)
    lines = []
    totals = [0, 0, 0]
    for topic in ASSIGNMENTS:
        if topic not in counts:
            lines.append(f"{topic:15} no mistake of these sets")
            continue
        caught, named, right = counts[topic]
        totals = [totals[0] + caught, totals[1] + named, totals[2] + right]
        lines.append(_table_line(topic, caught, named, right))
    lines.append(_table_line("all", *totals))
    return lines


def _table_line(topic, caught, named, right):
    precision = f"{right / named:.0%}" if named else "-"
    coverage = f"{named / caught:.0%}" if caught else "-"
    return (f"{topic:15} caught {caught:3}  named {named:3}  right {right:3}  precision {precision:>4}  "
            f"coverage {coverage:>4}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sets", nargs="+", choices=SETS, default=SETS,
                        help="the sets to grade (all by default): a blind set is graded once, after the refinement")
    parser.add_argument("--topics", nargs="+", choices=ASSIGNMENTS, default=ASSIGNMENTS,
                        help="only the mistakes of these assignments (all by default)")
    args = parser.parse_args(argv)
    every = []
    for which in args.sets:
        rows = measure((which,), seed=args.seed, topics=args.topics)
        every += rows
        for topic, what, truth, result, named, _ in rows:
            print(f"{result:7} {topic}: {what}\n        truth: {truth}\n        named: {named}")
        print(f"{which} set, seed {args.seed}: {counted(rows)}\n")
    print("\n".join(precision_table(every)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
