"""Feedback over a whole grade: one message per cause, and the known mistake a pattern of failures points to.

A check sees one item; a student sees them all. Two things are only known once every item of a topic is graded:

* **One cause, one message.** When the same exception of the student's code fails several items, the first item
  (in spec order) keeps the full message (the call, its arguments, the line) and the others say "same cause as
  <check>" with the exception in one line, so that four items do not read as four problems.
* **This looks like: <the mistake>.** Each known mistake (the proofs' mutants, ``tests/mutants/<topic>.py``) leaves
  a *signature* in a grade: the items it fails and the kind of each failure (``autograder.errors.KINDS``). The
  signatures are data the grader ships (``autograder/checks/<topic>/mistakes.py``, written from the mutants by
  ``python -m tests.mistakes.signatures --write``). A grade whose pattern matches one names that mistake, once, on
  its first failed item. :func:`looks_like` says what "matches" means; on an ambiguous or weak match it names
  nothing: naming nothing is better than naming the wrong mistake.

Pure functions over results (anything with ``item``, ``check``, ``status``, ``kind``, ``cause``, ``message``): no
topic is imported here; the engine passes the topic's table in.
"""

import re

FAILED = "failed"
UNKNOWN = "not implemented"       # an item of a function not written yet: compared with no signature
NOT_NAMED = {"missing", "crashed", ""}   # a grade with one of these says nothing about a mistake
LOOKS_LIKE = "This looks like: "


def pattern(results):
    """``{item id: kind}`` of the failed items, or ``None`` when the grade says nothing a mistake could explain: an
    item was not graded (a grader error, an item under review), a name is missing, or the worker crashed."""
    found = {}
    for r in results:
        if r.status in ("grader error", "under review"):
            return None
        if r.status == FAILED:
            if r.kind in NOT_NAMED:
                return None
            found[r.item] = r.kind
    return found


def distance(seen, signature):
    """How many items differ between two patterns: failed in one and not the other, or failed with another kind."""
    return sum(1 for item in set(seen) | set(signature) if seen.get(item) != signature.get(item))


def looks_like(mistakes, seen, *, hidden=True):
    """The known mistake whose signature ``seen`` (a :func:`pattern`) matches, as its entry, or ``None``.

    Items of a function not written yet ("not implemented") are left out of both sides: a student who has done
    one exercise can be told about its mistake before doing the next. "Matches", in this order:

    1. *exactly*: the same items failed, each with the same kind. When several mistakes leave that signature and
       their descriptions differ, nothing is named (the grade cannot tell them apart);
    2. *nearly*: else, the mistakes whose signature differs from ``seen`` in one item exactly (one more or one fewer
       failed item, or one item failed with another kind) **and** agrees on two failed items with their kinds,
       or on one whose kind is told by name or is an exception's type (one "wrong value" in common is what any
       two mistakes of one function share); named only when all of them say the same thing. An item that both
       failed in a check's own words, but in other words (:func:`told_by_name`), is not "another kind": it is
       another mistake, and that signature is no near match.

    Anything further is a weak match, and nothing is named. ``hidden``: the grade ran the hidden variants (the
    grader; ``check`` with the grader installed), so the signature of every variant applies; else the visible one.
    """
    if not seen:
        return None
    unknown = {item for item, kind in seen.items() if kind == UNKNOWN}
    seen = {item: kind for item, kind in seen.items() if item not in unknown}
    if not seen:
        return None
    key = "signature" if hidden else "visible"
    signatures = [(m, {i: k for i, k in m[key].items() if i not in unknown}) for m in mistakes]
    for allowed in (0, 1):
        near = [m for m, signature in signatures if distance(seen, signature) == allowed
                and _agrees(seen, signature, strongly=allowed > 0)
                and not any(told_by_name(seen.get(i, "")) and told_by_name(k) and seen[i] != k
                            for i, k in signature.items())]
        if near:
            says = {m["says"] for m in near}
            return near[0] if len(says) == 1 else None
    return None


def _agrees(seen, signature, *, strongly):
    """Whether ``seen`` fails at least one item of ``signature`` with its kind; ``strongly``: two items, or one whose
    kind says more than that the result is wrong (told by name, or an exception's type). One "wrong value" in
    common beside an item apart is what any two mistakes of one function share."""
    agree = [k for i, k in signature.items() if seen.get(i) == k]
    if not strongly:
        return bool(agree)
    return len(agree) >= 2 or any(told_by_name(k) or k.startswith("raised") for k in agree)


