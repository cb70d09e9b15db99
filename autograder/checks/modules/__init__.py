"""Checks for the ``modules`` assignment: the ``Affine`` module, ``make_mlp``, the training loop ``fit`` and the
``Normalizer`` (buffers and train / eval modes).

Modules are graded through what PyTorch sees of them (``named_parameters``,
``state_dict``, ``.to``, autograd), because that is what an optimizer, a
checkpoint and a device move rely on. ``fit`` is compared step for step with
``torch.optim.SGD`` on a copy of the same model, in float64; ``Normalizer`` with
``torch.nn.BatchNorm1d(affine=False)`` in float64 (``batchnorm_oracle``).
"""

import io

import torch

from autograder.checks.modules import batchnorm_oracle as oracle
from autograder.checks.modules import drawn_state
from autograder.checks.modules import normalizer_state as state
from autograder.checks.modules import probes
from autograder.checks.modules.contract import affine_input_labels, mlp_labels
from autograder.contracts import exercised, exercised_as
from autograder.errors import CheckFailure, named_kind
from autograder.measuring.compare import expect_close, expect_meta, known_kind
from autograder.measuring.expected_outputs import oracle as grader_oracle
from autograder.measuring.gradients import expect_grad_close, expect_gradcheck
from autograder.measuring.oprecorder import expect_no_forbidden_ops
from autograder.seam.student import describe
from autograder.source_evidence.source_rules import no_call
from autograder.spec import graded

PARAMETER_HINT = ("Register a and b as parameters: `self.a = torch.nn.Parameter(torch.randn(1))` in __init__, "
                  "after `super().__init__()`. A plain tensor attribute, or a Parameter kept in a Python list, is "
                  "invisible to parameters(), state_dict(), .to() and every optimizer.")


def _devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


# -------------------------------------------------------------------------- Affine

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


# ------------------------------------------------------------------------ make_mlp

def _mlp_cases(gen, extra):
    cases = [([3, 5], None), ([4, 8, 2], None), ([1, 16, 16, 1], torch.nn.Tanh), ((6, 3, 3, 2, 7), torch.nn.GELU),
             ([5, 5, 5], None), ((2, 7, 7, 7, 3), torch.nn.Tanh)]    # equal consecutive sizes: no layer reused
    activations = (None, torch.nn.Tanh, torch.nn.SiLU, torch.nn.Sigmoid, torch.nn.ELU)
    for _ in range(extra):
        length = int(torch.randint(2, 6, (1,), generator=gen))
        sizes = [int(s) for s in torch.randint(1, 13, (length,), generator=gen)]
        cases.append((sizes, activations[int(torch.randint(0, len(activations), (1,), generator=gen))]))
    return cases


def _build(check, make_mlp, sizes, activation):
    __tracebackhide__ = True
    if activation is None:
        return make_mlp(sizes)
    return make_mlp(sizes, activation=activation)


def _call_text(sizes, activation):
    return f"make_mlp({list(sizes)!r}" + (f", activation=torch.nn.{activation.__name__})" if activation else ")")


def _layer_text(layer):
    if isinstance(layer, torch.nn.Linear):
        return f"Linear({layer.in_features}, {layer.out_features}{'' if layer.bias is not None else ', bias=False'})"
    return probes.type_name(layer)


def _layers_differ(got, expected):
    """How the layers ``got`` differ from ``expected`` (both as :func:`_layer_text` writes them), in words that name
    no layer type: they are the failure's kind too, the same on every input."""
    if [t.replace(", bias=False", "") for t in got if t.startswith("Linear(")] != \
            [t for t in expected if t.startswith("Linear(")]:
        return "other Linear layers than the sizes ask for"
    if any("bias=False" in t for t in got):
        return "Linear layers without bias"
    acts = [t for t in got if not t.startswith("Linear(")]
    if not acts:
        return "no activation between the Linear layers"
    if not got[0].startswith("Linear("):
        return "an activation before the first Linear"
    if not got[-1].startswith("Linear("):
        return "an activation after the last Linear"
    if set(acts) != {t for t in expected if not t.startswith("Linear(")}:
        return "another activation than the one given"
    return "the layers in another order or number"


def _expected_layers(sizes, activation):
    name = (activation or torch.nn.ReLU).__name__
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        if i:
            layers.append(name)
        layers.append(f"Linear({n_in}, {n_out})")
    return layers


