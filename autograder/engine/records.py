"""One verdict record per (student, assignment, graded run), kept with its history: the one store of verdicts.

Whoever grades writes the record once (``python -m autograder grade``, the formgrader's autograde button, plain
``nbgrader autograde``, ``grade --pending`` on a GPU machine: all of them through nbgrader's autograde, whose
``RecordedGrades`` step appends it). The gradebook's automatic scores, the report, every export, ``pending`` and the
feedback are written from it or read it; nothing parses notebook outputs or nbgrader's log back.

``grading-records/<student>/<assignment>.json`` holds ``{"history": [record, ...], "lateness": {...}}``: the records
oldest first, the last in force (a regrade appends, nothing is overwritten), and the lateness last settled (the
penalty itself is nbgrader's, in the gradebook). A record (plain JSON):

* ``student``, ``assignment``, ``status`` ("graded", "error": it could not be graded, "missing": nothing submitted)
* ``items``: per graded item, its :class:`verdict.Verdict` as a dict (``Verdict.to_dict``: points, status, message,
  the failure's kind, measurements, evidence, note, and for a grader error its traceback in ``detail``, for the
  instructor only); :func:`verdicts` reads them back
* ``seed``, ``digest`` (the content hash it was graded for), ``sandboxed``, ``graded_by`` (the path and the user),
  ``graded_at`` (ISO 8601, UTC), ``worker``, ``gpu_worker``, ``peak_rss_mb``, ``seconds``, ``problems``
* ``changes``: ``[{"item", "old", "new", "old_status", "new_status"}]``, each automatic score this run changed
  against the record before it.

Beside the history, ``reviews`` keeps the instructor's decisions on items under review (``python -m autograder
review --accept/--reject``): ``{"item", "decision" ("accepted"/"rejected"), "note", "constructs", "digest", "by",
"at"}``. :func:`apply_decisions` applies them to a record: a regrade that finds the same constructs in the same item
keeps the decision (accepted: the item is graded on its evidence as if not flagged, the check's own verdict kept in
``evidence.review.on_accept``; rejected: 0 with the instructor's note).

Students never reach this directory (the sandboxed worker sees no course directory); the store is written by the
grader's processes only, one append at a time (a lock file).
"""

import contextlib
import datetime
import fcntl
import getpass
import json
import os
import tempfile
from pathlib import Path

from autograder.engine.verdict import Verdict

RECORDS = "grading-records"
KEPT = "grading-results"


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def who(path):
    """``graded_by``: the way it was graded and the user who ran it."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return f"{path} ({user})"


def new_record(student, assignment, *, status="graded", items=(), seed=None, digest="", graded_by="",
               sandboxed=True, problems=(), **extra):
    record = {"student": student, "assignment": assignment, "status": status,
              "items": [i.to_dict() if isinstance(i, Verdict) else dict(i) for i in items], "seed": seed,
              "digest": digest, "sandboxed": bool(sandboxed),
              "graded_by": graded_by or who("unknown"), "graded_at": now_iso(), "problems": list(problems),
              "worker": "", "gpu_worker": "", "peak_rss_mb": 0.0, "seconds": 0.0, "changes": []}
    record.update(extra)
    return record


def verdicts(record):
    """The record's items as :class:`~autograder.engine.verdict.Verdict` objects, in its order."""
    return [Verdict.from_dict(i) for i in record.get("items", [])]


def changes(before, after):
    """Each item whose automatic score or status ``after`` changed against ``before`` (None: a first record)."""
    if not before:
        return []
    old = {i["item"]: i for i in before.get("items", [])}
    found = []
    for item in after.get("items", []):
        was = old.get(item["item"])
        if was is None or was.get("score") != item.get("score") or was.get("status") != item.get("status"):
            found.append({"item": item["item"], "old": None if was is None else was.get("score"),
                          "new": item.get("score"), "old_status": None if was is None else was.get("status"),
                          "new_status": item.get("status")})
    return found


ACCEPTED, REJECTED = "accepted", "rejected"


def review_key(item):
    """What an instructor's decision on ``item`` (a record's item dict) is about: the constructs found, by their
    text and line's text (line numbers move when cells are added above), and the digest of the code the item's
    answers run (``evasion.code_digest``): the same line in different code is a new question."""
    constructs = ((item.get("evidence") or {}).get("review") or {}).get("constructs") or []
    return sorted([c.get("construct", ""), c.get("snippet", ""), c.get("code", "")] for c in constructs)


def apply_decisions(record, decisions):
    """Apply the instructor's ``decisions`` (the last one per item and constructs wins) to ``record``'s items under
    review, in place; returns the item ids decided."""
    decided = []
    for item in record.get("items", []):
        review = (item.get("evidence") or {}).get("review")
        if not review:
            continue
        key = review_key(item)
        found = [d for d in decisions if d.get("item") == item.get("item") and d.get("constructs") == key]
        if not found:
            continue
        decision = found[-1]
        review["decision"] = {k: decision.get(k) for k in ("decision", "note", "by", "at")}
        if decision["decision"] == ACCEPTED:
            verdict = review.get("on_accept") or {}
            item.update(status=verdict.get("status", "failed"), score=float(verdict.get("score", 0.0)),
                        message=verdict.get("message", ""))
            item["note"] = f"accepted after the instructor's review ({decision.get('by')}): {decision.get('note') or 'not evasion'}"
        else:
            note = decision.get("note") or "what this code does is not allowed in this exercise"
            item.update(status="failed", score=0.0,
                        message=f"[{item.get('check')}] rejected after your instructor's review: {note}")
            item["note"] = f"rejected after the instructor's review ({decision.get('by')})"
        decided.append(item.get("item"))
    return decided


