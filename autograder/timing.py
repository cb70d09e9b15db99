"""The speed timer: a speedup measured as a ratio, side by side, in one process.

Baseline and candidate are timed interleaved (baseline sample, candidate sample,
baseline sample, ...), after warm-up, each sample long enough to rise above the
clock's resolution; the medians are compared. On CUDA every sample is bracketed by
``torch.cuda.synchronize()``, so queued kernels are counted. A miss is measured
again a bounded number of times before the check fails, and the message carries
every ratio measured.
"""

import contextlib
import math
import statistics
import time
from dataclasses import asdict, dataclass, field

import torch

from .errors import CheckFailure
from .settings import settings
from .student import _BoundedText, _time_limit, _Timeout, call_student


@dataclass
class SpeedResult:
    """One speed measurement (all times in seconds per call)."""

    name: str                 # the threshold's name in the settings
    device: str               # "cpu" or "cuda"
    threshold: float | None   # the speedup required on this device, None if not graded here
    ratios: list = field(default_factory=list)   # baseline median / candidate median, per attempt
    candidate_s: float = math.nan
    baseline_s: float = math.nan
    threads: int = 0          # torch.get_num_threads() during the measurement
    note: str = ""

    @property
    def ratio(self):
        return max(self.ratios) if self.ratios else math.nan

    @property
    def passed(self):
        return self.threshold is not None and bool(self.ratios) and self.ratio >= self.threshold

    def as_dict(self):
        data = asdict(self)
        data["ratio"] = self.ratio
        data["passed"] = self.passed
        return data


def _sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def _one_sample(fn, args, number, device):
    _sync(device)
    start = time.perf_counter()
    for _ in range(number):
        fn(*args)
    _sync(device)
    return (time.perf_counter() - start) / number


def _calls_per_sample(fn, args, device, min_sample_s):
    once = _one_sample(fn, args, 1, device)
    return max(1, min(10_000, math.ceil(min_sample_s / max(once, 1e-9))))


def measure_speedup(candidate, baseline, args, *, device="cpu", repeats=None, warmup=None, min_sample_s=None):
    """Median baseline time / median candidate time, interleaved; returns ``(ratio, cand_s, base_s)``.

    No check here: callers have already verified that ``candidate`` returns.
    """
    repeats = repeats or settings.speed.repeats
    warmup = settings.speed.warmup if warmup is None else warmup
    min_sample_s = min_sample_s or settings.speed.min_sample_s
    for _ in range(warmup):
        baseline(*args)
        candidate(*args)
    n_base = _calls_per_sample(baseline, args, device, min_sample_s)
    n_cand = _calls_per_sample(candidate, args, device, min_sample_s)
    base, cand = [], []
    for _ in range(repeats):
        base.append(_one_sample(baseline, args, n_base, device))
        cand.append(_one_sample(candidate, args, n_cand, device))
    base_s, cand_s = statistics.median(base), statistics.median(cand)
    return base_s / cand_s, cand_s, base_s


def device_of(args):
    for a in args:
        if isinstance(a, torch.Tensor):
            return a.device.type
    return "cpu"


def expect_speedup(check, name, candidate, baseline, args, *, what=None, hint=None, device=None):
    """``candidate`` must run at least ``settings.speed.thresholds[name]`` times faster than ``baseline``.

    Returns the :class:`SpeedResult`. On a device where the threshold is ``None``
    (speed not graded there) it returns a result with a note, or fails when the
    instructor set ``speed.require_gpu``.
    """
    __tracebackhide__ = True
    device = device or device_of(args)
    spec = settings.speed.thresholds[name]
    result = SpeedResult(name=name, device=device, threshold=spec.for_device(device), threads=torch.get_num_threads())
    if result.threshold is None:
        result.note = (f"the speed of {what or name} is graded on CUDA only, and this machine has no GPU; "
                       "run this notebook on a machine with an NVIDIA GPU to measure it.")
        if settings.speed.require_gpu:
            raise CheckFailure(check, result.note + " (The instructor requires a GPU for this check.)")
        print(f"[{check}] note: {result.note}")
        return result
    call_student(check, candidate, *args, what=what)   # errors get the student-facing message
    sink = _BoundedText(settings.max_output_chars)
    budget = settings.call_timeout_s * (1 + settings.speed.retries)
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), _time_limit(budget):
            for _ in range(1 + settings.speed.retries):
                ratio, result.candidate_s, result.baseline_s = measure_speedup(candidate, baseline, args, device=device)
                result.ratios.append(ratio)
                if result.passed:
                    break
    except _Timeout:
        raise CheckFailure(check, f"timing {what or name} took longer than {budget:g} s.") from None
    except Exception as error:  # noqa: BLE001
        raise CheckFailure(check, f"{what or name} raised {type(error).__name__} while being timed: {error}") from None
    if not result.passed:
        shown = ", ".join(f"{r:.1f}x" for r in result.ratios)
        raise CheckFailure(check, f"{what or name} is not fast enough on {device}: it ran {shown} as fast as the "
                                  f"baseline in {len(result.ratios)} measurement(s) (median of "
                                  f"{settings.speed.repeats} samples each; yours {result.candidate_s * 1e6:.1f} us, "
                                  f"baseline {result.baseline_s * 1e6:.1f} us per call); at least "
                                  f"{result.threshold:g}x is required.",
                           hint=hint, **result.as_dict())
    return result
