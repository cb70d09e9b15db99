"""The known mistakes' signatures, written from the proofs' mutants into data the grader ships.

``python -m tests.mistakes.signatures --write [topic ...]`` grades every mutant of ``tests/mutants/<topic>.py``
(``MUTANTS``, each with its description in ``DESCRIPTIONS``) on every item of its topic, as grading does (seed 0,
the hidden variants too, then the visible variant alone, as the student kit grades), and writes
``autograder/checks/<topic>/mistakes.py``: for each mutant its id, its description and its signature, the items it
fails with the kind of each failure. ``--check`` writes nothing and exits 1 when a file would change. Either way
every message the mutants get is read for slips (``tests/mistakes/grammar.py``): each is printed, and the exit
status is 1.

The grader cannot import ``tests/``; this is how what the proofs know reaches it (``autograder.feedback``).
``GPU_MUTANTS`` are left out: this machine cannot grade them.
"""

import argparse
import hashlib
import importlib
import pprint
import sys

import torch

from autograder.checks import items_of
from autograder.commands.build import topics
from autograder.engine.results import FAILED, GRADER_ERROR, grade_item
from tests.mistakes.grammar import slips
from tests.proving import ROOT, with_replacements

SEED = 0
HEADER = '''"""The known mistakes of the {topic} exercises and the signature each leaves in a grade (generated).

Written by ``python -m tests.mistakes.signatures --write {topic}`` from ``tests/mutants/{topic}.py``;
``tests/mistakes/test_signatures.py`` fails when it is stale. ``signature``: ``{{item: kind of failure}}`` of every
item the mistake fails when every variant runs (seed {seed}); ``visible``: the same with the visible variants only
(the student kit). ``says``: the mistake, for the student (``autograder.feedback``: "This looks like: ...").
``DIGEST``: of the files the signatures were graded from (the mutants, the topic's checks and oracles).
"""

DIGEST = "{digest}"

MISTAKES = '''


def mutants(topic):
    """``[(id, description, replacements)]`` of ``topic``'s mutants, in their file's order."""
    module = importlib.import_module(f"tests.mutants.{topic}")
    descriptions = getattr(module, "DESCRIPTIONS", {})
    missing = [name for name in module.MUTANTS if name not in descriptions]
    if missing:
        raise LookupError(f"tests/mutants/{topic}.py: no description in DESCRIPTIONS for {missing}: every mutant "
                          "says what its mistake is, for the student (docs/feedback.md)")
    return [(name, descriptions[name], replacements) for name, (replacements, _) in module.MUTANTS.items()]


def signature(topic, namespace, *, hidden, messages=None):
    """``{item id: kind}`` of the items that fail on ``namespace`` (as the grade's pattern, before any naming);
    each failed item's message is added to ``messages`` (a list) when one is given. A grader error stops it: a
    pattern with one names no mistake (``autograder.feedback.pattern``), and it is the grader's bug."""
    found = {}
    for item in items_of(topic):
        torch.manual_seed(0)
        result = grade_item(item, namespace, seed=SEED, hidden=hidden)
        if result.status == GRADER_ERROR:      # the grader's bug, not a mistake's signature: fix it first
            raise RuntimeError(f"{item.id}: the grader failed on a mutant:\n{result.detail}")
        if result.status == FAILED:
            found[item.id] = result.kind
            if messages is not None:
                messages.append((item.id, result.message))
    return found


def table(topic, messages=None):
    """The ``MISTAKES`` entries of ``topic``; ``messages``: a dict that gets every mutant's failure messages."""
    entries = []
    for name, says, replacements in mutants(topic):
        seen = [] if messages is None else messages.setdefault(name, [])
        entries.append({"id": name, "says": says,
                        "signature": signature(topic, with_replacements(topic, replacements), hidden=True,
                                               messages=seen),
                        "visible": signature(topic, with_replacements(topic, replacements), hidden=False)})
    return tuple(entries)


def inputs(topic):
    """The files whose change can change ``topic``'s signatures without touching shared machinery: its mutants, its
    check package (but the table itself) and its oracles."""
    found = [ROOT / "tests" / "mutants" / f"{topic}.py", ROOT / "autograder" / "oracles" / f"{topic}.py"]
    found += sorted(p for p in (ROOT / "autograder" / "checks" / topic).rglob("*.py") if p != path_of(topic))
    return [p for p in found if p.exists()]


def inputs_digest(topic):
    """A digest of :func:`inputs`' contents: the quick drift test compares it without grading anything."""
    digest = hashlib.sha256()
    for path in inputs(topic):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def path_of(topic):
    return ROOT / "autograder" / "checks" / topic / "mistakes.py"


def text_of(topic, entries):
    header = HEADER.format(topic=topic, seed=SEED, digest=inputs_digest(topic))
    return header + pprint.pformat(entries, width=116, sort_dicts=False) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("topics", nargs="*")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    stale, slipped = [], 0
    for topic in args.topics or topics(ROOT):
        messages = {}
        text = text_of(topic, table(topic, messages))
        for name, failed in messages.items():
            for item, message in failed:
                for slip in slips(message):
                    slipped += 1
                    print(f"{topic}: {name!r}, {item}: {slip}")
        path = path_of(topic)
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(topic)
        if args.write:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if args.check and stale:
        print(f"stale: {', '.join(stale)} (python -m tests.mistakes.signatures --write {' '.join(stale)})")
        return 1
    return 1 if slipped else 0


if __name__ == "__main__":
    sys.exit(main())
