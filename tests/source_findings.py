"""What the source analysis holds against each item of a submission, as the grader reads its cells: shared by the
honest corpus (nothing may be held) and the source attacks (the attack's item must be)."""

from autograder.checks import items_of
from autograder.source_evidence.evasion import affecting
from autograder.source_evidence.source_rules import rule_findings


def held_against(topic, submission):
    """``{item: [what the source analysis holds against it]}`` for ``submission`` (a ``Submission``), only the items
    with something: the items' own source rules and whatever the reading finds that affects their targets."""
    names = {target for item in items_of(topic) for target in item.targets}
    found = {}
    for item in items_of(topic):
        texts = [f.text() for rule in item.source for f in rule_findings(rule, submission)]
        texts += [f.text() for f in affecting(submission, item.targets, names)]
        texts += [f.text() for rule in item.source if hasattr(rule, "undecided") and submission.answer(rule.target)
                  for f in rule.undecided(submission.answer(rule.target))]     # what a rule leaves to review
        if texts:
            found[item.id] = texts
    return found
