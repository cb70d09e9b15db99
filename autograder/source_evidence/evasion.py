"""What static reading cannot settle, found in the submitted source: the items that depend on it go to review.

:func:`affecting` lists, for an item's answers, each construct that makes what runs undecidable from the source and
that the answer reaches (in its own definitions or a module-level definition it reads, resolved with Python's own
scoping: :mod:`autograder.source_evidence.source_scopes`), or that runs at module level: a cell's top level, a function called from
there, decorators, defaults and class bodies (it affects every item of the notebook; torch's hiding constructs,
which change no other code, only where an answer reaches them). An
item with any is put **under review** (:class:`autograder.errors.UnderReview`): 0 points, the construct and its line
in the record, until an instructor accepts (the item is graded on its evidence as if not flagged) or rejects it
(``python -m autograder review``). A source fact alone never earns a point where the analysis found ambiguity.

The approach is not a list of forbidden spellings: names are resolved to what they are (a local, a module's
constant attribute, a builtin), and what cannot be resolved is *unknown reach*:

* **several definitions** of a name an answer reaches (the graded name itself, or a helper): under a branch, in two
  cells, through ``global`` inside a function. Which one is in force is decided at run time;
* **a module used as a value** (``[torch][0]``, ``f(sys)``, ``x or torch``): whatever is done with it later is
  beyond the reading. A module may be named, aliased (``T = torch``), have constant attributes read, be printed or
  passed to ``getattr``/``hasattr``/``isinstance``;
* **a computed attribute** (``getattr(obj, name)`` with a name that is not a constant, or a loop over a literal
  tuple of strings) in code an answer reaches, unless the object is the method's own ``self``/``cls``; anywhere,
  one used at once as code, and calls and stores through a name bound to one. ``setattr``/``delattr`` on anything
  but a local; assigning or deleting an attribute or item of a module or its classes (``torch.sum = ...``,
  ``torch.Tensor.__getitem__ = ...``; ``torch.backends.*`` settings are allowed; a module the rules never name only
  where an answer reaches it), of the student's own function or class after its definition, or of what a call
  returns (``type(self).forward = ...``);
* **beyond the reading's bound**: an answer that reaches more than ``MAX_REACH`` definitions;
* **frames and code objects** by any route: a dunder attribute outside the harmless few (``__name__``,
  ``__class__``, ``__init__``...: ``print.__self__``, ``f.__globals__``), frame attributes (``f_back``), and the
  modules' own frame, object and import machinery (``sys._getframe``, ``sys.modules``, ``gc.get_objects``,
  ``inspect.currentframe``, ``ctypes``, ``builtins``, ``importlib`` but its ``metadata``);
* **code the grader cannot read**: the builtins ``exec``/``eval``/``compile``/``__import__``/``globals``/
  ``locals``/``vars``/``breakpoint`` (the builtin, resolved by scope: a parameter named ``eval`` is not it), loading
  code (``marshal``, ``runpy``, ``types.FunctionType``, ``torch.utils.cpp_extension``, ``torch.hub``,
  ``torch.package``, ``torch.jit.CompilationUnit``, ``torch.library``), and importing a module that is neither in the
  standard library nor installed (a file the notebook wrote);
* **torch internals that can hide operations**: ``torch._C``, ``torch.overrides``, ``_disable_current_modes``...
  (each use, resolved through aliases; an import alone does nothing); ``autograder`` imported in an answer's cell
  or used inside a definition.

Honest look-alikes stay unflagged: ``model.eval()``, ``torch.compile``, ``setattr(self, name, value)``,
``getattr(self, name)``, ``importlib.metadata.version("torch")``, ``dtype = getattr(torch, name)`` outside the
graded functions, ``for lib in (torch, np): print(lib.__version__)``, a docstring that mentions ``torch._C``. A false alarm on honest code is as serious as a missed
cheat: ``tests/honest/`` and ``tests/test_evasion_calibration.py`` run this over a corpus of student-style answers,
every reference, alternative and mutant, and find nothing. Read in process (the kit's proofs), only the answers' own
definitions count: a test module that defines a student's function is no submission.
"""

import ast
import dataclasses
import hashlib

from autograder.source_evidence.evasion_scanner import (Evasion, Scanner,  # noqa: F401 - Evasion: what scan() returns
                                                        timed)
