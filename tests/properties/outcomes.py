"""What one answer does on one drawn input, and whether two answers do the same.

An exercise's ``call(namespace, case)`` runs the answer in ``namespace`` on a copy of the drawn ``case`` and returns
``(result, leaves)``: ``leaves`` are the tensors the gradient is taken with respect to (empty when the exercise is
not differentiable). :func:`observe` adds what the contract also fixes: whether it raised (and with what), the
gradients of ``sum(result * cotangent)``, and whether the caller's tensors were left as they were.
:func:`difference` says, in one line, how a candidate's outcome departs from the reference's, or ``None``.
"""

import dataclasses
import math

import numpy as np
import torch

from autograder.measuring.compare import tolerance

# Two answers each within the check's tolerance of the float64 truth are within twice of each other.
SLACK = 2.0


@dataclasses.dataclass
class Outcome:
    raised: BaseException | None = None
    result: object = None
    grads: dict | None = None
    backward_raised: BaseException | None = None
    after: dict | None = None           # the caller's tensors after the call: values, requires_grad, has .grad
    broken: str | None = None           # a contract property the result breaks (exercise.properties)


def _copy(value):
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copy(v) for v in value)
    return value


def _snapshot(value, where="", into=None):
    """``{path: (values, requires_grad, no .grad)}`` of every tensor in a case, nested ones included."""
    into = {} if into is None else into
    if isinstance(value, torch.Tensor):
        into[where] = (value.detach().clone(), value.requires_grad, value.grad is None)
    elif isinstance(value, dict):
        for k, v in value.items():
            _snapshot(v, f"{where}[{k!r}]" if where else str(k), into)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _snapshot(v, f"{where}[{i}]", into)
    return into


def _changed(got, want):
    """How the caller's tensors after the candidate's call differ from after the reference's (the harness itself
    marks some as requiring grad, the same for both)."""
    for name, (values, requires_grad, no_grad) in want.items():
        mine, mine_requires, mine_no_grad = got[name]
        if mine_requires != requires_grad:
            return f"{name}.requires_grad is {mine_requires} after the call, {requires_grad} after the reference's"
        if mine_no_grad != no_grad:
            return f"{name}.grad is {'not ' if mine_no_grad else ''}set after the call, unlike the reference's"
        if values.dtype != mine.dtype or not torch.equal(mine.double().nan_to_num(7.5),
                                                         values.double().nan_to_num(7.5)):
            return f"{name}'s values changed"
    return None


def _cotangent(out):
    gen = torch.Generator().manual_seed(1234)
    return torch.randn(out.shape, generator=gen, dtype=torch.float64).to(out.dtype)


def _differentiable_tensors(result):
    if isinstance(result, torch.Tensor):
        return [result] if result.grad_fn is not None else []
    if isinstance(result, dict):
        return [t for v in result.values() for t in _differentiable_tensors(v)]
    if isinstance(result, (list, tuple)):
        return [t for v in result for t in _differentiable_tensors(v)]
    return []


def observe(exercise, namespace, case):
    """The outcome of the answer in ``namespace`` on ``case`` (the case itself is not touched)."""
    case = _copy(case)
    torch.manual_seed(0)
    outcome = Outcome()
    try:
        result, leaves = exercise.call(namespace, case)
    except Exception as exc:    # noqa: BLE001 - what the answer raised is part of its outcome
        outcome.raised = exc
        outcome.after = _snapshot(case)
        return outcome
    outcome.result = result
    outcome.after = _snapshot(case)
    if exercise.properties is not None:
        outcome.broken = exercise.properties(case, result)
    outs = _differentiable_tensors(result)
    leaves = {k: v for k, v in leaves.items() if isinstance(v, torch.Tensor) and v.requires_grad}
    if leaves and outs:
        try:
            grads = torch.autograd.grad(outs, list(leaves.values()), [_cotangent(o) for o in outs],
                                        allow_unused=True)
            outcome.grads = dict(zip(leaves, grads))
        except Exception as exc:    # noqa: BLE001
            outcome.backward_raised = exc
    elif leaves:
        outcome.grads = {k: None for k in leaves}
    return outcome


