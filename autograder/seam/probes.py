"""What may run beside the student's code in their worker, declared: the registry of probes.

A *probe* is a module-level function (or class) of the autograder that a check runs where the student's objects
live (``handle.beside(probe, ...)``), a baseline that the clean worker times, or a function of the grader's passed
by name into the student's code (``functools.partial(formula, ...)``). Each is declared with ``@probe`` in its
topic's ``checks/<topic>/probes.py`` (:func:`probe_modules`); a request names a probe by its registry key
(``module:qualname``), nothing else.

The worker builds its registry with :func:`freeze` when it starts, **before any student code runs**: a dict of key
-> the function object, and a snapshot of what the probes use (their code objects and their modules' functions,
classes and modules). Every probe call first puts that snapshot back (:meth:`FrozenProbes.get`), so a notebook
cell that replaces a probe (``worker_facts.scripted_facts = lambda *a: {...}``), its code, or a helper it calls
changes nothing the grader runs. A name outside the registry is refused.

This is a lock on the door, not a proof: the student's code runs in that process and a determined student can
reach the registry itself (through ``gc``, say). That is why what a probe reports about the student's process
never earns a point on its own (docs/security.md), and why such tricks put an item under review.
"""

import importlib
import sys
import types
from pathlib import Path

# Probes live by convention: a topic's in ``autograder/checks/<topic>/probes.py`` (or the modules of a
# ``probes/`` package there); the shared ones in the modules below. The worker imports them all before any student
# code runs, and a ``@probe`` elsewhere is an error at import time (so that no probe is missing from a frozen
# registry).
SHARED_PROBE_MODULES = ("autograder.seam.timed_inputs",)
_CHECKS = Path(__file__).resolve().parents[1] / "checks"


def probe_modules():
    """The dotted names of every module that may hold probes: the shared ones, then each topic's ``probes``."""
    found = [f"autograder.checks.{p.parent.name}.probes" for p in sorted(_CHECKS.glob("*/probes.py"))]
    found += [f"autograder.checks.{p.parent.parent.name}.probes.{p.stem}"
              for p in sorted(_CHECKS.glob("*/probes/*.py")) if p.stem != "__init__"]
    return (*SHARED_PROBE_MODULES, *found)


def is_probe_module(name):
    """Whether module ``name`` may hold probes (:func:`probe_modules`), read from its name alone."""
    parts = name.split(".")
    return name in SHARED_PROBE_MODULES or (parts[:2] == ["autograder", "checks"] and len(parts) in (4, 5)
                                            and parts[3] == "probes")


_DECLARED = {}      # key -> function or class, as ``@probe`` declared them in this process


class NotAProbe(LookupError):
    """A request named something that is not a registered probe (the grader's mistake, or a forged request)."""


def key_of(fn):
    """The registry key of ``fn`` (``module:qualname``); ``NotAProbe`` when ``fn`` is not declared ``@probe``."""
    key = getattr(fn, "probe_key", None)
    if key is None or _DECLARED.get(key) is not fn:
        raise NotAProbe(f"{getattr(fn, '__qualname__', fn)!r} is not declared @probe in a probes module "
                        "(autograder.seam.probes): only registered probes run beside the student's code")
    return key


def probe(fn):
    """Declare ``fn`` (a module-level function or class of a probes module: :func:`probe_modules`) a probe."""
    key = f"{fn.__module__}:{fn.__qualname__}"
    if not is_probe_module(fn.__module__) or "<" in fn.__qualname__ or "." in fn.__qualname__:
        raise ValueError(f"@probe {key}: a probe is a module-level function or class of a topic's probes module "
                         "(autograder/checks/<topic>/probes.py or a module of its probes/ package)")
    fn.probe_key = key
    _DECLARED[key] = fn
    return fn


def is_probe(fn):
    try:
        key_of(fn)
    except NotAProbe:
        return False
    return True


_KEPT = (types.FunctionType, type, types.ModuleType, types.BuiltinFunctionType)


class FrozenProbes:
    """The registry as the worker froze it: key -> probe, and the snapshot put back before each use."""

    def __init__(self):
        for name in probe_modules():
            importlib.import_module(name)
        modules = [m for name, m in sorted(sys.modules.items()) if _snapshotted(name) and m is not None]
        self._probes = dict(_DECLARED)
        self._globals = [(m.__dict__, {k: v for k, v in m.__dict__.items() if isinstance(v, _KEPT)})
                         for m in modules]
        self._code = [(f, f.__code__, f.__defaults__, f.__kwdefaults__) for m in modules
                      for f in vars(m).values() if type(f) is types.FunctionType and f.__module__ == m.__name__]
        self._methods = [(c, dict(vars(c))) for c in self._probes.values() if isinstance(c, type)]

    def __contains__(self, key):
        return key in self._probes

    def get(self, key):
        """The probe registered under ``key``, with the snapshot put back first; ``NotAProbe`` for any other name."""
        if type(key) is not str or key not in self._probes:
            raise NotAProbe(f"{str(key)[:200]!r} is not a registered probe")
        self.restore()
        return self._probes[key]

    def restore(self):
        for namespace, kept in self._globals:
            for name, value in kept.items():
                if namespace.get(name) is not value:
                    namespace[name] = value
        for fn, code, defaults, kwdefaults in self._code:
            if fn.__code__ is not code:
                fn.__code__ = code
            if fn.__defaults__ is not defaults:
                fn.__defaults__ = defaults
            if fn.__kwdefaults__ is not kwdefaults:
                fn.__kwdefaults__ = kwdefaults
        for cls, attributes in self._methods:
            for name, value in attributes.items():
                if name not in ("__dict__", "__weakref__") and cls.__dict__.get(name) is not value:
                    setattr(cls, name, value)


def _snapshotted(name):
    """The modules whose functions, classes and modules a frozen registry puts back: the probes modules and every
    module of the topics' packages they loaded (the helpers a probe calls)."""
    return is_probe_module(name) or name.startswith("autograder.checks.")


def freeze():
    """The registry of this process, frozen now (the worker calls it before any student code runs)."""
    return FrozenProbes()
