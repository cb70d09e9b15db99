"""The inputs of timed calls, made inside the timed request: one per call, from a seed the request carries.

A speed check's *template* (the visible or hidden variant's arguments) says only what an input looks like; the
grader sends its description (:func:`spec_of`: shapes, dtypes, devices, integer ranges, as plain data), a pool seed
and one seed per call with the timed request itself, and the worker makes each call's input (:func:`draw_input`)
after the request arrived, inside the grader's clock.

Drawing every value afresh inside the clock costs more than the calls it times (torch's CPU generator: about 3 ms
for ``batch_gather``'s ``[4096, 16, 4]``, against 0.1 ms for the vectorized call), and sending the values costs
about as much through a pipe on a busy machine. So each tensor argument is drawn once per measurement as a *pool*
of twice its rows (:func:`draw_pools`: standard normal floats, integers uniform in the template's range, random
bits; on the template's device, with torch's generator), and each call's input is a fresh choice of rows from it
(:func:`draw_input`: row indices drawn with replacement from the call's seed, one ``index_select``): a few
microseconds inside the clock, the same on every side (the student's worker, and the baseline and the reference in
the clean worker). The pool is drawn by the first request that names its seed (a warm-up, whose time only sizes
the requests).

Nothing the student's process does before a timed request can work on its inputs: which rows, in which order and
how often, is drawn from a seed that arrives with the request. For the speed checks graded today, a sum over the
chosen rows and a gather with fresh indices per row, nothing computed from the pool ahead makes the answer
cheaper than computing it. A speed check whose answer is computed row by row independently (a row-wise softmax,
say) could be answered from a table over the pool's rows: such a check must draw its inputs afresh
(``draw_input`` without pools).
"""

import torch

from autograder.seam.probes import probe

SEED_BITS = 62


def spec_of(template, seeded=()):
    """What each argument of ``template`` looks like, as plain data (what a timed request carries instead of the
    tensors): ``{"tensor": shape, "dtype", "device", "low", "high"}`` for a tensor to draw, ``{"seed": True}`` at the
    positions ``seeded`` (the call's own seed, for a timed function that makes its inputs from it inside the clock),
    ``{"value": v}`` for an argument passed as it is."""
    specs = []
    for position, a in enumerate(template):
        if position in seeded:
            specs.append({"seed": True})
            continue
        if not isinstance(a, torch.Tensor) or a.numel() == 0 or a.is_complex():
            specs.append({"value": a})
            continue
        low = high = None
        if a.dtype != torch.bool and not a.is_floating_point():
            low, high = int(a.min()), int(a.max())
        specs.append({"tensor": list(a.shape), "dtype": str(a.dtype).removeprefix("torch."), "device": str(a.device),
                      "low": low, "high": high})
    return specs


def _generator(device, seed):
    gen = torch.Generator(device=device) if device.type == "cuda" else torch.Generator()
    return gen.manual_seed(int(seed))


POOL_ROWS = 2      # a pool has this many times the template's rows


def _fresh(spec, shape, gen):
    dtype, device = getattr(torch, spec["dtype"]), torch.device(spec["device"])
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen, device=device).bool()
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=torch.float32, device=device).to(dtype)
    return torch.randint(spec["low"], spec["high"] + 1, shape, generator=gen, dtype=dtype, device=device)


def _generators():
    gens = {}

    def gen_for(device, seed):
        return gens.get(device) or gens.setdefault(device, _generator(device, seed))
    return gen_for


def draw_pools(specs, seed):
    """One pool per tensor argument of ``specs`` with rows (``POOL_ROWS`` times its rows, drawn afresh from
    ``seed``); ``None`` for the others."""
    gen_for, pools = _generators(), []
    for spec in specs:
        shape = tuple(spec.get("tensor", ()))
        if not shape or shape[0] == 0:
            pools.append(None)
            continue
        device = torch.device(spec["device"])
        pools.append(_fresh(spec, (POOL_ROWS * shape[0],) + shape[1:], gen_for(device, seed)))
    return pools


def draw_input(specs, seed, pools=None):
    """The timed call's arguments for ``seed``: each tensor of ``specs`` (:func:`spec_of`, or a template, described
    first) as a fresh choice of rows of its pool (:func:`draw_pools`), or without pools drawn afresh, on its own
    device."""
    if any(not isinstance(s, dict) for s in specs):
        specs = spec_of(specs)
    gen_for, drawn = _generators(), []
    for k, spec in enumerate(specs):
        if "tensor" not in spec:
            drawn.append(int(seed) if spec.get("seed") else spec["value"])
            continue
        shape, device = tuple(spec["tensor"]), torch.device(spec["device"])
        pool = pools[k] if pools is not None else None
        if pool is None:
            drawn.append(_fresh(spec, shape, gen_for(device, seed)))
        else:
            rows = torch.randint(0, pool.shape[0], (shape[0],), generator=gen_for(device, seed), device=device)
            drawn.append(pool.index_select(0, rows))
    return tuple(drawn)


def nbytes(template):
    """The bytes of one drawn input."""
    return sum(a.numel() * a.element_size() for a in template if isinstance(a, torch.Tensor))


def flush_l2(device, size):
    """On CUDA, write a buffer of ``size`` bytes (larger than the L2 cache) so that the next sample starts cold."""
    if size and torch.device(device).type == "cuda":
        buffer = torch.empty(int(size) // 4, dtype=torch.int32, device=device)
        buffer.zero_()
        torch.cuda.synchronize(device)


@probe
def first_argument(*args):
    """A timed call that does nothing: what a timed request costs by itself (the round trip and making its inputs),
    for ``benchmarks/speed.py``."""
    return args[0].flatten()[:1].clone() if hasattr(args[0], "flatten") else args[0]
