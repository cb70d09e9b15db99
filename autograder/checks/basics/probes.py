"""What the basics checks build and run where the student's code lives (see ``autograder.seam.remote.beside``).

Under trusted grading a tensor reaches the student's worker by value: a contiguous leaf,
with its ``requires_grad`` flag but no ``.grad``, no view of another tensor, not an
``nn.Parameter``, never computed from anything. The properties graded here are about
exactly those things (a view, the caller's flag and ``.grad``), so the argument is
rebuilt from a recipe next to the student's code, the student's function is called
there, and what comes back is plain data: the result and the argument's state after
the call. In-process (no worker) every function here runs locally, as before.

What these functions report is reported by the student's process: a hostile student can
forge it (docs/security.md). The checks judge it; they compute every expected value from
their own copies.
"""

import functools

import torch

from autograder.seam.probes import probe


@probe
def seeded_call(fn, seed, *args, **kwargs):
    """``fn(*args, **kwargs)`` with torch's global generator seeded (and restored after), in the worker when ``fn``
    lives there: the student's ``torch.randn`` initialisation is the same in every run of a grade."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return fn(*args, **kwargs)


class Prefetched:
    """``generate_data()`` where the student's code runs, handing out samples that ``take(n)`` (the grader's data
    source, called back over the pipe) sent ``chunk`` at a time: one round trip per ``chunk`` steps, not one per
    step. Only samples cross; the quadratic's coefficients stay in the grader. The calls counted here would be the
    worker's word, so a check that grades the call count uses the plain callback instead."""

    def __init__(self, take, chunk):
        self._take, self._chunk, self._ready = take, chunk, []

    def __call__(self):
        if not self._ready:
            self._ready = list(reversed(self._take(self._chunk)))
        return self._ready.pop()

    def __repr__(self):
        return "<generate_data>"


@probe
def seeded_call_prefetched(fn, seed, take, chunk, *args, **kwargs):
    """``seeded_call(fn, seed, Prefetched(take, chunk), *args, **kwargs)``."""
    return seeded_call(fn, seed, Prefetched(take, chunk), *args, **kwargs)


# ------------------------------------------------------------------ grad_of: the test functions

def _like(t, x):
    return t.to(dtype=x.dtype, device=x.device)


FORMULAS = (
    ("(x ** 3).sum()", lambda w, A, x: (x ** 3).sum()),
    ("-(x * x).sum()", lambda w, A, x: -(x * x).sum()),
    ("(w * torch.tanh(x)).sum()", lambda w, A, x: (_like(w, x).reshape(x.shape) * torch.tanh(x)).sum()),
    ("torch.logsumexp(x.flatten(), 0)", lambda w, A, x: torch.logsumexp(x.flatten(), 0)),
    ("x.norm()", lambda w, A, x: x.norm()),
    ("torch.exp(-x ** 2).mean()", lambda w, A, x: torch.exp(-x ** 2).mean()),
    ("(torch.sin(x) * torch.cos(2 * x)).sum()", lambda w, A, x: (torch.sin(x) * torch.cos(2 * x)).sum()),
    ("x.flatten() @ A @ x.flatten()", lambda w, A, x: x.flatten() @ _like(A, x) @ x.flatten()),
    ("x.max()", lambda w, A, x: x.max()),
    ("torch.nn.functional.softplus(x).pow(2).sum()", lambda w, A, x: torch.nn.functional.softplus(x).pow(2).sum()),
)


@probe
def formula(index, weights, matrix, x):
    """``FORMULAS[index]`` at ``x``: a module-level function, so that ``functools.partial(formula, index, weights,
    matrix)`` crosses to the worker and runs there, where autograd can differentiate it."""
    return FORMULAS[index][1](weights, matrix, x)


class Function:
    """A scalar-valued test function that shows its formula in messages; ``partial`` is what is sent."""

    def __init__(self, index, weights, matrix):
        self.formula = FORMULAS[index][0]
        self.partial = functools.partial(formula, index, weights, matrix)

    def __call__(self, x):
        return self.partial(x)

    def __repr__(self):
        return f"lambda x: {self.formula}"


