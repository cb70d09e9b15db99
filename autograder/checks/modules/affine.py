"""The ``Affine`` exercise's checks: a module with two registered parameters ``a`` and ``b``, ``forward(x) = a * x +
b``, gradients that reach both, and a state that saves, loads and converts (``state_dict``, ``.to``)."""

import io

import torch

from autograder.checks.modules import drawn_state, probes
from autograder.checks.modules.contract import affine_input_labels
from autograder.contracts import exercised, exercised_as
from autograder.errors import CheckFailure, named_kind
from autograder.measuring.compare import expect_close, expect_meta
from autograder.seam.student import describe
from autograder.spec import graded

PARAMETER_HINT = ("Register a and b as parameters: `self.a = torch.nn.Parameter(torch.randn(1))` in __init__, "
                  "after `super().__init__()`. A plain tensor attribute, or a Parameter kept in a Python list, is "
                  "invisible to parameters(), state_dict(), .to() and every optimizer.")


def _new_affine(check, Affine):
    __tracebackhide__ = True
    module = Affine()
    if not isinstance(module, torch.nn.Module):
        raise CheckFailure(check, f"Affine() is a {probes.type_name(module)}, not a torch.nn.Module.",
                           hint="Subclass torch.nn.Module and call super().__init__() first.")
    return module


def _tensor_attribute(check, module, name):
    """``module.a`` or ``module.b``, which must at least be a tensor of shape [1]."""
    __tracebackhide__ = True
    value = getattr(module, name, None)
    if not isinstance(value, torch.Tensor):
        others = [n for n, _ in module.named_parameters()]
        if others:      # its own parameters under other names (a wrapped nn.Linear): another mistake than none at all
            raise CheckFailure(check, f"Affine() registers other parameters, {others}, and Affine().{name} is "
                                      f"{describe(value)}; expected a torch.nn.Parameter of shape [1] named {name}.",
                               hint=PARAMETER_HINT)
        raise CheckFailure(check, f"Affine().{name} is {describe(value)}; expected a torch.nn.Parameter of shape [1].",
                           hint=PARAMETER_HINT)
    if tuple(value.shape) != (1,):
        raise CheckFailure(check, f"Affine().{name} has shape {list(value.shape)}; expected [1].",
                           hint="Create it with torch.randn(1) (shape [1]), not torch.tensor(0.5) (shape []).")
    return value


def _set_values(check, module, a, b):
    __tracebackhide__ = True
    for name in ("a", "b"):
        _tensor_attribute(check, module, name)
    check.student(module).beside(probes.set_values, {"a": a, "b": b})    # in place, in the student's module


@graded(2, hidden=[{}], evidence=("data", "drawn state"), worker_facts="the parameters' types (a probe)",
        facts_only_cost=True)
def check_affine_parameters(check, Affine, *, seed=0):
    """``Affine()`` is an ``nn.Module`` whose ``named_parameters()`` are exactly ``a`` and ``b``: Parameters of
    shape [1] in the default dtype that require grad (a plain tensor attribute, a buffer or a list loses)."""
    __tracebackhide__ = True
    module = _new_affine(check, Affine)
    exercised("fresh_module")
    named = dict(module.named_parameters())
    if sorted(named) != ["a", "b"]:
        plain = [n for n in ("a", "b") if isinstance(getattr(module, n, None), torch.Tensor) and n not in named]
        shown = " and ".join(f"Affine().{n}" for n in plain)
        extra = (f" ({shown} {'is a tensor' if len(plain) == 1 else 'are tensors'} but not registered "
                 f"{'as a parameter' if len(plain) == 1 else 'as parameters'})") if plain else ""
        raise CheckFailure(check, f"Affine().named_parameters() gives {sorted(named)}; expected exactly "
                                  f"['a', 'b']{extra}." if not named or "a" in named or "b" in named else
                                  f"Affine().named_parameters() gives other names, {sorted(named)}; expected exactly "
                                  f"['a', 'b'].", hint=PARAMETER_HINT,
                           kind=None if not named or "a" in named or "b" in named else named_kind("other names"))
    if len(list(module.parameters())) != 2:
        raise CheckFailure(check, f"Affine().parameters() yields {len(list(module.parameters()))} tensors; "
                                  "expected 2 (a and b).", hint=PARAMETER_HINT)
    for name, parameter in named.items():
        if tuple(parameter.shape) != (1,):
            raise CheckFailure(check, f"parameter {name} has shape {list(parameter.shape)}; expected [1].",
                               hint="Create it with torch.randn(1) (shape [1]), not torch.tensor(0.5) (shape []).")
        if parameter.dtype != torch.get_default_dtype():
            raise CheckFailure(check, f"parameter {name} has dtype {parameter.dtype}; expected the default "
                                      f"{torch.get_default_dtype()}.",
                               hint="Do not fix the dtype in __init__: callers choose it with .to(dtype).")
        if not parameter.requires_grad:
            raise CheckFailure(check, f"parameter {name} does not require grad, so no optimizer can train it.",
                               hint="Leave requires_grad at its default (True).")
    exercised("drawn_parameters")
    drawn_state.expect_affine_follows_drawn_parameters(check, module, check.generator(),
                                                       hint=PARAMETER_HINT)


def _affine_input(gen, i):
    shape = ([17], [9, 1], [2, 3, 4], [1])[i % 4]
    return torch.randn(shape, generator=gen) * 3


