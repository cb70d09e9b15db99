"""Evidence by behaviour for the modules' structure items, which a student's object cannot talk its way past.

What a probe reads in the student's process (a layer's type, which layers are one object, what is registered as a
buffer) is the worker's word: an object can describe itself falsely to it (a ``__class__`` property, an
``__iter__`` that hands out copies, an overridden ``named_parameters``). So each structure item also judges what
the module *does* with values the grader draws from the check's seed, at grading time:

* the values are loaded into the student's module through its own ``load_state_dict`` (strict), under the keys its
  own ``state_dict()`` reports;
* the module runs on inputs the grader draws, and its output comes back as data;
* the grader computes the expected output itself, from the values it drew and the structure the exercise asks for,
  and compares.

A layer or a weight shared between two layers (the second load overwrites the first), a missing bias, an
activation after the last layer, a statistic that is not in the state dict or that the module does not use: each
changes the output. What PyTorch's optimizers see (``parameters()``, called as any training loop calls it) is data
of the same kind: after the load, a parameter either holds a drawn value or it does not.
"""

import torch

from autograder.checks.modules import batchnorm_oracle as oracle
from autograder.checks.modules import probes
from autograder.errors import CheckFailure
from autograder.measuring.compare import expect_close, expect_meta
from autograder.seam.student import describe


def _load(check, module, values, call, hint):
    """``module.load_state_dict(values)`` (strict), in the student's process; a refusal fails with ``hint``."""
    __tracebackhide__ = True
    shown = ", ".join(f"{name!r}: {list(value.shape)}" for name, value in values.items())
    try:
        check.student(module.load_state_dict, f"{call}.load_state_dict")(values)
    except CheckFailure as failure:
        raise CheckFailure(check, f"loading a state of drawn values {{{shown}}} into {call} failed: {failure.detail}",
                           hint=hint) from None


def _same_values(a, b):
    return (isinstance(a, torch.Tensor) and a.shape == b.shape
            and torch.equal(a.detach().cpu().double(), b.detach().cpu().double()))


def _parameters_holding(check, module, values, call):
    """The names in ``values`` whose drawn value some tensor of ``module.parameters()`` holds."""
    __tracebackhide__ = True
    parameters = list(check.student(module.parameters, f"{call}.parameters")())
    return [name for name, value in values.items() if any(_same_values(p, value) for p in parameters)], parameters


# ------------------------------------------------------------------------ make_mlp

def mlp_shapes(sizes):
    """The state a ``make_mlp(sizes)`` holds, in order: a weight ``[n_out, n_in]`` and a bias ``[n_out]`` per pair."""
    shapes = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        shapes += [(n_out, n_in), (n_out,)]
    return shapes


def mlp_output(drawn, activation, x):
    """The float64 output of Linear layers holding ``drawn`` (weight, bias, weight, bias, ...), ``activation``
    (ReLU when ``None``) between two of them and none after the last."""
    act = (activation or torch.nn.ReLU)()
    out = x.double()
    for i in range(0, len(drawn), 2):
        if i:
            out = act(out)
        out = torch.nn.functional.linear(out, drawn[i].double(), drawn[i + 1].double())
    return out


def expect_mlp_follows_drawn_parameters(check, model, sizes, activation, gen, call):
    """Weights and biases drawn here, loaded under the keys of ``model.state_dict()``, give the output of distinct
    Linear layers with ``activation`` between them, on inputs drawn here."""
    __tracebackhide__ = True
    state = probes.state_of(model)
    names = list(state)
    got = [tuple(state[n].shape) if isinstance(state[n], torch.Tensor) else describe(state[n]) for n in names]
    expected = mlp_shapes(sizes)
    if got != expected:
        shown = ", ".join(f"{n} {list(s) if isinstance(s, tuple) else s}" for n, s in zip(names, got))
        raise CheckFailure(check, f"{call}.state_dict() holds [{shown}]; expected, in order, a weight [n_out, n_in] "
                                  f"and a bias [n_out] for each consecutive pair of sizes: "
                                  f"{[list(s) for s in expected]}.",
                           hint="One torch.nn.Linear(n_in, n_out) with its default bias per consecutive pair, and no "
                                "other parameter or buffer.")
    drawn = [torch.randn(shape, generator=gen) / (shape[1] ** 0.5 if len(shape) == 2 else 2.0) for shape in expected]
    _load(check, model, dict(zip(names, drawn)), call,
          hint="Build the model from torch.nn.Linear layers inside torch.nn.Sequential: its state_dict() and "
               "load_state_dict() then work as PyTorch's do.")
    x = torch.randn(16, sizes[0], generator=gen)
    out = check.student(model, call)(x)
    expect_meta(check, out, what=f"the output of {call} with drawn weights", shape=[16, sizes[-1]],
                dtype=torch.float32, inputs={"x": x})
    expect_close(check, out, mlp_output(drawn, activation, x), rtol=1e-4, atol=1e-5, inputs={"x": x},
                 what=f"the output of {call} after load_state_dict of weights and biases drawn by the grader "
                      f"({', '.join(names)})",
                 hint="Every Linear layer must use its own weight and bias (values loaded into one layer must not "
                      "change another: create a new torch.nn.Linear for every pair, even of equal sizes), with the "
                      "activation between two layers and none after the last.")