@graded(2, hidden=[{"extra": 12}], evidence=("data", "drawn state"),
         worker_facts="the layers' types and identities, distinct parameter values (structure probes)",
         facts_only_cost=True)
def check_make_mlp_structure(check, make_mlp, *, seed=0, extra=4):
    """An ``nn.Sequential`` of ``Linear`` layers (with bias) between consecutive sizes, an instance of
    ``activation`` (ReLU by default) between two of them and none after the last; every Linear its own module,
    and exactly sum(n_in * n_out + n_out) distinct parameter values (a layer or a weight shared between layers of
    equal size loses)."""
    __tracebackhide__ = True
    gen = check.generator()
    for sizes, activation in _mlp_cases(gen, extra):
        exercised_as(mlp_labels, sizes, activation)
        model = _build(check, make_mlp, sizes, activation)
        call = _call_text(sizes, activation)
        if not isinstance(model, torch.nn.Sequential):
            raise CheckFailure(check, f"{call} returned a {probes.type_name(model)}, not a torch.nn.Sequential.",
                               hint="Collect the layers in a list and return torch.nn.Sequential(*layers).")
        layers = list(model)
        got = [_layer_text(layer) for layer in layers]
        expected = _expected_layers(sizes, activation)
        if got != expected:
            note = ""
            if got[:len(expected)] == expected and len(got) > len(expected):
                note = " There must be no activation after the last layer: the output is not squashed."
            differ = _layers_differ(got, expected)
            raise CheckFailure(check, f"{call} has layers [{', '.join(got)}]: {differ}; "
                                      f"expected [{', '.join(expected)}].{note}", kind=f"failed: {differ}",
                               hint="One Linear(sizes[i], sizes[i + 1]) per consecutive pair, a new "
                                    "`activation()` between two Linear layers, nothing after the last.")
        _expect_distinct_layers(check, model, layers, call, got)
        count, shared = check.student(model).beside(probes.distinct_parameters)
        expected_count = sum(n_in * n_out + n_out for n_in, n_out in zip(sizes[:-1], sizes[1:]))
        if count != expected_count:
            note = (f" Some of them are one tensor under several names ({'; '.join(shared)}): those layers' weights "
                    "are tied.") if shared else ""
            raise CheckFailure(check, f"{call} has {count} distinct parameter values; expected {expected_count} "
                                      f"(weights and biases of every Linear layer).{note}",
                               hint="Keep the default bias=True and do not share layers or their weights: create a "
                                    "new torch.nn.Linear(n_in, n_out) for every pair inside the loop.")
        drawn_state.expect_mlp_follows_drawn_parameters(check, model, sizes, activation, gen, call)


def _expect_distinct_layers(check, model, layers, call, shown):
    """Every Linear of ``model`` is its own module object: a layer reused for equal sizes ties their weights."""
    __tracebackhide__ = True
    firsts = check.student(model).beside(probes.same_module_positions)     # identity is seen where the model lives
    for position, layer in enumerate(layers):
        first = firsts[position]
        if isinstance(layer, torch.nn.Linear) and first != position:
            raise CheckFailure(check, f"{call} puts the same Linear module at positions {first} and {position} "
                                      f"({shown[position]}): the two layers share one weight and one bias, so "
                                      "the model has fewer parameters than its sizes ask for, and training one "
                                      "layer changes the other.",
                               hint="Create a new torch.nn.Linear(n_in, n_out) for every consecutive pair "
                                    "inside the loop, even when two pairs have the same sizes; never reuse a "
                                    "layer object (a dict or a variable kept across iterations).")


def _reference_forward(model, sizes, activation, x):
    """The float64 output of the Linear layers of ``model``, in order (a layer that appears twice is applied
    twice), with ``activation`` between them."""
    act = (activation or torch.nn.ReLU)()
    out = x.double()
    linears = [m for _, m in model.named_modules(remove_duplicate=False) if isinstance(m, torch.nn.Linear)]
    for i, layer in enumerate(linears):
        if i:
            out = act(out)
        bias = None if layer.bias is None else layer.bias.detach().double()
        out = torch.nn.functional.linear(out, layer.weight.detach().double(), bias)
    return out, len(linears)


