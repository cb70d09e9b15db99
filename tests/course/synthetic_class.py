"""A synthetic class made from the course's own code, for the similarity calibration and the after-grading pages.

Independent submissions (written apart from one another): the reference (``solutions/<topic>.py``), the second
solution (``tests/alternatives/<topic>.py``) and the mutants' students: student ``mutant-j`` hands in the j-th
distinct mistake of each exercise (``tests/mutants/<topic>.py``), as their own functions, and leaves an exercise
out when it has fewer than j + 1 mistakes. Copied submissions: three disguised copies of every independent one
(``tests/disguise.py``: levels 1, 2 and 3).
"""

import functools
import importlib
import inspect
import textwrap

from tests.course.disguise import disguise
from tests.proving import ROOT


def _source_of(obj):
    """The source a student would have written for a mutant's replacement object."""
    if inspect.ismethod(obj):                 # Softplus.apply: the class is what was written
        obj = obj.__self__
    obj = getattr(obj, "__wrapped__", obj)
    if type(obj).__name__ == "ScriptFunction":
        obj = obj._torchdynamo_inline if hasattr(obj, "_torchdynamo_inline") else None
        if obj is None:
            return None
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return None


@functools.cache
def independent(topic):
    """``{name: source}``: the reference, the second solution and the mutants' students of ``topic``."""
    found = {"reference": (ROOT / "solutions" / f"{topic}.py").read_text(encoding="utf-8"),
             "alternative": (ROOT / "tests" / "alternatives" / f"{topic}.py").read_text(encoding="utf-8")}
    mutants = importlib.import_module(f"tests.mutants.{topic}").MUTANTS
    per_target = {}
    for replacements, _ in mutants.values():
        for target, obj in replacements.items():
            source = _source_of(obj)
            if source and source not in per_target.setdefault(target, []):
                per_target[target].append(source)
    for j in range(max(len(v) for v in per_target.values())):
        parts = [sources[j] for sources in per_target.values() if j < len(sources)]
        found[f"mutant-{j}"] = "import torch\n\n\n" + "\n\n".join(parts)
    return found


@functools.cache
def copies(topic):
    """``{name: (source, the independent submission it copies)}``: three disguises of each."""
    return {f"{name}-copy{level}": (disguise(source, level=level, seed=f"{topic}-{name}"), name)
            for name, source in independent(topic).items() for level in (1, 2, 3)}


def origin(name):
    """The independent submission a name of this class derives from (itself for an independent one)."""
    return name.rsplit("-copy", 1)[0]
