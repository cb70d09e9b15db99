"""What the ranks sent on the sandbox's loopback during a call, judged against what a correct call needs.

The grader reads the counters of the worker's own network namespace before and after the call
(``autograder/sandbox/loopback.py``): the ranks' gloo traffic all goes over ``lo``, and no process in the namespace
can lower those counters. So this reading can cost a point (more traffic than the correct code needs: gradients
all-reduced on every micro-batch, parameters all-reduced too) and, unlike the all-reduce counts measured in the
student's process, it earns the point where the counts could be forged.

Calibration (:data:`MEASURED`, 2026-11-28, 2-core x86_64, torch 2.13.0 CPU, gloo, 2 ranks, the plans of these
items, 20 runs of each answer): with ``g`` the bytes of the gradients the ranks average, a correct step sent 1.9 to
2.5 ``g`` (a ring all-reduce sends ``g`` each way; the reference, a second solution with one flat buffer, one
all-reduce per parameter, and a loss all-reduced each step for logging), the mistakes 4.4 ``g`` (the parameters
all-reduced as well) and 6.1 ``g`` (``no_sync`` around the backward only: all-reduced on each of 3 micro-batches).
The bound allows ``STEP_BYTES_PER_GRADIENT_BYTE`` = 3.2 ``g`` a step, 3 ``g`` for DDP's start and ``SETUP_BYTES``; a
reading under one ``g`` a step means the gradients did not cross the loopback during the call (another transport,
or answers made before it), which an instructor reviews. The plans make ``g`` at least 16 KiB
(``problems.WIDE_HIDDEN``), so that the gradients, not the packets' headers, make most of the traffic.
"""

from autograder.checks.distributed import problems
from autograder.errors import CheckFailure, UnderReview
from autograder.sandbox.loopback import sent_by_worker_of
from autograder.seam.handle import unwrapped

# What the calibration measured (see above): bytes per optimizer step in units of g, and the start of a run
MEASURED = {"correct_step": (1.9, 2.5), "params_too_step": 4.4, "backward_only_step": 6.1,
            "setup_kib": (6.4, 7.3), "ddp_start": 2.2}
SETUP_BYTES = 16 * 1024             # forming the group and its barriers: measured 6.4 to 7.3 KiB
DDP_START_PER_GRADIENT_BYTE = 3.0   # DistributedDataParallel's start (parameters broadcast, shapes checked): 2.2 g
STEP_BYTES_PER_GRADIENT_BYTE = 3.2  # one optimizer step: correct 1.9 to 2.5 g; the mistakes 4.4 g and more
LEAST_STEP_PER_GRADIENT_BYTE = 1.0  # below this, the gradients were not exchanged on the loopback during the call


def gradient_bytes(plan):
    """The bytes of the gradients the ranks average in one step: every parameter that gets a ``.grad``."""
    model, _, _ = problems.build(plan)
    return sum(p.numel() * p.element_size() for name, p in model.named_parameters()
               if p.requires_grad and not name.endswith("unused"))


def bounds(plan, *, ddp):
    """``(least, most)`` bytes a correct call on ``plan`` sends on the loopback."""
    g = gradient_bytes(plan)
    steps = problems.steps_per_epoch(plan) * plan["epochs"]
    least = steps * LEAST_STEP_PER_GRADIENT_BYTE * g
    most = SETUP_BYTES + (DDP_START_PER_GRADIENT_BYTE * g if ddp else 0) + steps * STEP_BYTES_PER_GRADIENT_BYTE * g
    return int(least), int(most)


class Reading:
    """The loopback counters around one call of the student's function, read by the grader (``None`` inside: the
    worker shares the grader's network, or lives in this process)."""

    def __init__(self, fn):
        self._fn = unwrapped(fn)      # the object a check's handle holds: its worker is the one read
        self.sent = None

    def __enter__(self):
        self._before = sent_by_worker_of(self._fn)
        return self

    def __exit__(self, *exc):
        after = sent_by_worker_of(self._fn) if self._before is not None else None
        self.sent = None if after is None else after - self._before


def _kib(n):
    return f"{n / 1024:.0f} KiB"


def expect_traffic(check, plan, reading, *, ddp, what, case, hint):
    """The ranks sent on the loopback what a correct ``what`` needs (:func:`bounds`); nothing to judge where the
    grader could not read it (``reading.sent`` is ``None``)."""
    __tracebackhide__ = True
    if reading.sent is None:
        return
    least, most = bounds(plan, ddp=ddp)
    got = reading.sent.bytes
    steps = problems.steps_per_epoch(plan) * plan["epochs"]
    g = gradient_bytes(plan)
    measurements = {"loopback_bytes": got, "allowed_bytes": most, "least_bytes": least, "gradient_bytes": g}
    if got > most:
        raise CheckFailure(check, f"during {what}, the ranks sent {_kib(got)} to each other (counted by the grader "
                                  f"on the sandbox's network, outside your process); averaging the {_kib(g)} of "
                                  f"gradients once per optimizer step ({steps} steps) needs at most {_kib(most)}: "
                                  f"about {got / (g * steps):.1f} times the gradients' size per step, where one "
                                  f"all-reduce of them sends about 2 times.\nCase: {case}",
                           hint=hint, measurements=measurements, kind="failed: more traffic than averaging needs")
    if got < least:
        raise UnderReview(check, f"during {what}, the ranks sent {_kib(got)} on the sandbox's network, less than "
                                 f"the {_kib(least)} that exchanging the {_kib(g)} of gradients in {steps} steps "
                                 f"needs: an instructor will look at how the ranks communicated.\nCase: {case}",
                          measurements=measurements)
