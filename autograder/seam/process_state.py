"""The process-wide state of torch that a lesson's mistake can change, put back before each graded call.

A function that switches autograd off with ``torch.set_grad_enabled(False)`` (called, not used as a ``with`` block),
sets the default dtype, turns on deterministic algorithms or changes the number of threads changes it for every
call after it: graded alone, each later item would fail for that one mistake and blame its own function. So every
call of a student function is made on the grader's state and must leave it as it found it
(``student.call_student``; in a grading worker, ``trusted.worker`` puts its own defaults back before each request):
where it does not, the state is put back, and the item that made the call fails with what changed, so that only
the function that did it loses points.

The default generator's state is not compared: drawing random numbers advances it, which is no mistake; the checks
whose results depend on it seed it themselves (``grade_item``, and the probes that draw dropout masks).
"""

import torch

# what a student reads for each part of the state: (what it is, how it was left, how to fix it)
_WORDS = {
    "grad_enabled": ("autograd", lambda on: "switched on" if on else "switched off",
                     "Use `with torch.no_grad():` or `with torch.inference_mode():` around the code that needs it: "
                     "the block puts the mode back when it ends (`torch.set_grad_enabled(False)` called on its own "
                     "switches autograd off for every later call)."),
    "inference_mode": ("inference mode", lambda on: "switched on" if on else "switched off",
                       "Use `with torch.inference_mode():` as a block, so that it ends with the block."),
    "default_dtype": ("the default dtype", lambda dtype: f"set to {dtype}",
                      "Give the dtype where you create a tensor (`torch.zeros(..., dtype=...)`, `x.to(dtype)`) "
                      "instead of changing the default for the whole process."),
    "deterministic": ("deterministic algorithms", lambda on: "switched on" if on else "switched off",
                      "Leave `torch.use_deterministic_algorithms` to the caller: it changes every later call."),
    "threads": ("the number of threads", lambda n: f"set to {n}",
                "Leave `torch.set_num_threads` to the caller: it changes every later call."),
}


_GUARDS = []     # inference-mode guards entered by restore(), kept alive: dropping one would undo it


def current():
    """The state now: ``{part: value}`` for every part of :data:`_WORDS`."""
    return {"grad_enabled": torch.is_grad_enabled(), "inference_mode": torch.is_inference_mode_enabled(),
            "default_dtype": torch.get_default_dtype(), "deterministic": torch.are_deterministic_algorithms_enabled(),
            "threads": torch.get_num_threads()}


def restore(state):
    """Put the process back to ``state`` (a :func:`current`); returns the parts that differed, in a fixed order."""
    now = current()
    changed = [part for part in _WORDS if now[part] != state[part]]
    if "inference_mode" in changed:
        # an inference_mode() entered and never left: only its own guard can leave it, so a guard of the grader's
        # state is entered over it and kept for the rest of the process
        _GUARDS.append(torch._C._InferenceMode(state["inference_mode"]))
    if "grad_enabled" in changed:
        torch.set_grad_enabled(state["grad_enabled"])
    if "default_dtype" in changed:
        torch.set_default_dtype(state["default_dtype"])
    if "deterministic" in changed:
        torch.use_deterministic_algorithms(state["deterministic"])
    if "threads" in changed:
        torch.set_num_threads(state["threads"])
    return changed


def described(changes, before, after):
    """``(what changed, in words; the hint)`` for the parts ``changes`` (``before``/``after``: :func:`current`)."""
    parts, hints = [], []
    if "inference_mode" in changes and after["inference_mode"]:
        changes = [part for part in changes if part != "grad_enabled"]     # inference mode switches autograd off
    for part in changes:
        what, how, hint = _WORDS[part]
        parts.append(f"{what} {how(after[part])} (it was {how(before[part]).replace('set to ', '')})")
        hints.append(hint)
    return "; ".join(parts), " ".join(dict.fromkeys(hints))


def left_changed(name, changes, before, after):
    """The message of a call that left the process's state changed."""
    what, hint = described(changes, before, after)
    return (f"{name} left the process's state changed for every later call: {what}. Grading put it back before "
            "the next call, and only this function's items are charged for it.", hint)


class StateLeftChanged(Exception):
    """A call in a grading worker left the worker's state changed (the worker put it back): raised on the grader's
    side by the call's proxy, turned into the item's failure by ``call_student``."""

    def __init__(self, name, message, hint):
        super().__init__(message)
        self.name, self.message, self.hint = name, message, hint
