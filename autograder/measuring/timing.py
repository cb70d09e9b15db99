"""The speed timer: a speedup measured as a ratio, side by side, in one process.

Baseline and candidate are timed interleaved (baseline sample, candidate sample,
baseline sample, ...), after warm-up, each sample long enough to rise above the
clock's resolution; the medians are compared. On CUDA every sample is bracketed by
``torch.cuda.synchronize(device)``, so the kernels a sample queued are counted in
it (and the host's launch overhead too, which is what a Python loop costs). On the
CPU the measurement runs with ``settings.speed.cpu_threads`` threads (restored
after): on a small shared machine, OpenMP threads that wait for a busy core make a
vectorized call's time jump by orders of magnitude, while one thread is steady.
A miss is measured again a bounded number of times before the check fails, and the
message carries every ratio measured.

Under trusted grading (:func:`measure_remote_speedup`) the student's function runs in their worker and the baseline
in a clean one; every timed request carries the seeds its inputs are made from (``autograder.seam.timed_inputs``), made
in the worker once the request has arrived: the grader's clock starts when the request leaves it. Every round's
results are checked against the baseline's on the same inputs. On CUDA each request starts with a flushed L2
cache, the device's name and clocks go into the measurements (:func:`device_record`), and a ratio above the
device's ceiling (``settings.speed.ceilings``) puts the item under review (:func:`expect_plausible`).

Where the threshold says so (``of_reference``: CUDA by default), it is calibrated in the same run: the grader's
own reference (``autograder/oracles/speed.py``; under trusted grading in the clean worker) is timed against the
same baseline, interleaved with the candidate, and the candidate must reach a stated fraction of its speedup.

On CUDA, :func:`expect_no_per_row_sync` counts the host synchronisations a function
makes (``torch.cuda.set_sync_debug_mode("warn")``, the previous mode restored after)
and fails when their number grows with the batch: a loop that turns a GPU value into
a Python number once per row waits for the GPU once per row.
"""

import contextlib
import hashlib
import importlib
import inspect
import itertools
import math
import random
import statistics
import time
import warnings
from dataclasses import asdict, dataclass, field

import torch

from autograder.errors import CheckFailure, UnderReview
from autograder.seam import remote, timed_inputs
from autograder.seam.handle import handle, unwrapped
from autograder.seam.student import BoundedText, CallTimeout, call_student, describe, time_limit
from autograder.settings import settings
from autograder.spec import gpu_unavailable, run_seed


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
    hardware: dict = field(default_factory=dict)   # on CUDA: the device's name and clocks, as the grader reads them
    # calibrated in the same run (settings.speed.thresholds[name].of_reference): the grader's reference timed against
    # the same baseline, interleaved with the student's runs; the speedup required of each attempt is
    # max(the device's fixed threshold, fraction x the reference's ratio in that attempt)
    reference: str = ""                                   # the reference's name in autograder.oracles ("" if none)
    fraction: float | None = None                         # the share of the reference's speedup required
    reference_ratios: list = field(default_factory=list)  # the reference's speedup, per attempt
    required: list = field(default_factory=list)          # the speedup required, per attempt

    @property
    def ratio(self):
        return max(self.ratios) if self.ratios else math.nan

    @property
    def passed(self):
        if self.required:
            return any(r >= need for r, need in zip(self.ratios, self.required))
        return self.threshold is not None and bool(self.ratios) and self.ratio >= self.threshold

    def __repr__(self):   # what a notebook shows under a speed test cell
        if self.threshold is None:
            return f"SpeedResult({self.name} on {self.device}: not graded here)"
        if self.reference_ratios:
            return (f"SpeedResult({self.name} on {self.device}: {self.ratio:.1f}x the baseline, the grader's "
                    f"reference {max(self.reference_ratios):.1f}x, {self.threshold:.1f}x required)")
        return (f"SpeedResult({self.name} on {self.device}: {self.ratio:.1f}x the baseline, "
                f"{self.threshold:g}x required)")

    def as_dict(self):
        data = asdict(self)
        data["ratio"] = self.ratio
        data["passed"] = self.passed
        return data


def device_of(args):
    """The device of the first tensor among ``args`` (a ``torch.device``; CPU when there is none)."""
    for a in args:
        if isinstance(a, torch.Tensor):
            return a.device
    return torch.device("cpu")


