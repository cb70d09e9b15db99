"""The inputs of timed calls, drawn inside the timed request: one per call, from a seed the request carries.

A speed check's *template* (the visible or hidden variant's arguments) says only what an input looks like; the
grader sends its description (:func:`spec_of`: shapes, dtypes, devices, integer ranges, as plain data) and the seeds
with the timed request itself, and the worker draws each call's input (:func:`draw_input`) after the request arrived,
inside the grader's clock: every floating tensor standard normal values of the template's shape, dtype and device,
every integer tensor uniform in the template's own range (valid indices stay valid), every boolean tensor random
bits, anything else as it is. The generator is torch's on the template's device, so the grader draws the inputs it
needs to check a result again, bit for bit, on the same kind of device.

Nothing the student's process does before the request arrives can help: no input exists there before the clock
starts, so there is nothing to compute ahead. Drawing the inputs is inside the window, on both sides alike (the
baseline in a clean worker draws the same way); ``benchmarks/speed.py --trusted`` states what it adds per call.
"""

import torch

from .probe_registry import probe

SEED_BITS = 62


def spec_of(template):
    """What each argument of ``template`` looks like, as plain data (what a timed request carries instead of the
    tensors): ``{"tensor": shape, "dtype", "device", "low", "high"}`` for a tensor to draw, ``{"value": v}`` for an
    argument passed as it is."""
    specs = []
    for a in template:
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


def draw_input(specs, seed):
    """The timed call's arguments for ``seed``: each tensor of ``specs`` (:func:`spec_of`, or a template, described
    first) drawn fresh on its own device."""
    if any(not isinstance(s, dict) for s in specs):
        specs = spec_of(specs)
    drawn, gens = [], {}
    for spec in specs:
        if "tensor" not in spec:
            drawn.append(spec["value"])
            continue
        shape, dtype, device = tuple(spec["tensor"]), getattr(torch, spec["dtype"]), torch.device(spec["device"])
        gen = gens.get(device) or gens.setdefault(device, _generator(device, seed))
        if dtype == torch.bool:
            drawn.append(torch.randint(0, 2, shape, generator=gen, device=device).bool())
        elif dtype.is_floating_point:
            drawn.append(torch.randn(shape, generator=gen, dtype=torch.float32, device=device).to(dtype))
        else:
            drawn.append(torch.randint(spec["low"], spec["high"] + 1, shape, generator=gen, dtype=dtype,
                                       device=device))
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
    """A timed call that does nothing: what a timed request costs by itself (the round trip and its inputs), for
    ``benchmarks/speed.py``."""
    return args[0].flatten()[:1].clone() if hasattr(args[0], "flatten") else args[0]