def _write_json(path, data):
    """Write ``data`` to ``path`` whole or not at all: into a hidden temporary file beside it, then renamed. A
    temporary file that a killed run left behind for the same path goes first (each store has one writer at a time:
    the grader, or the record lock's holder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(f".{path.stem}-*.json"):
        stale.unlink(missing_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1, sort_keys=True)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


class RecordError(RuntimeError):
    """A record file that cannot be read: it is never overwritten (its history would be lost)."""


def _read_json(path, strict=False):
    """The JSON object in ``path``; None when there is none. ``strict``: a file that is not a JSON object raises
    :class:`RecordError` instead of reading as None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        if strict:
            raise RecordError(f"{path} cannot be read ({error}); it is left as it is: move it aside to grade "
                              "this submission again") from None
        return None
    if not isinstance(data, dict) and strict:
        raise RecordError(f"{path} is not a record file; it is left as it is: move it aside to grade again")
    return data if isinstance(data, dict) else None


class RecordStore:
    """``grading-records/``: every record of every submission, the last of each in force."""

    def __init__(self, course):
        self.root = Path(course) / RECORDS

    def path(self, student, assignment):
        return self.root / student / f"{assignment}.json"

    @contextlib.contextmanager
    def _locked(self):
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def history(self, student, assignment):
        data = _read_json(self.path(student, assignment), strict=True) or {}
        found = data.get("history")
        return found if isinstance(found, list) else []

    def latest(self, student, assignment):
        found = self.history(student, assignment)
        return found[-1] if found else None

    def set_lateness(self, student, assignment, fields):
        """Keep the lateness last settled for the submission (``lateness.settle``'s fields, under the deadlines in force
        when it ran), beside its history; the gradebook holds the penalty itself."""
        with self._locked():
            path = self.path(student, assignment)
            data = _read_json(path, strict=True) or {"history": []}
            data["lateness"] = dict(fields)
            _write_json(path, data)

    def lateness(self, student, assignment):
        return (_read_json(self.path(student, assignment), strict=True) or {}).get("lateness")

    def decisions(self, student, assignment):
        """The instructor's decisions on this submission's items under review, oldest first."""
        found = (_read_json(self.path(student, assignment), strict=True) or {}).get("reviews")
        return found if isinstance(found, list) else []

    def decide(self, student, assignment, item_id, decision, note="", by=""):
        """Keep an instructor's ``decision`` (:data:`ACCEPTED` or :data:`REJECTED`) on ``item_id`` of the record in
        force, and append that record with the decision applied (a record of its own, in the history); returns it.
        Raises ``LookupError`` when the item was never under review."""
        import copy

        with self._locked():
            path = self.path(student, assignment)
            data = _read_json(path, strict=True) or {}
            history = data.get("history") if isinstance(data.get("history"), list) else []
            if not history:
                raise LookupError(f"no grading record for {student}/{assignment}")
            latest = history[-1]
            item = next((i for i in latest.get("items", []) if i.get("item") == item_id), None)
            if item is None or not (item.get("evidence") or {}).get("review"):
                raise LookupError(f"{student}/{assignment}: item {item_id!r} is not under review")
            entry = {"item": item_id, "decision": decision, "note": note, "constructs": review_key(item),
                     "digest": latest.get("digest", ""), "by": by or who("review"), "at": now_iso()}
            data["reviews"] = [*self.decisions(student, assignment), entry]
            record = copy.deepcopy(latest)
            apply_decisions(record, data["reviews"])
            record.update(graded_by=entry["by"], graded_at=entry["at"])
            record["changes"] = changes(latest, record)
            data["history"] = [*history, record]
            _write_json(path, data)
        return record

    def append(self, record):
        """Add ``record`` as the one in force, with what it changed against the one before; returns it."""
        with self._locked():
            earlier = self.history(record["student"], record["assignment"])
            record["changes"] = changes(earlier[-1] if earlier else None, record)
            path = self.path(record["student"], record["assignment"])
            data = _read_json(path, strict=True) or {}
            data["history"] = [*earlier, record]
            _write_json(path, data)
        return record

    def all_latest(self, keys=None):
        """``{"student/assignment": (the record in force, the lateness last settled or None)}``; with ``keys``, of
        those submissions only."""
        found = {}
        if not self.root.exists():
            return found
        paths = sorted(self.root.glob("*/*.json")) if keys is None else [
            self.path(*key.split("/", 1)) for key in keys]
        for path in paths:
            if path.name.startswith("."):      # a write that a killed run left unfinished: not a record
                continue
            data = _read_json(path, strict=True) or {}
            history = data.get("history")
            if isinstance(history, list) and history:
                found[f"{path.parent.name}/{path.stem}"] = (history[-1], data.get("lateness"))
        return found


class KeptResults:
    """``grading-results/<student>/<assignment>.json``: a worker's finished result (``jobs.grade_job``'s data), kept
    with its content hash before nbgrader's autograde records it; autograde records it from here (the batch sets
    ``TrustedExecute.replay``) only when nbgrader reads the very cells that were graded."""

    def __init__(self, course):
        self.root = Path(course) / KEPT

    def path(self, student, assignment):
        return self.root / student / f"{assignment}.json"

    def get(self, student, assignment, digest=None):
        """The kept result (with content hash ``digest``, when given), or None."""
        kept = _read_json(self.path(student, assignment))
        if not kept or not isinstance(kept.get("result"), dict):
            return None
        if digest is not None and kept.get("digest") != digest:
            return None
        return kept["result"]

    def digest(self, student, assignment):
        return (_read_json(self.path(student, assignment)) or {}).get("digest", "")

    def put(self, student, assignment, digest, result):
        _write_json(self.path(student, assignment), {"digest": digest, "result": result})