# -------------------------------------------------------------------------- Affine

def expect_affine_follows_drawn_parameters(check, module, gen, hint):
    """``a`` and ``b`` drawn here, loaded with ``load_state_dict``, are what forward uses and what ``parameters()``
    hands an optimizer."""
    __tracebackhide__ = True
    values = {"a": torch.randn(1, generator=gen) * 4, "b": torch.randn(1, generator=gen) * 4}
    _load(check, module, values, "Affine()", hint=hint)
    x = torch.randn(13, generator=gen) * 3
    out = check.student(module, "Affine()")(x)
    inputs = {"x": x, "a": float(values["a"]), "b": float(values["b"])}
    expect_close(check, out, values["a"].double() * x.double() + values["b"].double(), inputs=inputs,
                 what="the output of Affine() after load_state_dict({'a': a, 'b': b}) of values drawn by the grader",
                 hint="forward(x) returns self.a * x + self.b, using the module's own registered a and b.")
    holding, parameters = _parameters_holding(check, module, values, "Affine()")
    if sorted(holding) != ["a", "b"] or len(parameters) != 2:
        lost = [n for n in values if n not in holding]
        raise CheckFailure(check, f"after load_state_dict({{'a': a, 'b': b}}) with a = {inputs['a']:.6g} and b = "
                                  f"{inputs['b']:.6g}, Affine().parameters() yields {len(parameters)} tensors"
                                  + (f", none holding {' or '.join(lost)}" if lost else "")
                                  + "; expected exactly a and b: an optimizer trains what parameters() yields.",
                           hint=hint)


# ---------------------------------------------------------------------- Normalizer

def expect_normalizer_follows_drawn_statistics(check, module, config, gen, hint):
    """Running statistics drawn here, loaded with ``load_state_dict`` under the state's own keys, are what eval mode
    normalises with, and no tensor of ``parameters()`` holds them."""
    __tracebackhide__ = True
    state = probes.state_of(module)
    mean, var = oracle.draw_running(gen, config.features)
    drawn = {"running_mean": mean, "running_var": var}
    missing = [n for n in drawn if not isinstance(state.get(n), torch.Tensor)]
    if missing:
        raise CheckFailure(check, f"{config.call}.state_dict() has keys {sorted(state)}, without "
                                  f"{', '.join(missing)}.", hint=hint)
    values = {n: (drawn[n] if n in drawn else v).detach().clone().to(v.dtype) for n, v in state.items()}
    _load(check, module, values, config.call, hint=hint)
    check.student(module.eval, f"{config.call}.eval")()
    x = oracle.draw_batch(gen, oracle.batch_size(gen), config.features, dtype=values["running_mean"].dtype)
    out = check.student(module, f"{config.call} in eval mode")(x)
    held = {n: values[n].double() for n in drawn}
    expected = (x.double() - held["running_mean"]) / torch.sqrt(held["running_var"] + config.eps)
    expect_meta(check, out, what=f"the eval-mode output of {config.call}", shape=x.shape, dtype=x.dtype,
                inputs={"x": x})
    expect_close(check, out, expected, inputs={"x": x}, **oracle.tolerance(out.dtype),
                 what=f"the eval-mode output of {config.call} after load_state_dict of running statistics drawn by "
                      f"the grader (running_mean = {describe(held['running_mean'])}, running_var = "
                      f"{describe(held['running_var'])})",
                 hint="Register the statistics as buffers under the names running_mean and running_var, and in "
                      "eval() mode normalise with them: (x - self.running_mean) / torch.sqrt(self.running_var + eps).")
    holding, _ = _parameters_holding(check, module, {n: values[n] for n in drawn}, config.call)
    if holding:
        raise CheckFailure(check, f"after load_state_dict, {config.call}.parameters() yields the loaded "
                                  f"{' and '.join(holding)}: a running statistic is handed to every optimizer, which "
                                  "would train it, instead of being a buffer.", hint=hint)