def _sync(device):
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _threads_for(device):
    wanted = getattr(settings.speed, "cpu_threads", None)
    return wanted if torch.device(device).type == "cpu" and wanted else torch.get_num_threads()


@contextlib.contextmanager
def pinned_threads(device):
    """On the CPU, run the block with ``settings.speed.cpu_threads`` threads (``None``: leave as is)."""
    wanted = getattr(settings.speed, "cpu_threads", None)
    if torch.device(device).type != "cpu" or not wanted:
        yield torch.get_num_threads()
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(wanted)
    try:
        yield wanted
    finally:
        torch.set_num_threads(previous)


def _one_sample(fn, args, number, device):
    timed_inputs.flush_l2(device, _l2_flush_bytes(device))    # on CUDA each sample starts with a cold L2 cache
    _sync(device)
    start = time.perf_counter()
    for _ in range(number):
        fn(*args)
    _sync(device)
    return (time.perf_counter() - start) / number


def _calls_per_sample(fn, args, device, min_sample_s):
    once = min(_one_sample(fn, args, 1, device) for _ in range(3))
    return max(1, min(10_000, math.ceil(min_sample_s / max(once, 1e-9))))


def measure_speedup(candidate, baseline, args, *, device=None, repeats=None, warmup=None, min_sample_s=None):
    """Median baseline time / median candidate time, interleaved; returns ``(ratio, cand_s, base_s)``.

    ``device`` defaults to the device of the first tensor in ``args``. No check
    here: callers have already verified that ``candidate`` returns.
    """
    base_s, cand_s = _interleaved((baseline, candidate), args, device, repeats, warmup, min_sample_s)
    return base_s / max(cand_s, 1e-12), cand_s, base_s


def measure_with_reference(candidate, baseline, reference, args, *, device=None, repeats=None, warmup=None,
                           min_sample_s=None):
    """As :func:`measure_speedup`, with the grader's ``reference`` timed in the same rounds against the same
    baseline; returns ``(ratio, cand_s, base_s, reference_ratio)``."""
    base_s, cand_s, ref_s = _interleaved((baseline, candidate, reference), args, device, repeats, warmup,
                                         min_sample_s)
    return base_s / max(cand_s, 1e-12), cand_s, base_s, base_s / max(ref_s, 1e-12)


def _interleaved(functions, args, device, repeats, warmup, min_sample_s):
    """The median time per call of each of ``functions`` on ``args``: warmed up, then sampled in turn (one sample
    of each per round)."""
    device = torch.device(device) if device is not None else device_of(args)
    repeats = repeats or settings.speed.repeats
    warmup = settings.speed.warmup if warmup is None else warmup
    min_sample_s = min_sample_s or settings.speed.min_sample_s
    with pinned_threads(device):
        for _ in range(warmup):
            for fn in functions:
                fn(*args)
        counts = [_calls_per_sample(fn, args, device, min_sample_s) for fn in functions]
        samples = [[] for _ in functions]
        for _ in range(repeats):
            for fn, count, times in zip(functions, counts, samples):
                times.append(_one_sample(fn, args, count, device))
    return [statistics.median(times) for times in samples]


_REQUESTS = itertools.count(1)   # timed requests of this process: no two draw the same seeds


def draw_seeds(count):
    """``count`` seeds of timed inputs (:func:`autograder.seam.timed_inputs.draw_input`), drawn from the grading run's
    hidden seed and this process's count of timed requests: different for every request, and nothing a student's
    process saw before tells them."""
    digest = hashlib.sha256(f"{run_seed()}:timed:{next(_REQUESTS)}".encode()).digest()
    gen = random.Random(digest)
    return [gen.getrandbits(timed_inputs.SEED_BITS) for _ in range(count)]


REMOTE_SAMPLE_CALLS = (8, 256)   # calls per timed request to a worker: at least (but 1 for a slow call), at most
DRAWN_BYTES = 64 << 20           # the inputs of one timed request together at most (fewer calls for big inputs)
CHECKED_PER_ROUND = 3            # results of each timed request of the student's that the baseline computes again


