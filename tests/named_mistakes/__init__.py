"""Mistakes written apart from the mutants, to measure the named-mistake hint (docs/feedback.md).

Each ``tests/named_mistakes/<topic>.py`` has ``MISTAKES = {what it is: (replacement objects, truth)}``: written from
the notebook's text as a student would, in code that is not a mutant's (other spellings, other routes to the same
error, and mistakes no mutant makes). ``truth`` is the id of the mutant (``tests/mutants/<topic>.py``) that is the
same mistake, or ``None`` when none is: then the right hint names nothing. The truths were written down before
any of these was graded. ``second_set.py`` to ``fifth_set.py`` are four more sets in one file each (``{topic: {what: (replacements, truth)}}``), written later by someone who graded none of them; ``measure.py``
says how each set was used (docs/feedback.md).
"""
