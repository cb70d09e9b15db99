"""Grade a file against a topic's checks from a plain script, without nbgrader or Jupyter.

    python -m autograder check stability my_solutions.py
    python -m autograder check amp release/amp/amp.ipynb --json

For a notebook, only its solution cells run (the exercise code), not the examples.
This is how the GPU checks run on a machine that has torch but no nbgrader.
"""

import json
import linecache
import sys
from pathlib import Path

from .course import notebooks
from .results import run_checks


def exec_source(source, filename, name="submission"):
    """Run ``source`` as a module named ``name`` and return its namespace.

    The text is registered in ``linecache`` under ``filename`` first: ``torch.jit.script``
    and ``inspect.getsource`` read a function's source from there, and code run from a
    string (a notebook's cells) has no file to read it from.
    """
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace = {"__name__": name, "__file__": filename}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the user's own code
    return namespace


def load_namespace(path):
    path = Path(path)
    if path.suffix == ".ipynb":
        nb = notebooks.read(path)
        source = "\n\n".join(notebooks.source_text(c) for c in nb["cells"]
                             if c.get("cell_type") == "code" and notebooks.is_solution(c))
        return exec_source(source, f"<solution cells of {path}>")
    return exec_source(path.read_text(encoding="utf-8"), str(path))


def main(topic, path, as_json=False):
    results = run_checks(topic, load_namespace(path))
    if as_json:
        print(json.dumps([r.as_dict() for r in results], indent=2, default=str))
    else:
        for r in results:
            print(f"{'PASS' if r.passed else 'FAIL'}  {r.check}  ({r.seconds:.1f} s)")
            if r.message:
                print("      " + r.message.replace("\n", "\n      "))
        print(f"{sum(r.passed for r in results)} passed, {sum(not r.passed for r in results)} failed")
    sys.stdout.flush()
    return 0 if all(r.passed for r in results) else 1