def measure_remote_speedup(check, candidate, baseline, args, *, device, what, reference=None, seeded=(),
                           judge=None):
    """As :func:`measure_speedup`, for a candidate in a student's worker: the baseline runs in a clean worker
    started the same way, both timed here around the request, interleaved, so both pay the same round trip.
    Returns ``(ratio, cand_s, base_s)``, and the reference's ratio fourth when ``reference`` (a function in the
    clean worker: :func:`reference_in`) is timed in the same rounds against the same baseline.

    The clock starts when the inputs leave the grader: every timed request carries a description of what an
    input looks like (``timed_inputs.spec_of(args)``), the seed of this measurement's pools and one seed per call
    (drawn from the run's hidden seed, :func:`draw_seeds`), and the worker makes each input (a fresh choice of rows
    of the pools) once the request has arrived, inside the grader's clock: nothing the student's process does
    before a request can work on its inputs. The baseline and the
    reference draw theirs the same way. In every round, the baseline's request takes up to
    :data:`CHECKED_PER_ROUND` of the student's seeds (at positions the grader draws) among its own, and their
    results must agree; every result the student's request sends back must be a tensor like the baseline's. Each
    side makes as many calls per request as its own warm-up says (:func:`_calls_per_request`): a slow loop one.

    ``seeded``: positions of ``args`` where each call gets its own seed (``timed_inputs.spec_of``). ``judge(check,
    [(call, result, the baseline's on the same input)], what)``, where given, replaces the default comparison and
    judges **every** result of the student's: the ones the baseline's timed request did not compute again are
    computed by the baseline in an untimed request to the clean worker."""
    __tracebackhide__ = True
    session = candidate._session
    clean = session.twin()
    target = remote.by_name(baseline)
    threads = _threads_for(device)
    timeout = settings.call_timeout_s
    specs = timed_inputs.spec_of(args, seeded)
    devices = sorted({s["device"] for s in specs if s.get("device", "").startswith("cuda")})
    flush = (devices, _l2_flush_bytes(device)) if devices else None
    most = max(1, DRAWN_BYTES // max(1, timed_inputs.nbytes(args)))

    pool_seed = draw_seeds(1)[0]          # this measurement's pools (timed_inputs.draw_pools), on every side

    def sample(where, fn, seeds):
        return where.timed(fn, specs, seeds, pool_seed=pool_seed, threads=threads, flush=flush, timeout=timeout)

    def calls_of(where, fn):
        """The warm-up (``settings.speed.warmup`` requests, the first of one call), and the calls per request."""
        count = 1
        for _ in range(max(1, settings.speed.warmup)):
            _, seconds = sample(where, fn, draw_seeds(count))
            count = min(most, _calls_per_request(count, seconds))
        return count

    count = calls_of(session, candidate)
    base_count = calls_of(clean, target)
    ref_count = calls_of(clean, reference) if reference is not None else 0
    base, cand, ref = [], [], []
    for _ in range(settings.speed.repeats):
        seeds = draw_seeds(count)
        got, cand_s = sample(session, candidate, seeds)
        picks = random.Random(draw_seeds(1)[0]).sample(range(count), min(count, base_count, CHECKED_PER_ROUND))
        expected, base_s = sample(clean, target, [seeds[p] for p in picks] + draw_seeds(base_count - len(picks)))
        base.append(base_s / base_count)
        cand.append(cand_s / count)
        pairs = [(p, got[p], expected[k]) for k, p in enumerate(picks)]
        if judge is None:
            _expect_same_results(check, pairs, what)
        else:
            rest = [p for p in range(count) if p not in picks]
            if rest:      # untimed: the baseline on the student's other inputs
                more, _ = sample(clean, target, [seeds[p] for p in rest])
                pairs += [(p, got[p], e) for p, e in zip(rest, more)]
            judge(check, sorted(pairs, key=lambda pair: pair[0]), what)
        _expect_like(check, got, expected[0], what)
        if reference is not None:
            ref.append(sample(clean, reference, draw_seeds(ref_count))[1] / ref_count)
    base_s, cand_s = statistics.median(base), statistics.median(cand)
    measured = (base_s / max(cand_s, 1e-12), cand_s, base_s)
    return measured + (base_s / max(statistics.median(ref), 1e-12),) if ref else measured


_DEFINED = {}   # id(clean session) -> (session, the oracle modules whose source ran in it)


def reference_function(name):
    """The grader's reference ``"<module>.<function>"`` of ``autograder.oracles``; ``None`` where there is none
    (the student kit has no oracles: the threshold is then the device's fixed one)."""
    module, _, function = str(name).partition(".")
    try:
        found = importlib.import_module(f"autograder.oracles.{module}")
    except ModuleNotFoundError:
        return None
    return getattr(found, function)


def reference_in(clean, name):
    """The reference ``name`` as a function of the clean worker ``clean``, where no student code ever runs: the
    oracle module's source is run there as a cell, once per worker (the grading sandbox shows the kit only)."""
    module, _, function = str(name).partition(".")
    session, defined = _DEFINED.get(id(clean), (None, set()))
    if session is not clean:
        session, defined = clean, set()
        _DEFINED[id(clean)] = (session, defined)
    if module not in defined:
        source = inspect.getsource(importlib.import_module(f"autograder.oracles.{module}"))
        answer = clean.request("cell", source, timeout=settings.grading.cell_timeout_s)
        error = (answer.get("ok") or {}).get("error") if "raised" not in answer else answer["raised"]
        if error:
            raise RuntimeError(f"the grader's reference {module} did not load in the clean worker: {error}")
        defined.add(module)
    answer = clean.request("lookup", function, timeout=settings.call_timeout_s)
    if "raised" in answer:
        raise RuntimeError(f"the grader's reference {name} is missing from the clean worker")
    return answer["ok"]


def _l2_flush_bytes(device):
    """Bytes to write between samples on CUDA: twice the device's L2 cache (64 MiB when it does not say); 0 on the
    CPU."""
    device = torch.device(device)
    if device.type != "cuda":
        return 0
    size = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or (32 << 20)
    return 2 * int(size)


def _calls_per_request(count, seconds):
    """Calls per timed request for a function ``count`` calls of which took ``seconds``: enough to last
    ``4 * min_sample_s``, at least ``REMOTE_SAMPLE_CALLS[0]`` (a request's own cost) unless one call alone lasts
    that long (a slow loop: one call per request, as ``measure_speedup`` does in-process), at most
    ``REMOTE_SAMPLE_CALLS[1]``."""
    low, high = REMOTE_SAMPLE_CALLS
    sample_s = 4 * settings.speed.min_sample_s
    per_call = max(seconds / count, 1e-9)
    wanted = math.ceil(sample_s / per_call)
    return min(high, wanted if per_call >= sample_s else max(low, wanted))


def _expect_like(check, got, example, what):
    """Every timed result is a tensor of the baseline's shape and dtype (the ones the baseline did not compute again
    too): a request that defers its work cannot answer with placeholders."""
    __tracebackhide__ = True
    for k, g in enumerate(got):
        if type(g) is not torch.Tensor or g.shape != example.shape or g.dtype != example.dtype:
            raise CheckFailure(check, f"while being timed, {what} returned {type(g).__name__} "
                                      f"{tuple(getattr(g, 'shape', ()))} for timed call {k + 1}, not a tensor of shape "
                                      f"{tuple(example.shape)} and dtype {example.dtype}: every timed result must be "
                                      "right too.",
                               hint="Compute the answer from the input you are given each time; do not cache it.",
                               kind="wrong value")


def _expect_same_results(check, pairs, what):
    """Each ``(position, the student's result, the baseline's on the same input)`` agrees."""
    __tracebackhide__ = True
    for k, g, e in pairs:
        ok = (type(g) is torch.Tensor and g.shape == e.shape and g.dtype == e.dtype
              and torch.allclose(g.double(), e.double(), rtol=1e-4, atol=1e-4 * (1 + float(e.abs().max()))))
        if not ok:
            raise CheckFailure(check, f"while being timed, {what} returned a wrong result (timed call {k + 1}, "
                                      "on a fresh input): every timed result must be right too.",
                               hint="Compute the answer from the input you are given each time; do not cache it.",
                               kind="wrong value")


def expect_speedup(check, name, candidate, baseline, args, *, what=None, hint=None, device=None, reference=None,
                   seeded=(), judge=None):
    """``candidate`` must run at least ``settings.speed.thresholds[name]`` times faster than ``baseline``.

    With ``reference`` (``"<module>.<function>"`` of the grader-only ``autograder.oracles``) and a fraction for
    this device in the threshold's ``of_reference``, the threshold is calibrated in the same run: the reference is
    timed against the same baseline, interleaved with the candidate (under trusted grading in the clean worker),
    and each attempt requires ``max(fixed threshold, fraction x the reference's ratio)``. Where the grader's
    reference is not installed (the student kit), the fixed threshold alone applies, and the result says so.
    ``seeded`` and ``judge``: see :func:`measure_remote_speedup` (under trusted grading).

    Returns the :class:`SpeedResult`. On a device where no threshold applies (speed not graded there) it returns a
    result with a note for a student; in an official grade the item is pending, failed or waived
    (``settings.grading.gpu_items``).
    """
    __tracebackhide__ = True
    candidate = unwrapped(candidate)      # a check's handle: timed as the bare call, without the guards of each call
    device = torch.device(device) if device is not None else device_of(args)
    spec = settings.speed.thresholds[name]
    fraction = (getattr(spec, "of_reference", None) or {}).get(device.type) if reference else None
    result = SpeedResult(name=name, device=device.type, threshold=spec.for_device(device.type),
                         threads=torch.get_num_threads(), fraction=fraction)
    if result.threshold is None and fraction is None:
        result.note = (f"the speed of {what or name} is graded on CUDA only, and this machine has no GPU; "
                       "run this notebook on a machine with an NVIDIA GPU to measure it.")
        gpu_unavailable(check, result.note)   # pending, failed or waived in an official grade (settings.grading)
        return result
    local = reference_function(reference) if fraction is not None else None
    if fraction is not None and local is None:
        result.fraction = None
        result.note = (f"the grade also asks for {fraction:g} of the grader's own reference's speedup, measured in "
                       "the same run; this installation has no reference, so only the fixed threshold is applied.")
        if result.threshold is None:
            return result
    call_student(check, candidate, *args, what=what)   # errors get the student-facing message
    result.hardware = device_record(device)
    sink = BoundedText(settings.max_output_chars)
    budget = settings.call_timeout_s * (1 + settings.speed.retries) * (2 if local else 1)
    in_worker = handle(candidate).in_worker
    if local is not None:     # the grader's own: a failure here is the grader's, never the student's
        result.reference = reference
        local = reference_in(candidate._session.twin(), reference) if in_worker else local
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), time_limit(budget):
            result.threads = _threads_for(device)
            for _ in range(1 + settings.speed.retries):
                if in_worker:     # timed as the trusted grader does
                    measured = measure_remote_speedup(check, candidate, baseline, args, device=device,
                                                      what=what or name, reference=local, seeded=seeded,
                                                      judge=judge)
                elif local is not None:
                    measured = measure_with_reference(candidate, baseline, local, args, device=device)
                else:
                    measured = measure_speedup(candidate, baseline, args, device=device)
                ratio, result.candidate_s, result.baseline_s = measured[:3]
                result.ratios.append(ratio)
                if local is not None:
                    result.reference_ratios.append(measured[3])
                    result.required.append(max(result.threshold or 0.0, fraction * measured[3]))
                if result.passed:
                    break
        if result.required:
            result.threshold = result.required[-1] if not result.passed else next(
                need for r, need in zip(result.ratios, result.required) if r >= need)
        expect_plausible(check, result, what or name)
    except CallTimeout:
        raise CheckFailure(check, f"timing {what or name} took longer than {budget:g} s.", kind="timed out") from None
    except CheckFailure:
        raise
    except Exception as error:  # noqa: BLE001
        shown = "; ".join(describe(a) for a in args)
        raise CheckFailure(check, f"{what or name} raised {type(error).__name__} while being timed on {shown}: "
                                  f"{error}", kind=f"raised: {type(error).__name__}") from None
    if not result.passed:
        shown = ", ".join(f"{r:.1f}x" for r in result.ratios)
        per = (f"median of {settings.speed.repeats} samples each, {result.threads} CPU thread(s); yours "
               f"{result.candidate_s * 1e6:.1f} us, baseline {result.baseline_s * 1e6:.1f} us per call")
        if result.reference_ratios:
            refs = ", ".join(f"{r:.1f}x" for r in result.reference_ratios)
            required = (f"the grader's own reference ran {refs} as fast as the same baseline in the same "
                        f"measurements, and at least {fraction:g} of it is required ({result.threshold:.1f}x)")
        else:
            required = f"at least {result.threshold:g}x is required"
        raise CheckFailure(check, f"{what or name} is not fast enough on {_device_name(device, result)}: it ran "
                                  f"{shown} as fast as the baseline in {len(result.ratios)} measurement(s) ({per}); "
                                  f"{required}.",
                           hint=hint, measurements=result.as_dict(), kind="too slow")
    return result


