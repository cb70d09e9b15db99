"""The theft screen, run as a script in the grading sandbox (``python theft_screen.py JOB.json``): each kit callable
submitted as an exercise's answer, graded in this process (checks and candidate alike) item by item, until an item
fails. Prints a JSON line ``{"start": i}`` before pair ``i`` and ``{"i": i, "failed": item or null, ...}`` after, so
that the driver can stop a pair that hangs or kills the process and go on with the next.

JOB.json: ``{"solutions": DIR, "seed": N, "pairs": [[topic, exercise, module, name], ...], "order": [i, ...],
"start": i}``: the pairs numbered in ``order``, from ``start`` on.
"""

import importlib
import json
import sys
import time

import torch

from autograder.checks import items_of
from autograder.commands.check import exec_source
from autograder.engine.results import PASSED, grade_item

MARK = "@@theft@@ "   # starts the lines meant for the driver (a candidate may print anything)
SLOW_LAST = ("speed",)   # items with a clock run after the others: a candidate has nearly always failed before


def ordered_items(topic, exercise):
    items = [item for item in items_of(topic) if exercise in item.targets]
    return sorted(items, key=lambda item: any(word in item.id for word in SLOW_LAST))


def main(job_path):
    with open(job_path) as handle:
        job = json.load(handle)
    references = {}
    out = sys.__stdout__
    for i in job["order"][job["order"].index(job["start"]):]:
        topic, exercise, module, name = job["pairs"][i]
        if topic not in references:   # before the pair's clock starts
            path = f"{job['solutions']}/{topic}.py"
            references[topic] = exec_source(open(path).read(), path, f"solutions.{topic}")
        try:
            importlib.import_module(module)   # before the clock too: nbgrader, say, takes seconds to import
        except BaseException:  # noqa: BLE001 - reported below, on the clock
            pass
        print(MARK + json.dumps({"start": i}), file=out, flush=True)
        verdict, started = {"i": i, "failed": None, "message": ""}, time.perf_counter()
        try:
            candidate = getattr(importlib.import_module(module), name)
            namespace = dict(references[topic], **{exercise: candidate})
            for item in ordered_items(topic, exercise):
                torch.manual_seed(0)
                result = grade_item(item, namespace, seed=job["seed"])
                if result.status != PASSED:
                    verdict.update(failed=item.id, message=result.message[:300])
                    break
        except BaseException as error:  # noqa: BLE001 - a candidate may raise anything, SystemExit too
            verdict.update(failed="(raised)", message=f"{type(error).__name__}: {error}"[:300])
        verdict["seconds"] = round(time.perf_counter() - started, 3)
        print(MARK + json.dumps(verdict), file=out, flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