@graded(2, hidden=[{"extra": 12}])
def check_make_mlp_forward(check, make_mlp, *, seed=0, extra=4):
    """The model maps ``[..., sizes[0]]`` to ``[..., sizes[-1]]`` in float32, equal to a float64 pass through
    its Linear layers with the activation between them (and not after the last); backward from the output
    reaches every parameter."""
    __tracebackhide__ = True
    gen = check.generator()
    for sizes, activation in _mlp_cases(gen, extra):
        exercised_as(mlp_labels, sizes, activation)
        model = _build(check, make_mlp, sizes, activation)
        call = _call_text(sizes, activation)
        if not isinstance(model, torch.nn.Module):
            raise CheckFailure(check, f"{call} returned a {probes.type_name(model)}, not a torch.nn.Module.")
        for batch in ([5], [2, 3]):
            x = torch.randn(batch + [sizes[0]], generator=gen)
            exercised(f"batch_rank_{len(batch)}")
            out = check.student(model, call)(x)
            expect_meta(check, out, what=f"the output of {call}", shape=batch + [sizes[-1]], dtype=torch.float32,
                        inputs={"x": x})
            expected, linears = _reference_forward(model, sizes, activation, x)
            if linears != len(sizes) - 1:
                raise CheckFailure(check, f"{call} contains {linears} Linear layers; expected {len(sizes) - 1}.")
            expect_close(check, out, expected, what=f"the output of {call}", inputs={"x": x}, rtol=1e-4, atol=1e-5,
                         hint="Apply the activation between consecutive Linear layers only; the last layer's "
                              "output is returned as it is.")
        model.zero_grad(set_to_none=True)
        out.sum().backward()
        missing = check.student(model).beside(probes.missing_grads)     # the gradients accumulate where the model lives
        if missing:
            raise CheckFailure(check, f"after backward through {call}, these parameters got no gradient: "
                                      f"{', '.join(missing)}.", hint="Every layer must take part in forward.")


@graded(1, hidden=[{}])
def check_make_mlp_rejects_short_sizes(check, make_mlp, *, seed=0):
    """Fewer than two sizes (``[]``, ``[n]``, ``(n,)``) raise ``ValueError``; two sizes build a model."""
    __tracebackhide__ = True
    n = 1 + (seed * 7 + 4) % 16
    for sizes in ([], [n], (n,)):
        exercised(("no_size", "one_size")[len(sizes)], "tuple_sizes" if isinstance(sizes, tuple) else "list_sizes")
        make_mlp.raises(sizes, expected=ValueError)
    model = make_mlp([n, 2])
    if not isinstance(model, torch.nn.Module):
        raise CheckFailure(check, f"make_mlp([{n}, 2]) returned {describe(model)}; expected a torch.nn.Module.")


# ----------------------------------------------------------------------------- fit

def _as_float(check, value, call):
    """The lesson asks for "the final loss as a Python float (`loss.item()` of the last step)": a tensor, even of
    one element, is not one (it keeps the last step's graph alive, and the caller must ``.item()`` it)."""
    __tracebackhide__ = True
    if isinstance(value, float):
        return float(value)
    raise CheckFailure(check, f"{call} returned {describe(value)}; expected the final loss as a Python float.",
                       hint="Return loss.item() from the last step: a tensor, even of one element, is not a Python "
                            "float.", kind="wrong type")


def _fit_models(gen):
    line, mlp = probes.fit_architecture("line"), probes.fit_architecture("mlp")
    for model in (line, mlp):
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    return [(line.double(), 1, 1), (mlp.double(), 3, 2)]


def _model_for(fit, model, kind):
    """The model to hand ``fit``: a twin of ``model`` (its architecture and parameters) built where ``fit`` lives, so
    that ``fit`` trains it in place there (the check reads the trained parameters back, as copies from a worker)."""
    return fit.beside(probes.fit_model, kind, {n: t.detach().clone() for n, t in model.state_dict().items()})