from autograder.source_evidence.source_rules import Finding
from autograder.source_evidence.submitted_source import MAX_REACH


def scan(submission, answer_names=()):
    """Every evasive construct of ``submission`` (``[Evasion]``); ``answer_names``: the topic's exercise names (an
    ``autograder`` import in a cell that defines one counts)."""
    cached = getattr(submission, "_evasions", None)
    if cached is None or cached[0] != tuple(sorted(answer_names)):
        cached = (tuple(sorted(answer_names)), Scanner(submission, answer_names).scan())
        submission._evasions = cached
    return cached[1]


def affecting(submission, targets, answer_names=()):
    """``[Finding]``: the constructs that ``targets``' answers reach, those at module level, and every name the
    answers reach that has more than one definition (read in process, from the files that define the objects: the
    answers' own definitions only)."""
    found = scan(submission, answer_names)
    scopes, ambiguous = set(), []
    for target in targets:
        answer = submission.answer(target)
        if answer is None:
            continue
        scopes.update((d.part.label, id(d.node)) for d in answer.reached)
        if not submission.in_process:
            ambiguous += several_definitions(answer)
        if answer.truncated:
            where = answer.definition.part.where(answer.definition.node)
            ambiguous.append(Finding(f"`{target}` reaches more than {MAX_REACH} definitions: the reading stops there",
                                     where))
    in_force = set() if submission.in_process else {p.label for p in submission.parts}   # in process: the
    # answers' own definitions only (a test module that defines a student's function is no submission)
    run_here = set() if submission.in_process else module_reach(submission)
    findings = [e.finding for e in found
                if (e.part in in_force and not e.weak
                    and (e.scope is None or ((e.part, e.scope) in run_here and not e.contained)))
                or (e.part, e.scope) in scopes] + ambiguous
    if not findings:
        return []
    digest = code_digest(submission, targets)
    return [dataclasses.replace(f, code=digest) for f in findings]


def module_reach(submission):
    """``{(part, id(definition))}``: the definitions that code run at module level reaches (a function called from a
    cell's top level runs there: whatever it does affects every item)."""
    cached = getattr(submission, "_module_reach", None)
    if cached is not None:
        return cached
    starts = []
    for part in submission.parts:
        if part.tree is None:
            continue
        for statement in part.tree.body:
            names = {n.id for n, later in timed(statement, False) if not later and isinstance(n, ast.Name)
                     and isinstance(n.ctx, ast.Load) and submission.kind(n) == "global"}
            for name in names:
                starts += [d for d in submission.definitions.get(name, [])
                           if not isinstance(d.node, (ast.Import, ast.ImportFrom))]
    reached = submission.reach(starts)[0] if starts else []
    submission._module_reach = {(d.part.label, id(d.node)) for d in reached}
    return submission._module_reach


def code_digest(submission, targets):
    """SHA-256 of the code ``targets``' answers run: every definition they reach and every module-level statement
    (as Python parses it: comments, blank lines and moved lines change nothing). An instructor's decision on an
    item under review is about this code; different code is reviewed again."""
    digest = hashlib.sha256()
    for target in sorted(targets):
        answer = submission.answer(target)
        for definition in answer.reached if answer is not None else []:
            digest.update(f"{target}:{definition.name}:".encode() + ast.dump(definition.node).encode())
    for part in submission.parts:
        if part.tree is None:
            digest.update(part.text.encode())
            continue
        for statement in part.tree.body:
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                digest.update(ast.dump(statement).encode())
    return digest.hexdigest()[:16]


def several_definitions(answer):
    """A finding for each name ``answer`` reaches (its own name included) that has several different definitions
    that are code (two identical ones, or plain values such as ``EPS = 1e-6``, decide nothing)."""
    found = []
    for name, definitions in answer.followed.items():
        if len(definitions) < 2 or all(d.is_data for d in definitions):
            continue
        if len({ast.dump(d.node) for d in definitions}) < 2:
            continue
        places = "; ".join(f"{d.part.where(d.node)}" + (" through `global`" if d.through_global else "")
                           for d in definitions[:4])
        last = definitions[-1]
        found.append(Finding(f"`{name}` is defined {len(definitions)} times ({places}): which one runs is decided "
                             "when the notebook runs, not by reading it", last.part.where(last.node)))
    return found