def _close(got, want, dtype, tol):
    rtol, atol = tol(dtype)
    try:
        torch.testing.assert_close(got, want, rtol=SLACK * rtol, atol=SLACK * atol, equal_nan=True,
                                   check_dtype=False)
    except AssertionError as exc:
        return str(exc).splitlines()[0] if str(exc) else "values differ"
    return None


def value_difference(got, want, where="result", tol=tolerance):
    """How ``got`` departs from ``want`` (type, structure, shape, dtype, autograd state, values), or ``None``."""
    if type(got) is not type(want):
        return f"{where} is a {type(got).__name__}, the reference's a {type(want).__name__}"
    if isinstance(want, torch.Tensor):
        if got.shape != want.shape:
            return f"{where} has shape {list(got.shape)}, the reference's {list(want.shape)}"
        if got.dtype != want.dtype:
            return f"{where} has dtype {got.dtype}, the reference's {want.dtype}"
        if got.device != want.device:
            return f"{where} is on {got.device}, the reference's on {want.device}"
        if got.requires_grad != want.requires_grad:
            return f"{where}.requires_grad is {got.requires_grad}, the reference's {want.requires_grad}"
        if want.dtype.is_floating_point or want.dtype.is_complex:
            found = _close(got.detach().double(), want.detach().double(), want.dtype, tol)
            return f"{where}: {found}" if found else None
        return None if torch.equal(got, want) else f"{where}: values differ"
    if isinstance(want, np.ndarray):
        if got.shape != want.shape or got.dtype != want.dtype:
            return f"{where} is {got.dtype}{list(got.shape)}, the reference's {want.dtype}{list(want.shape)}"
        return None if np.array_equal(got, want, equal_nan=want.dtype.kind == "f") else f"{where}: values differ"
    if isinstance(want, dict):
        if list(got) != list(want):
            return f"{where} has keys {list(got)}, the reference's {list(want)}"
        return next((d for k in want if (d := value_difference(got[k], want[k], f"{where}[{k!r}]", tol))), None)
    if isinstance(want, (list, tuple)):
        if len(got) != len(want):
            return f"{where} has {len(got)} elements, the reference's {len(want)}"
        return next((d for i, (g, w) in enumerate(zip(got, want))
                     if (d := value_difference(g, w, f"{where}[{i}]", tol))), None)
    if isinstance(want, float) and math.isnan(want):
        return None if isinstance(got, float) and math.isnan(got) else f"{where} is {got!r}, the reference's nan"
    return None if got == want else f"{where} is {got!r}, the reference's {want!r}"


def difference(exercise, case, got, want):
    """How outcome ``got`` departs from the reference's ``want`` where the contract fixes it, or ``None``."""
    if want.raised is not None:
        if got.raised is None:
            return f"returned where the reference raised {type(want.raised).__name__}"
        required = ValueError if isinstance(want.raised, ValueError) else Exception
        if not isinstance(got.raised, required):
            return f"raised {type(got.raised).__name__}, the contract asks for {required.__name__}"
        if required is ValueError and exercise.message is not None:
            return exercise.message(case, got.raised)
        return None
    if got.raised is not None:
        return f"raised {type(got.raised).__name__}: {str(got.raised)[:120]}"
    changed = _changed(got.after, want.after)
    if changed:
        return f"changed its input: {changed}"
    if got.broken:
        return got.broken
    tol = (lambda dtype: exercise.tolerance(case, dtype)) if exercise.tolerance else tolerance
    found = value_difference(got.result, want.result, tol=tol)
    if found:
        return found
    if want.grads is not None:
        if got.backward_raised is not None:
            return f"backward raised {type(got.backward_raised).__name__}"
        for name, g in want.grads.items():
            mine = (got.grads or {}).get(name)
            if (g is None) != (mine is None):
                return f"the gradient of {name} is {'missing' if mine is None else 'present'} " \
                       f"where the reference's is {'missing' if g is None else 'present'}"
            if g is not None:
                found = value_difference(mine, g, f"grad of {name}", tol=tol)
                if found:
                    return found
    return None
