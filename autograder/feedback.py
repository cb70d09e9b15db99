"""Feedback over a whole grade: one message per cause, and the known mistake a pattern of failures points to.

A check sees one item; a student sees them all. Two things are only known once every item of a topic is graded:

* **One cause, one message.** When the same exception of the student's code fails several items, the first item
  (in spec order) keeps the full message (the call, its arguments, the line) and the others say "same cause as
  <check>" with the exception in one line, so that four items do not read as four problems.
* **This looks like: <the mistake>.** Each known mistake (the proofs' mutants, ``tests/mutants/<topic>.py``) leaves
  a *signature* in a grade: the items it fails and the kind of each failure (``autograder.errors.KINDS``). The
  signatures are data the grader ships (``autograder/checks/<topic>/mistakes.py``, written from the mutants by
  ``python -m tests.mistakes.signatures --write``). A grade whose pattern matches one names that mistake, once, on
  its first failed item. :func:`looks_like` says what "matches" means: only an exact match whose evidence says more
  than that a result is wrong; anything less names nothing: naming nothing is better than naming the wrong
  mistake.

Pure functions over results (anything with ``item``, ``check``, ``status``, ``kind``, ``cause``, ``message``): no
topic is imported here; the engine passes the topic's table in.
"""

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


def looks_like(mistakes, seen, *, hidden=True):
    """The known mistake whose signature ``seen`` (a :func:`pattern`) matches, as its entry, or ``None``.

    Right or silent: a mistake is named only when the grade's evidence singles it out. Items of a function not
    written yet ("not implemented") are left out of both sides: a student who has done one exercise can be told
    about its mistake before doing the next. A mistake is named when

    1. its signature is ``seen`` exactly (the same items failed, each with the same kind), and no mistake told
       otherwise leaves that signature; and
    2. the signature holds evidence of its own: at least one failure whose kind says more than that a result is
       wrong (a check's own branch for what is wrong, a known result, an exception's type, a kind of non-finite
       value...). A signature of generic kinds only (:func:`generic`: "wrong value") is what many mistakes leave,
       a mutant's or not: the set of failed items alone names nothing.
       Where a mistake's evidence is generic, its check must measure what tells it apart (a known result,
       ``compare.expect_close(known=...)``) for it to be named.

    Anything less, a signature one item apart included, names nothing: naming nothing is better than naming the
    wrong mistake (docs/feedback.md measures both). ``hidden``: the grade ran the hidden variants (the grader;
    ``check`` with the grader installed), so the signature of every variant applies; else the visible one.
    """
    if not seen:
        return None
    unknown = {item for item, kind in seen.items() if kind == UNKNOWN}
    seen = {item: kind for item, kind in seen.items() if item not in unknown}
    if not seen:
        return None
    key = "signature" if hidden else "visible"
    exact = [m for m in mistakes if {i: k for i, k in m[key].items() if i not in unknown} == seen]
    if not exact or len({m["says"] for m in exact}) != 1:
        return None
    return exact[0] if not all(generic(kind) for kind in seen.values()) else None


def generic(kind):
    """Whether a failure's kind says no more than that a result is wrong: what any mistake of that function may
    leave ("wrong value": ``compare.expect_close``'s difference from the reference, whatever it compared)."""
    return kind == "wrong value"


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


def live_hint(mistakes, observed, current, *, hidden=False):
    """The known mistake to name on the failed test cell of item ``current`` in a notebook, or ``None``.

    ``observed``: ``{item: kind}`` of the topic's test cells run so far in this kernel (``""``: passed). A cell sees
    no whole grade, so only an exact match counts, on the items observed: the mistake's signature fails every
    observed item that failed (with its kind) and none that passed, includes ``current``, and has every one of its
    items observed; several mistakes told differently name nothing, and so does a signature of generic kinds only.
    Items of a function not written yet are left out, as in :func:`looks_like`."""
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
    if not found or len({m["says"] for m in found}) != 1:
        return None
    return None if all(generic(kind) for kind in found[0][key].values()) else found[0]


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