def told_by_name(kind):
    """Whether a failure's kind is a check's own words for what is wrong ("failed: <what> is the gradients at the
    model's own parameters ..."), rather than a kind any wrong result has ("wrong value", "not finite: NaN", "failed:
    <what> differs from the reference")."""
    return kind.startswith(f"{FAILED}: ") and not kind.endswith("differs from the reference")


def name_mistake(results, mistakes, *, hidden=True):
    """Add "This looks like: <the mistake>." to the first failed result's message when :func:`looks_like` finds one;
    return the mistake's entry (or ``None``). The result's ``evidence["looks_like"]`` records which one."""
    if not mistakes:
        return None
    found = looks_like(mistakes, pattern(results), hidden=hidden)
    if found is None:
        return None
    first = next(r for r in results if r.status == FAILED)
    first.message += f"\n{LOOKS_LIKE}{found['says']}"
    first.evidence["looks_like"] = found["id"]
    return found


def kind_of(failure):
    """The kind of a :class:`~autograder.errors.CheckFailure` as a grade records it: its own, or "failed: " and the
    fixed words of its message (:func:`skeleton`) when it has none."""
    return failure.kind if failure.kind != FAILED else f"{FAILED}: {skeleton(failure.detail)}"


def live_hint(mistakes, observed, current, *, hidden=False):
    """The known mistake to name on the failed test cell of item ``current`` in a notebook, or ``None``.

    ``observed``: ``{item: kind}`` of the topic's test cells run so far in this kernel (``""``: passed). A cell sees
    no whole grade, so only an exact match counts, on the items observed: the mistake's signature fails every
    observed item that failed (with its kind) and none that passed, includes ``current``, and has every one of its
    items observed; several mistakes told differently name nothing. Items of a function not written yet are left
    out, as in :func:`looks_like`."""
    if not observed.get(current) or observed[current] in NOT_NAMED or observed[current] == UNKNOWN:
        return None
    unknown = {item for item, kind in observed.items() if kind == UNKNOWN}
    if any(kind in NOT_NAMED - {""} for kind in observed.values()):
        return None
    key = "signature" if hidden else "visible"
    found = []
    for m in mistakes:
        signature = {i: k for i, k in m[key].items() if i not in unknown}
        if current in signature and set(signature) <= set(observed) and all(
                observed[i] == signature.get(i, "") for i in observed if i not in unknown):
            found.append(m)
    return found[0] if found and len({m["says"] for m in found}) == 1 else None


def same_cause(results):
    """Rewrite the message of every failed result whose ``cause`` (the student's exception, in one line) an earlier
    failed result already reported: "same cause as <check>", and the cause. Returns how many were rewritten."""
    first_with = {}
    rewritten = 0
    for r in results:
        if r.status != FAILED or not r.cause:
            continue
        if r.cause not in first_with:
            first_with[r.cause] = r.check
            continue
        r.message = f"[{r.check}] same cause as {first_with[r.cause]}: {_sentence(r.cause)}"
        rewritten += 1
    return rewritten


def _sentence(text):
    """``text`` on one line, ending with a full stop (a cause can end with the student's own line of code)."""
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."


_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}|<[^<>]*>")
_QUOTED = re.compile(r"`[^`]*`|(?<!\w)'[^'\n]*'(?!\w)|\"[^\"]*\"")
_NUMBER = re.compile(r"[-+]?\d[\d.,_eE+-]*")


def skeleton(detail, words=12):
    """The fixed words of a check's own message, for a failure with no kind of its own: its first line without what
    varies with the input (anything in brackets or quotes, numbers), so that the same branch of a check reads the
    same on every input and every seed. ``"failed: " + skeleton`` is then the failure's kind."""
    line = detail.splitlines()[0] if detail else ""
    line = _QUOTED.sub(" ", line)
    for _ in range(4):                       # nested brackets, innermost first
        line = _BRACKETED.sub(" ", line)
    line = _NUMBER.sub("#", line)
    kept = [w for w in line.replace(",", " ").replace(";", " ").split() if w.strip(".:")]
    return " ".join(kept[:words]).rstrip(".:")