def _device_name(device, result):
    name = result.hardware.get("name")
    return f"{device.type} ({name})" if name else device.type


def device_record(device):
    """On CUDA, what the grader's process reads of the device (name, compute capability, SM count, L2 size, and its
    clocks where NVML answers), for the item's measurements; ``{}`` on the CPU."""
    device = torch.device(device)
    if device.type != "cuda":
        return {}
    props = torch.cuda.get_device_properties(device)
    record = {"name": props.name, "capability": f"{props.major}.{props.minor}",
              "multiprocessors": props.multi_processor_count, "l2_bytes": getattr(props, "L2_cache_size", None)}
    try:
        record["clock_mhz"] = torch.cuda.clock_rate(device)     # NVML (pynvml); absent on some machines
    except Exception as error:  # noqa: BLE001 - a missing NVML is recorded, not fatal
        record["clock_mhz"] = f"unknown ({type(error).__name__})"
    return record


def expect_plausible(check, result, what):
    """A passing ratio above the device's ceiling (``settings.speed.ceilings``) is not believed without a person:
    the item goes under review (0 points until an instructor accepts it), with every measurement."""
    __tracebackhide__ = True
    ceiling = settings.speed.ceilings.get(result.device)
    if ceiling is not None and result.passed and result.ratio > ceiling:
        raise UnderReview(check, f"{what} ran {result.ratio:.0f}x as fast as the baseline on {result.device}, above "
                                 f"the {ceiling:g}x that this device can plausibly give (settings.speed.ceilings): "
                                 "an instructor will look at it.", measurements=result.as_dict())


