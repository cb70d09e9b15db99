"""Effective PyTorch Lab: the autograder's checks and the course's grading tools.

``autograder.checks`` needs only torch, numpy and OpenCV; ``autograder.course``
(release, demo, batch grading, export) needs nbgrader as well.
"""

import importlib
import importlib.util
import sys
import types

__version__ = "0.1.0"


def _defer_rfc3987_syntax():
    """Make ``rfc3987_syntax`` load when jsonschema first checks an IRI, not when jsonschema is imported.

    jsonschema imports it eagerly (python-jsonschema/jsonschema#1428) and it compiles about 35 Lark parsers at import:
    1.5 to 2.5 s of every process that imports nbformat (every nbgrader command, ``python -m autograder`` commands
    that reach nbgrader, Gradescope's ``run_autograder``) on the 2-core machine here, for a format ("iri") that no
    notebook or Jupyter schema uses. In its place goes a module whose ``is_valid_syntax`` imports the real one on
    its first call and hands over: the validation is unchanged, only later.
    """
    name = "rfc3987_syntax"
    if name in sys.modules or importlib.util.find_spec(name) is None:
        return
    stand_in = types.ModuleType(name, "rfc3987_syntax, loaded on first use (autograder/__init__.py)")

    def is_valid_syntax(term, value):
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]
        real = importlib.import_module(name)
        stand_in.is_valid_syntax = real.is_valid_syntax
        return real.is_valid_syntax(term, value)

    stand_in.is_valid_syntax = is_valid_syntax
    sys.modules[name] = stand_in


_defer_rfc3987_syntax()