@probe
def grad_of_result(grad_of, f, x):
    """``{"grad": grad_of(f, x), "grad_fn": str() of its grad_fn (None without one)}``: the node's type is known only
    where the graph is (a result that crossed from a worker shows the node that links it to the worker's graph)."""
    grad = grad_of(f, x)
    grad_fn = getattr(grad, "grad_fn", None) if isinstance(grad, torch.Tensor) else None
    return {"grad": grad, "grad_fn": None if grad_fn is None else str(grad_fn)}


# ------------------------------------------------------------------ grad_of: leaves x alone

GRAD_KINDS = ("plain", "requires_grad", "with_grad", "computed")


def grad_input(kind, base):
    """``(x, owner)`` for the leave-alone cases of ``check_grad_of_values``: ``x`` as ``kind`` says, from ``base``;
    ``owner`` is the leaf that a computed ``x = 1.5 * w`` comes from, else ``None``."""
    if kind == "plain":
        return base, None
    if kind in ("requires_grad", "with_grad"):
        x = base.detach().clone().requires_grad_(True)
        if kind == "with_grad":
            x.grad = torch.full_like(x, 7.0)
        return x, None
    owner = base.detach().clone().requires_grad_(True)
    return owner * 1.5, owner


def grad_state(t):
    """``{"requires_grad", "grad" (a leaf's, or None), "values"}`` of ``t``, copied."""
    grad = t.grad if t.is_leaf else None     # a non-leaf has no .grad (reading it would only warn)
    return {"requires_grad": t.requires_grad, "grad": None if grad is None else grad.detach().clone(),
            "values": t.detach().clone()}


@probe
def grad_of_leaving(grad_of, f, kind, base, here=None):
    """``grad_of(f, x)`` on ``x`` built by ``grad_input(kind, base)`` (or ``here``, already built): ``{"grad": what it
    returned, "x": the state of x after the call, "owner": the state of x's leaf after it (or None)}``."""
    x, owner = here or grad_input(kind, base)
    grad = grad_of(f, x)
    return {"grad": grad, "x": grad_state(x), "owner": None if owner is None else grad_state(owner)}


# ------------------------------------------------------------------ to_numpy

REQUIRES_GRAD_KINDS = ("a leaf that requires grad,", "an nn.Parameter,",
                       "the result of a computation on a leaf that requires grad,")


def requiring_grad(kind, base):
    """A tensor that requires grad, as ``REQUIRES_GRAD_KINDS[kind]`` says, with ``base``'s values (base left alone)."""
    leaf = base.detach().clone()
    if kind == 0:
        return leaf.requires_grad_(True)
    if kind == 1:
        return torch.nn.Parameter(leaf)
    return leaf.requires_grad_(True) * 2 + 1


@probe
def to_numpy_requiring_grad(to_numpy, kind, base, here=None):
    """``to_numpy(t)`` on ``t = requiring_grad(kind, base)`` (or ``here``): ``{"array": what it returned,
    "requires_grad": t's flag after the call}``."""
    t = requiring_grad(kind, base) if here is None else here
    return {"array": to_numpy(t), "requires_grad": t.requires_grad}


VIEWS = ("a transposed view", "a strided slice", "a permuted view", "an expanded (stride 0) view", "a diagonal view",
         "a column", "a transposed view of a tensor that requires grad")


def view_of(kind, base):
    """``VIEWS[kind]`` of ``base``: a non-contiguous view, made where it is used (a view cannot be sent)."""
    if kind == 6:
        return base.detach().requires_grad_(True).t()
    return (lambda t: t.t(), lambda t: t[::2, 1::3], lambda t: t.permute(2, 0, 1), lambda t: t.expand(3, 5),
            lambda t: t.diagonal(), lambda t: t[:, 2])[kind](base)


@probe
def to_numpy_of_view(to_numpy, kind, base, here=None):
    """``to_numpy(view_of(kind, base))`` (or ``to_numpy(here)``): the student's function is given the view itself."""
    return to_numpy(view_of(kind, base) if here is None else here)