@graded(1, hidden=[{"cases": 16}])
def check_affine_forward(check, Affine, *, seed=0, cases=8):
    """With ``a`` and ``b`` set to random values, ``Affine()(x)`` equals ``a * x + b`` (float64 reference),
    with the shape and dtype of ``x``, for inputs of rank 1 to 3."""
    __tracebackhide__ = True
    gen = check.generator()
    module = _new_affine(check, Affine)
    for i in range(cases):
        a, b = (float(v) for v in torch.randn(2, generator=gen) * 4)
        _set_values(check, module, a, b)
        x = _affine_input(gen, i)
        exercised_as(affine_input_labels, x)
        out = check.student(module, "Affine()")(x)
        inputs = {"x": x, "a": a, "b": b}
        expect_meta(check, out, what="Affine's output", shape=x.shape, dtype=x.dtype, inputs=inputs)
        expect_close(check, out, a * x.double() + b, what="Affine's output", inputs=inputs,
                     hint="forward(x) returns self.a * x + self.b, using the module's own a and b.",
                     known=(("b * x + a: the two parameters in each other's place", lambda _: b * x.double() + a,
                             "a multiplies x and b is added: self.a * x + self.b."),))


@graded(1, hidden=[{"cases": 8}])
def check_affine_gradients(check, Affine, *, seed=0, cases=4):
    """Backward through ``Affine()(x)`` reaches both ``a`` and ``b`` with the right values:
    d(sum(g * out))/da = sum(g * x) and d/db = sum(g)."""
    __tracebackhide__ = True
    gen = check.generator()
    module = _new_affine(check, Affine)
    for i in range(cases):
        a, b = (float(v) for v in torch.randn(2, generator=gen))
        _set_values(check, module, a, b)
        check.student(module).beside(probes.clear_grads, ("a", "b"))
        x = _affine_input(gen, i)
        out = check.student(module, "Affine()")(x)
        upstream = torch.randn(out.shape, generator=gen)
        exercised_as(affine_input_labels, x)
        exercised("random_upstream")
        try:
            (out * upstream).sum().backward()
        except RuntimeError as error:
            raise CheckFailure(check, f"backward through Affine()(x) failed: {error}",
                               hint="Compute forward with tensor operations on self.a and self.b; no .item(), "
                                    ".data or .detach().") from None
        expected = {"a": (upstream.double() * x.double()).sum().reshape(1), "b": upstream.double().sum().reshape(1)}
        accumulated = check.student(module).beside(probes.grads, ("a", "b"))     # .grad as the student's module holds it
        for name in ("a", "b"):
            grad = accumulated[name]
            if grad is None:
                raise CheckFailure(check, f"after backward through Affine()(x), {name}.grad is None: the gradient "
                                          f"does not reach {name}. Input: x = {describe(x)}",
                                   hint="Use self.a and self.b directly in forward (no .item(), .data, "
                                        ".detach() or torch.tensor(...) around them), and make them Parameters.")
            expect_close(check, grad, expected[name], what=f"the gradient of {name}", inputs={"x": x},
                         rtol=1e-4, atol=1e-4)


@graded(2, hidden=[{}])
def check_affine_round_trips(check, Affine, *, seed=0):
    """``state_dict()`` holds exactly ``a`` and ``b``; saving it and loading it into a fresh ``Affine()`` gives
    the same outputs; ``.to(torch.float64)`` turns both into float64 and the output into float64."""
    __tracebackhide__ = True
    gen = check.generator()
    module = _new_affine(check, Affine)
    a, b = (float(v) for v in torch.randn(2, generator=gen) * 4)
    _set_values(check, module, a, b)
    state = probes.state_of(module)
    if sorted(state) != ["a", "b"]:
        raise CheckFailure(check, f"Affine().state_dict() has keys {sorted(state)}; expected ['a', 'b'], so a "
                                  "checkpoint would not save the module.", hint=PARAMETER_HINT)
    exercised("saved_and_loaded")
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    fresh = _new_affine(check, Affine)
    try:
        fresh.load_state_dict(torch.load(buffer))
    except RuntimeError as error:
        raise CheckFailure(check, f"loading a saved Affine().state_dict() into a fresh Affine() failed: {error}",
                           hint=PARAMETER_HINT) from None
    x = torch.randn(11, generator=gen)
    expect_close(check, check.student(fresh, "a reloaded Affine()")(x), a * x.double() + b,
                 what="the output of an Affine() loaded from a saved state_dict", inputs={"x": x, "a": a, "b": b})
    exercised("to_float64")
    moved = check.student(module.to, "Affine().to")(torch.float64)
    for name in ("a", "b"):
        value = _tensor_attribute(check, moved, name)
        if value.dtype != torch.float64:
            raise CheckFailure(check, f"after Affine().to(torch.float64), {name} is still {value.dtype}.",
                               hint=PARAMETER_HINT)
    x64 = torch.randn(7, generator=gen, dtype=torch.float64)
    out = check.student(moved, "Affine().to(torch.float64)")(x64)
    expect_meta(check, out, what="the float64 module's output", shape=x64.shape, dtype=torch.float64)
    expect_close(check, out, a * x64 + b, what="the float64 module's output", inputs={"x": x64, "a": a, "b": b})
