"""The ``make_mlp`` exercise's checks: an ``nn.Sequential`` of distinct ``Linear`` layers with the activation between
them (read from the model and judged by what drawn weights give, ``drawn_state``), its forward pass and its
gradients, and a ``ValueError`` for fewer than two sizes."""

import torch

from autograder.checks.modules import drawn_state, probes
from autograder.checks.modules.contract import mlp_labels
from autograder.contracts import exercised, exercised_as
from autograder.errors import CheckFailure
from autograder.measuring.compare import expect_close, expect_meta
from autograder.seam.student import describe
from autograder.spec import graded


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