@graded(2, hidden=[{"cases": 8}])
def check_fit_matches_sgd(check, fit, *, seed=0, cases=4):
    """``fit(model, x, y, steps=..., lr=...)`` trains ``model`` itself exactly like ``steps`` steps of
    ``torch.optim.SGD(lr)`` on the mean squared error (float64, a line and a small MLP, steps and lr the student
    has not seen), and returns the final loss as a Python float: the loss of the last step, as the lesson says
    ("`loss.item()` of the last step"), computed before that step's update."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        model, n_in, n_out = _fit_models(gen)[i % 2]
        kind = ("line", "mlp")[i % 2]
        steps = int(torch.randint(1, 30, (1,), generator=gen))
        lr = float(torch.empty(1).uniform_(0.02, 0.2, generator=gen))
        x = torch.randn(16, n_in, generator=gen, dtype=torch.float64)
        y = torch.randn(16, n_out, generator=gen, dtype=torch.float64)
        exercised(f"{kind}_model", "drawn_steps_and_lr", "float64")
        expected_model, losses, after, mistaken = grader_oracle("modules.sgd_training", model, x, y, steps, lr)
        initial = {name: p.detach().clone() for name, p in model.named_parameters()}
        given = model
        model = _model_for(fit, given, kind)
        call = f"fit(model, x, y, steps={steps}, lr={lr:.4g}) on {model}".replace("\n", " ")
        result = fit(model, x, y, steps=steps, lr=lr)
        trained = dict(model.named_parameters())
        at_half_lr = _trained_again(fit, given, kind, x, y, steps, lr / 2, initial, trained)
        for name, expected in expected_model.named_parameters():
            expect_close(check, trained[name], expected, what=f"parameter {name} after {call}",
                         inputs={"x": x, "y": y}, rtol=1e-7, atol=1e-9,
                         known=_known_training_mistakes(name, initial, mistaken) + _known_lr_ignored(name, at_half_lr),
                         hint="Train the model you are given (no copy), with torch.optim.SGD(model.parameters(), "
                              "lr=lr), loss = mse_loss(model(x), y) (the mean, on predictions shaped like y: "
                              "[N] against [N, 1] broadcasts to [N, N]), and zero_grad, backward, step once per "
                              "step.")
        loss = _as_float(check, result, call)
        if not abs(loss - losses[-1]) <= 1e-6 * abs(losses[-1]) + 1e-12:
            if abs(loss - after) <= 1e-6 * abs(after) + 1e-12:
                kind = "failed: returned the loss after training"
                said = (f"{call} returned {loss:.8g}, the loss after training; expected the loss of the last step, "
                        f"{losses[-1]:.8g} (computed before its update).")
            else:
                kind = "failed: returned another loss than the last step's"
                said = (f"{call} returned {loss:.8g}; expected the final loss, {losses[-1]:.8g}: the loss of the last "
                        f"step (computed before its update).")
            raise CheckFailure(check, said, kind=kind,
                               hint="Return loss.item() of the loss the last step computed (the one it called "
                                    "backward on), not the first loss, a sum of losses, or a new loss after the loop.")


def _known_training_mistakes(name, initial, mistaken):
    """The training mistakes parameter ``name``'s values show (``expect_close``'s ``known``): it never changed (the
    model given was not the one trained), or it is what SGD gives when the gradients are never zeroed, with
    momentum, or on a squeezed prediction (the grader oracle's ``mistaken`` runs)."""
    return (("the value it had before fit: the model you were given did not train", lambda _: initial[name].double(),
             "Train the model passed in (no `copy.deepcopy`, no new model): `fit` changes its parameters in place."),
            ("what SGD gives when the gradients are never zeroed (they add up over the steps)",
             lambda _: mistaken["accumulated"][name].double(),
             "Call `optimizer.zero_grad()` once per step, before `backward()`: `.grad` accumulates otherwise."),
            ("what SGD with momentum gives", lambda _: mistaken["momentum"][name].double(),
             "Plain SGD, as the lesson asks: `torch.optim.SGD(model.parameters(), lr=lr)`, no momentum."),
            ("what SGD gives on a squeezed prediction: [N] against y's [N, 1] broadcasts to [N, N] in the loss",
             lambda _: mistaken["squeezed"][name].double(),
             "Compare predictions shaped like y: `mse_loss(model(x), y)` on [N, 1] and [N, 1], with no `squeeze()` "
             "or `view(-1)` on one side only."))


def _trained_again(fit, given, kind, x, y, steps, lr, initial, trained):
    """``{name: parameter}`` after ``fit`` on a fresh twin of ``given`` with the same data and steps at another
    learning rate, run once and only when asked (a mismatch), or ``None`` when the first run left the parameters as
    they were (then no learning rate made a difference, and the model before fit tells that mistake)."""
    if all(torch.equal(trained[name].detach().cpu(), value.to(trained[name].dtype)) for name, value in initial.items()):
        return None
    runs = {}

    def parameters():
        if "trained" not in runs:
            model = _model_for(fit, given, kind)
            try:
                fit(model, x, y, steps=steps, lr=lr)
                runs["trained"] = {name: p.detach().clone() for name, p in model.named_parameters()}
            except CheckFailure:
                runs["trained"] = {}
        return runs["trained"]
    return parameters


def _known_lr_ignored(name, at_half_lr):
    """``fit`` ignores ``lr`` (``expect_close``'s ``known``): the same parameters when trained again at half the
    learning rate. A result that does not depend on lr is what an lr of the student's own choosing gives."""
    if at_half_lr is None:
        return ()

    def again(expected):
        value = at_half_lr().get(name)
        return value.double() if value is not None else torch.full_like(expected, float("nan"))
    return (("what fit also gives at half that learning rate: the result does not depend on lr", again,
             "Pass the `lr` argument to the optimizer: `torch.optim.SGD(model.parameters(), lr=lr)`, not a fixed "
             "learning rate."),)


@graded(2, hidden=[{"cases": 3}])
def check_fit_recovers_line(check, fit, *, seed=0, cases=2):
    """On 100 noisy samples y = 5x + 3 + N(0, 0.3^2) with x in [-2, 2], ``fit`` on an ``nn.Linear(1, 1)``
    (300 steps, lr 0.1) reaches the least-squares line (within 0.01), which is within 0.25 of slope 5 and
    intercept 3 (the least-squares estimates have standard deviations of about 0.03)."""
    __tracebackhide__ = True
    gen = check.generator()
    for _ in range(cases):
        x = torch.rand(100, 1, generator=gen) * 4 - 2
        y = 5 * x + 3 + 0.3 * torch.randn(100, 1, generator=gen)
        model = torch.nn.Linear(1, 1)
        with torch.no_grad():
            model.weight.copy_(torch.randn(1, 1, generator=gen))
            model.bias.copy_(torch.randn(1, generator=gen))
        model = _model_for(fit, model, "line")
        design = torch.cat([x.double(), torch.ones_like(x.double())], dim=1)
        least_squares = torch.linalg.lstsq(design, y.double()).solution.reshape(-1)
        exercised("noisy_line", "float32")
        fit(model, x, y, steps=300, lr=0.1)
        got = torch.cat([model.weight.detach().reshape(-1), model.bias.detach().reshape(-1)])
        inputs = {"x": x, "y": y}
        expect_close(check, got, least_squares, what="[slope, intercept] after fit(model, x, y, steps=300, lr=0.1)",
                     inputs=inputs, rtol=0.0, atol=0.01,
                     hint="The loop should reach the least-squares line: SGD on the mean squared error, "
                          "zero_grad before each backward, and the model you were given trained in place.")
        expect_close(check, got, torch.tensor([5.0, 3.0], dtype=torch.float64), inputs=inputs,
                     what="[slope, intercept] after fit(model, x, y, steps=300, lr=0.1)", rtol=0.0, atol=0.25)


# ---------------------------------------------------------------------- Normalizer

ORACLE_HINT = ("Compare with the oracle yourself: `bn = torch.nn.BatchNorm1d(num_features, momentum=momentum, eps=eps, "
               "affine=False).double()` run on the same batches, then bn.running_mean and bn.running_var.")


def _expect_statistic(check, module, name, expected, config, step, x, previous, held_dtype):
    """``module.<name>`` after train step ``step`` equals BatchNorm1d's, within the tolerance of the dtype the
    module held its statistics in (``held_dtype``); a known mistake is named."""
    __tracebackhide__ = True
    got = state.statistic(check, module, name, config)
    tolerance = oracle.tolerance(held_dtype)
    try:
        expect_close(check, got, expected, what=f"{name} after train step {step} of {config.call}",
                     inputs={"x": x}, **tolerance)
    except CheckFailure as failure:
        what = f"{name} after train step {step} of {config.call}"
        mistake = oracle.which_mistake(got, oracle.running_mistakes(name, previous, x.double(), config.momentum),
                                       **tolerance)
        raise _told(check, failure, what, mistake,
                    f"In train() mode, {name} = (1 - momentum) * {name} + momentum * (the batch "
                    f"{'mean' if name == 'running_mean' else 'variance with N - 1'}). " + ORACLE_HINT) from None


def _expect_output(check, out, expected, x, what, mistakes, hint):
    __tracebackhide__ = True
    expect_meta(check, out, what=what, shape=x.shape, dtype=x.dtype, inputs={"x": x},
                hint="The output has the input's shape [N, num_features]: reduce over dim 0 with keepdim, or let "
                     "the [num_features] statistics broadcast.")
    try:
        expect_close(check, out, expected, what=what, inputs={"x": x}, **oracle.tolerance(out.dtype))
    except CheckFailure as failure:
        raise _told(check, failure, what, oracle.which_mistake(out, mistakes, **oracle.tolerance(out.dtype)),
                    hint) from None


def _told(check, failure, what, mistake, hint):
    """``failure`` told as the known ``mistake`` it looks like (or as it is, for ``None``), the mistake in the first
    line and as its kind, so that two mistakes are two kinds (``autograder.feedback``)."""
    return CheckFailure(check, f"{what}: {mistake}.\n{failure.detail}" if mistake else failure.detail, hint=hint,
                        kind=known_kind(mistake) if mistake else failure.kind)


@graded(2, hidden=[{}], evidence=("data", "drawn state"),
        worker_facts="which tensors are buffers and which parameters (a probe)", facts_only_cost=True)
def check_normalizer_buffers(check, Normalizer, *, seed=0):
    """``Normalizer(num_features, momentum, eps)`` has buffers ``running_mean`` (zeros) and ``running_var``
    (ones) of shape [num_features] in the default dtype: registered (``named_buffers``), not parameters, not
    requiring grad, persistent (in ``state_dict``, and a saved state loads into a fresh module), converted by
    ``.to(torch.float64)`` and ``.double()`` (and ``.to("cuda")`` where there is a GPU), and still buffers after a
    train step."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(3):
        config = oracle.draw_config(gen, defaults=i == 0)
        exercised("default_config" if i == 0 else "drawn_config")
        module = state.new_normalizer(check, Normalizer, config)
        for name, initial in oracle.BUFFERS.items():
            kind, problem = state.buffer_problem(module, name, config) or (None, None)
            if problem:
                raise CheckFailure(check, problem + ".", hint=state.BUFFER_HINT, kind=kind)
            value = state.statistic(check, module, name, config)
            if value.dtype != torch.get_default_dtype():
                raise CheckFailure(check, f"{config.call}.{name} has dtype {value.dtype}; expected the default "
                                          f"{torch.get_default_dtype()}.",
                                   hint="Do not fix the dtype in __init__: callers choose it with .to(dtype).")
            if value.requires_grad:
                raise CheckFailure(check, f"{config.call}.{name} requires grad; a running statistic is not trained.",
                                   hint=state.BUFFER_HINT)
            if not torch.equal(value, torch.full_like(value, initial)):
                raise CheckFailure(check, f"{config.call}.{name} starts as {describe(value)}; expected all "
                                          f"{initial:g} (as BatchNorm1d: mean 0, variance 1).",
                                   hint=f"torch.{'zeros' if initial == 0 else 'ones'}(num_features).")
        saved = probes.state_of(module)
        missing = [n for n in oracle.BUFFERS if n not in saved]
        if missing:
            raise CheckFailure(check, f"{config.call}.state_dict() has keys {sorted(saved)}, without "
                                      f"{', '.join(missing)}: a checkpoint would lose the statistics (a buffer "
                                      "registered with persistent=False is left out of state_dict).",
                               hint="register_buffer(name, tensor) with the default persistent=True.")
        exercised("state_dict_round_trip", "converted")
        state.expect_state_round_trip(check, Normalizer, module, config, gen)
        state.expect_conversions(check, Normalizer, config, gen)
        drawn_state.expect_normalizer_follows_drawn_statistics(
            check, state.new_normalizer(check, Normalizer, config), config, gen, hint=state.BUFFER_HINT)


@graded(3, hidden=[{"cases": 12}])
def check_normalizer_train(check, Normalizer, *, seed=0, cases=6):
    """In ``train()`` mode, over 2 to 5 steps, the output is ``(x - mean) / sqrt(var + eps)`` with the batch's mean
    and biased variance, and ``running_mean`` / ``running_var`` follow ``(1 - momentum) * running + momentum *
    batch_stat`` (unbiased variance), exactly as ``BatchNorm1d(affine=False)`` in float64 (random N >= 2,
    num_features, momentum, eps, the defaults once, constant features); a float32 module keeps float32."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        config = oracle.draw_config(gen, defaults=i == 0)
        dtype = torch.float32 if i == cases - 1 else torch.float64
        exercised("default_config" if i == 0 else "drawn_config", str(dtype).removeprefix("torch."))
        module = state.new_normalizer(check, Normalizer, config)
        if dtype == torch.float64:
            module = state.convert(check, module, config, method="double")
        state.set_mode(check, module, True, config)
        # statistics left in float32 by .double() (not buffers) are compared at float32's tolerance: that
        # mistake costs check_normalizer_buffers, not this check
        held = {name: state.statistic(check, module, name, config).dtype for name in oracle.BUFFERS}
        reference = config.batchnorm()
        for step in range(1, int(torch.randint(2, 6, (1,), generator=gen)) + 1):
            n = 2 if i == 1 and step == 1 else oracle.batch_size(gen)
            x = oracle.draw_batch(gen, n, config.features, dtype=dtype, wide=dtype == torch.float64)
            exercised(*(["batch_of_2"] if n == 2 else []), *(["several_steps"] if step > 1 else []))
            previous = {name: getattr(reference, name).clone() for name in oracle.BUFFERS}
            expected = oracle.run(reference, x)
            out = check.student(module, f"{config.call} in train mode")(x)
            _expect_output(check, out, expected, x, f"the train-mode output of {config.call} at step {step}",
                           oracle.train_output_mistakes(x.double(), config.eps),
                           hint="In train() mode normalise with the batch's own statistics over dim 0: "
                                "(x - x.mean(0)) / torch.sqrt(x.var(0, correction=0) + eps). " + ORACLE_HINT)
            for name in oracle.BUFFERS:
                _expect_statistic(check, module, name, getattr(reference, name), config, step, x, previous[name],
                                  held[name])


@graded(2, hidden=[{"cases": 8}])
def check_normalizer_eval(check, Normalizer, *, seed=0, cases=4):
    """After train steps, in ``eval()`` mode the output is ``(x - running_mean) / sqrt(running_var + eps)`` with the
    statistics the module holds (set to random values; BatchNorm1d in float64 as the oracle), for N from 1 up;
    eval calls change no buffer, and work under ``torch.no_grad()``."""
    __tracebackhide__ = True
    gen = check.generator()
    for _ in range(cases):
        config = oracle.draw_config(gen)
        module = state.convert(check, state.new_normalizer(check, Normalizer, config), config, method="double")
        state.set_mode(check, module, True, config)
        for _ in range(2):
            check.student(module, f"{config.call} in train mode")(
                oracle.draw_batch(gen, oracle.batch_size(gen), config.features))
        reference = config.batchnorm()
        held = {}
        running = oracle.draw_running(gen, config.features)
        state.set_statistics(check, module, config, dict(zip(oracle.BUFFERS, running)))
        with torch.no_grad():
            for name in oracle.BUFFERS:
                held[name] = state.statistic(check, module, name, config).detach().double().cpu().clone()
                getattr(reference, name).copy_(held[name])
        state.set_mode(check, module, False, config)
        exercised("after_train_steps")
        reference.eval()
        for n in (1, oracle.batch_size(gen)):
            x = oracle.draw_batch(gen, n, config.features)
            exercised(*(["batch_of_1"] if n == 1 else []))
            what = (f"the eval-mode output of {config.call} (running_mean = {describe(held['running_mean'])}, "
                    f"running_var = {describe(held['running_var'])})")
            mistakes = oracle.eval_output_mistakes(x, held["running_mean"], held["running_var"], config.eps)
            hint = ("In eval() mode normalise with the module's own statistics, (x - self.running_mean) / "
                    "torch.sqrt(self.running_var + eps), and update nothing.")
            out = check.student(module, f"{config.call} in eval mode")(x)
            expected = oracle.run(reference, x)
            _expect_output(check, out, expected, x, what, mistakes, hint)
            state.expect_unchanged(check, module, config, held, x)
            exercised("under_no_grad")
            with torch.no_grad():
                under_no_grad = check.student(module, f"{config.call} in eval mode under torch.no_grad()")
                again = under_no_grad.via(probes.call_without_grad, x, shown=(x,))
            _expect_output(check, again, expected, x, what + " under torch.no_grad()", mistakes, hint)
            state.expect_unchanged(check, module, config, held, x)


@graded(2, hidden=[{"cases": 6}])
def check_normalizer_gradients(check, Normalizer, *, seed=0, cases=3):
    """In ``train()`` mode the gradient with respect to ``x`` equals BatchNorm1d's (float64, through the batch
    mean and variance) and passes ``gradcheck``; the running statistics carry no autograd history afterwards."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        config = oracle.draw_config(gen, max_features=4)
        module = state.convert(check, state.new_normalizer(check, Normalizer, config), config, method="double")
        state.set_mode(check, module, True, config)
        x = oracle.draw_batch(gen, 2 if i == 0 else oracle.batch_size(gen, 2, 6), config.features, wide=False)
        exercised("gradcheck_float64", "x_requires_grad")

        def vjp(grad_output, x=x, config=config):
            leaf = x.detach().clone().requires_grad_(True)
            with oracle.one_thread():
                (grad,) = torch.autograd.grad(config.batchnorm()(leaf), leaf, grad_output)
            return grad

        try:
            expect_grad_close(check, module, [x], vjp, what=f"{config.call} in train mode", rtol=1e-7, atol=1e-9,
                              shape=x.shape, hint="A wrong output has a wrong gradient: make check_normalizer_train pass first. "
                                   "Then keep the batch mean and variance in the graph (no .detach() on them, no "
                                   ".item()): the gradient flows through them too. " + ORACLE_HINT)
            expect_gradcheck(check, module, [x], what=f"{config.call} in train mode")
        except CheckFailure as failure:
            raise CheckFailure(check, f"{config.call}.double() in train mode, on x = {describe(x)}: "
                                      f"{failure.detail}", hint=failure.hint) from None
        for name in oracle.BUFFERS:
            value = state.statistic(check, module, name, config)
            requires_grad, grad_fn = check.student(module).beside(probes.history, name)    # autograd history stays in its process
            if requires_grad or grad_fn is not None:
                raise CheckFailure(check, f"after train-mode calls on an x that requires grad, {config.call}.{name} "
                                          f"carries autograd history ({describe(value)}, grad_fn="
                                          f"{grad_fn}): every "
                                          "step's graph stays alive through it, memory grows with each step, and a "
                                          "later backward runs into old steps.", hint=state.NO_GRAD_HINT)


@graded(1, hidden=[{}], source=[no_call("Normalizer", "batch_norm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
                                                "LazyBatchNorm1d", "SyncBatchNorm", "native_batch_norm")],
        worker_facts="the ATen ops recorded; the submodules' types", facts_only_cost=True)
def check_normalizer_no_builtin(check, Normalizer, *, seed=0):
    """Built from elementary operations: no ``F.batch_norm``, ``torch.batch_norm`` or any batch-norm kernel
    (the op recorder sees every spelling), in train and in eval mode, and no ``BatchNorm`` submodule."""
    __tracebackhide__ = True
    gen = check.generator()
    config = oracle.draw_config(gen)
    module = state.new_normalizer(check, Normalizer, config)
    builtin = [f"{name or '(the module itself)'}: {probes.type_name(m)}" for name, m in module.named_modules()
               if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]   # BatchNorm1d/2d/3d, Lazy*, SyncBatchNorm
    if builtin:
        raise CheckFailure(check, f"{config.call} contains a built-in batch norm ({'; '.join(builtin)}), which this "
                                  "exercise forbids.",
                           hint="Compute the statistics and the normalisation yourself from mean, var, sqrt.")
    hint = ("Compute it from elementary operations: x.mean(0), x.var(0, correction=...), torch.sqrt, and the "
            "running update by hand.")
    for train in (True, False):
        state.set_mode(check, module, train, config)
        x = oracle.draw_batch(gen, oracle.batch_size(gen), config.features, dtype=torch.float32, wide=False)
        exercised("train_mode" if train else "eval_mode")
        mode = "train" if train else "eval"
        expect_no_forbidden_ops(check, module, x, forbidden=oracle.FORBIDDEN, what=f"{config.call} in {mode} mode",
                                hint=hint)