# ------------------------------------------------------------ host synchronisation (CUDA)

def _is_sync_warning(warning):
    return "synchroniz" in str(warning.message).lower()


@contextlib.contextmanager
def sync_debug_mode(mode):
    """``torch.cuda.set_sync_debug_mode(mode)`` for the block; the previous mode is restored after."""
    previous = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode(mode)
    try:
        yield
    finally:
        torch.cuda.set_sync_debug_mode(previous)


def count_host_syncs(check, fn, *args, what=None):
    """How many times ``fn(*args)`` makes the host wait for a CUDA device (``None`` off CUDA).

    Counted with ``torch.cuda.set_sync_debug_mode("warn")``: every synchronising
    operation (``.item()``, ``bool(t)``, ``int(t)``, indexing with a 0-d tensor, a copy to
    the CPU, ``nonzero``, ...) issues one warning. Returns ``(result, count)``.
    """
    __tracebackhide__ = True
    if device_of(args).type != "cuda":
        return call_student(check, fn, *args, what=what), None
    _sync(device_of(args))
    with warnings.catch_warnings(record=True) as caught, sync_debug_mode("warn"):
        warnings.simplefilter("always")
        result = call_student(check, fn, *args, what=what)
    return result, sum(1 for w in caught if _is_sync_warning(w))


