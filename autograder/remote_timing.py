"""The speed timer's trusted side: a student's function in their worker against the baseline (and the grader's
reference) in a clean worker, each timed by the grader's clock around a request that carries its inputs' seeds.

Split from ``autograder.timing`` (which re-exports :func:`measure_remote_speedup` and :func:`draw_seeds`); see its
docstring and docs/speed.md.
"""

import hashlib
import importlib
import inspect
import itertools
import math
import random
import statistics

import torch

from . import timed_inputs
from .errors import CheckFailure
from .settings import settings
from .spec import run_seed
from .timing import _l2_flush_bytes, _threads_for
from .trusted import remote


_REQUESTS = itertools.count(1)   # timed requests of this process: no two draw the same seeds


def draw_seeds(count):
    """``count`` seeds of timed inputs (:func:`autograder.timed_inputs.draw_input`), drawn from the grading run's
    hidden seed and this process's count of timed requests: different for every request, and nothing a student's
    process saw before tells them."""
    digest = hashlib.sha256(f"{run_seed()}:timed:{next(_REQUESTS)}".encode()).digest()
    gen = random.Random(digest)
    return [gen.getrandbits(timed_inputs.SEED_BITS) for _ in range(count)]


REMOTE_SAMPLE_CALLS = (8, 256)   # calls per timed request to a worker: at least (but 1 for a slow call), at most
DRAWN_BYTES = 64 << 20           # the inputs of one timed request together at most (fewer calls for big inputs)
CHECKED_PER_ROUND = 3            # results of each timed request of the student's that the baseline computes again


def measure_remote_speedup(check, candidate, baseline, args, *, device, what, reference=None):
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
    side makes as many calls per request as its own warm-up says (:func:`_calls_per_request`): a slow loop one."""
    __tracebackhide__ = True
    session = candidate._session
    clean = session.twin()
    target = remote.by_name(baseline)
    threads = _threads_for(device)
    timeout = settings.call_timeout_s
    specs = timed_inputs.spec_of(args)
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
        _expect_same_results(check, [(p, got[p], expected[k]) for k, p in enumerate(picks)], what)
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
        found = importlib.import_module(f"{__package__}.oracles.{module}")
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
        source = inspect.getsource(importlib.import_module(f"{__package__}.oracles.{module}"))
        answer = clean.request("cell", source, timeout=settings.grading.cell_timeout_s)
        error = (answer.get("ok") or {}).get("error") if "raised" not in answer else answer["raised"]
        if error:
            raise RuntimeError(f"the grader's reference {module} did not load in the clean worker: {error}")
        defined.add(module)
    answer = clean.request("lookup", function, timeout=settings.call_timeout_s)
    if "raised" in answer:
        raise RuntimeError(f"the grader's reference {name} is missing from the clean worker")
    return answer["ok"]


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
