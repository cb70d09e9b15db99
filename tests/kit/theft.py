"""The theft test's parts: the kit's callables (walked with only the kit importable), the exercises they could be
submitted as (by the number of positional arguments), and the screen that grades each pair in the sandbox."""

import concurrent.futures
import inspect
import json
import os
import select
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.checks import TOPICS
from autograder.commands.check import exec_source
from autograder.sandbox import bubblewrap as sandbox
from autograder.sandbox.kit_tree import kit_tree

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MARK = "@@theft@@ "
ENDED = "ended the process"
STARTUP_S = 120   # a screen process starting (torch, the checks), or loading a topic's reference


def kit_callables():
    """``(callables, unimportable)`` from ``kit_walk.py``, run with only the kit tree and site-packages on the
    path (``-I -S``: no editable install's finder that would reach the instructor's copy)."""
    done = subprocess.run([sys.executable, "-I", "-S", str(HERE / "kit_walk.py"), kit_tree(), *site.getsitepackages()],
                          capture_output=True, text=True, cwd=tempfile.gettempdir(), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    walked = json.loads(done.stdout)
    return walked["callables"], walked["unimportable"]


def _arity(obj):
    schema = getattr(obj, "schema", None)   # a TorchScript function
    if schema is not None:
        count = len(schema.arguments)
        return [count, count]
    parameters = inspect.signature(obj).parameters.values()
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in parameters)
    return [len([p for p in positional if p.default is p.empty]), None if varargs else len(positional)]


def exercises():
    """``{(topic, name): [fewest, most] positional arguments}`` of every graded object, from the reference."""
    from autograder.checks import items_of
    found = {}
    for topic in TOPICS:
        path = REPO / "solutions" / f"{topic}.py"
        namespace = exec_source(path.read_text(encoding="utf-8"), str(path), f"solutions.{topic}")
        for item in items_of(topic):
            for name in item.targets:
                found[(topic, name)] = _arity(namespace[name])
    return found


def fits(candidate, exercise):
    """Whether some number of positional arguments suits both (``None``: any number; no signature: any)."""
    if candidate is None:
        return True
    low = max(candidate[0], exercise[0])
    high = min(x for x in (candidate[1], exercise[1], 10 ** 6) if x is not None)
    return low <= high


def pairs(callables, exercise_arities):
    return [[topic, name, c["module"], c["name"]] for (topic, name), arity in sorted(exercise_arities.items())
            for c in callables if fits(c["arity"], arity)]


def screen(pairs, indices, *, seed, per_pair_s, total_s, processes=2):
    """``{i: verdict}`` for the pairs numbered ``indices``, graded in ``processes`` sandboxes side by side (each takes
    a contiguous share: pairs of one topic share its reference). A pair that runs past ``per_pair_s`` or ends its
    process is ``{"failed": None, "undecided": why}``, and a fresh process goes on with the next."""
    deadline, verdicts = time.monotonic() + total_s, {}
    bounds = [len(indices) * k // processes for k in range(processes + 1)]
    shares = [list(indices[bounds[k]:bounds[k + 1]]) for k in range(processes)]
    with concurrent.futures.ThreadPoolExecutor(processes) as pool:
        started = [pool.submit(_screen_share, pairs, order, seed, per_pair_s, deadline) for order in shares if order]
        for share in started:
            verdicts.update(share.result())
    return verdicts


def _screen_share(pairs, order, seed, per_pair_s, deadline):
    verdicts, position = {}, 0
    with tempfile.TemporaryDirectory(prefix="theft-screen-") as scratch:
        job = Path(scratch) / "job.json"
        readable = [str(REPO / "autograder"), str(REPO / "solutions"), str(HERE / "theft_screen.py")]
        while position < len(order):
            job.write_text(json.dumps({"solutions": str(REPO / "solutions"), "seed": seed, "pairs": pairs,
                                       "order": order, "start": order[position]}))
            os.chmod(job, 0o644)
            env = dict(sandbox.default_env(scratch), PYTHONPATH=str(REPO))   # the instructor's package: the checks
            proc = sandbox.start([sys.executable, str(HERE / "theft_screen.py"), str(job)], scratch=scratch,
                                 readable=readable, env=env, limits=sandbox.default_limits())
            proc.stdin.close()   # a candidate that reads stdin reads nothing
            try:
                position = _read(proc, verdicts, order, position, per_pair_s, deadline)
            finally:
                sandbox.stop(proc)
            assert time.monotonic() < deadline, f"the screen ran out of time ({position} of {len(order)} pairs done)"
    return verdicts


def _read(proc, verdicts, order, position, per_pair_s, deadline):
    """Read verdicts until the process ends or a pair runs too long; return the position of the next pair."""
    buffer, current, since, following = b"", None, time.monotonic(), position
    where = {index: k for k, index in enumerate(order)}
    while True:
        allowed = per_pair_s if current is not None else STARTUP_S   # between pairs: importing torch, a reference
        limit = min(since + allowed, deadline) - time.monotonic()
        ready, _, _ = select.select([proc.stdout], [], [], max(limit, 0))
        chunk = os.read(proc.stdout.fileno(), 1 << 16) if ready else None
        if not chunk:   # the process ended, or a pair ran past its time
            if current is None:
                assert following > position, f"the screen process graded nothing from pair {order[position]} " + (
                    "(it ended)" if chunk == b"" else f"(no answer in {STARTUP_S} s)")
                return following
            why = ENDED if chunk == b"" else f"ran past {per_pair_s} s"
            verdicts[current] = {"i": current, "failed": None, "undecided": why}
            return where[current] + 1
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            text = line.decode(errors="replace")
            if not text.startswith(MARK):
                continue
            message = json.loads(text[len(MARK):])
            if "start" in message:
                current, since = message["start"], time.monotonic()
            else:
                verdicts[message["i"]] = message
                current, following, since = None, where[message["i"]] + 1, time.monotonic()