def expect_no_per_row_sync(check, fn, make_args, sizes, *, what=None, hint=None):
    """On CUDA, the number of host synchronisations ``fn`` makes must not grow with the batch size.

    ``make_args(size)`` builds CUDA arguments for each size. A constant number (a
    bounds check, say) is allowed; one per row is not. Returns ``{size: count}``,
    or ``None`` when the arguments are not on CUDA (nothing to measure).
    """
    __tracebackhide__ = True
    counts = {}
    for size in sizes:
        _, count = count_host_syncs(check, fn, *make_args(size), what=what)
        if count is None:
            return None
        counts[size] = count
    return expect_constant_syncs(check, counts, what=what, hint=hint)


def expect_constant_syncs(check, counts, *, what=None, hint=None):
    """The verdict on host-synchronisation counts ``{batch size: count}``: the same for every size, or a failure.
    Returns ``counts``."""
    __tracebackhide__ = True
    if len(set(counts.values())) > 1:
        shown = ", ".join(f"batch {s}: {c}" for s, c in counts.items())
        raise CheckFailure(check, f"{what or 'your function'} makes the CPU wait for the GPU a number of times that "
                                  f"grows with the batch ({shown} host synchronisations); each one stalls the GPU.",
                           hint=hint or "Keep indices on the GPU as tensors: no `.item()`, `int(t)`, `bool(t)`, or "
                                        "indexing with a 0-d tensor inside a loop over the batch.",
                           measurements={"host_syncs": counts}, kind="host syncs")
    return counts
