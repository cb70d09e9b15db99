"""The modules checks pass correct solutions and catch each realistic mistake."""

import pytest
import torch

from autograder.checks import modules
from tests.mutants.modules import MUTANTS
from tests.proving import check_names, failing, failing_among, reference, with_replacements

TOPIC = "modules"


def test_plain_tensor_message_names_the_attributes():
    replacements, _ = MUTANTS["Affine with plain tensors"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_affine_parameters"]
    assert "Affine().a and Affine().b are tensors but not registered as parameters" in message
    assert "torch.nn.Parameter" in message


def test_last_activation_message_says_where():
    replacements, _ = MUTANTS["make_mlp with an activation after the last layer"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_make_mlp_structure"]
    assert "no activation after the last layer" in message and "expected [Linear(3, 5)]" in message


def test_other_correct_spellings_pass():
    class AffineCommuted(torch.nn.Module):     # zeros as initial values, x * a + b
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(torch.zeros(1))
            self.b = torch.nn.Parameter(torch.zeros(1))

        def forward(self, x):
            return x * self.a + self.b

    def mlp_from_module_list(sizes, activation=torch.nn.ReLU):
        if len(sizes) < 2:
            raise ValueError("two sizes at least")
        layers = torch.nn.ModuleList(torch.nn.Linear(i, o) for i, o in zip(sizes, sizes[1:]))
        between = [activation() for _ in layers[1:]]
        return torch.nn.Sequential(*[m for pair in zip(layers, between + [None]) for m in pair if m is not None])

    assert failing(TOPIC, with_replacements(TOPIC, {"Affine": AffineCommuted,
                                                    "make_mlp": mlp_from_module_list})) == {}


def test_fit_may_return_a_zero_dim_tensor_or_the_loss_after_training():
    def fit_after(model, x, y, steps=500, lr=0.1):
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        for _ in range(steps):
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        with torch.no_grad():
            return torch.nn.functional.mse_loss(model(x), y)

    assert failing(TOPIC, with_replacements(TOPIC, {"fit": fit_after})) == {}


def test_fit_returning_the_model_is_told_to_return_a_number():
    def fit_model(model, x, y, steps=500, lr=0.1):
        reference(TOPIC)["fit"](model, x, y, steps=steps, lr=lr)
        return model

    message = failing(TOPIC, with_replacements(TOPIC, {"fit": fit_model}))["check_fit_matches_sgd"]
    assert "expected the final loss as a number" in message


def test_make_mlp_rejection_needs_a_working_two_size_model():
    def always_raises(sizes, activation=torch.nn.ReLU):
        raise ValueError("no")

    with pytest.raises(AssertionError) as excinfo:
        modules.check_make_mlp_rejects_short_sizes(always_raises)
    assert "raised ValueError: no" in str(excinfo.value)


def test_hanging_constructor_costs_only_affine_checks():
    class Hangs(torch.nn.Module):
        def __init__(self):
            raise RuntimeError("broken __init__")

    failed = failing(TOPIC, with_replacements(TOPIC, {"Affine": Hangs}))
    assert set(failed) == {c for c in check_names(TOPIC) if "affine" in c}
    assert "broken __init__" in failed["check_affine_forward"]


# ------------------------------------------------------------------ make_mlp: distinct layers


def test_reused_layer_message_names_the_positions():
    replacements, _ = MUTANTS["make_mlp reusing one Linear for layers of equal size"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_make_mlp_structure"]
    assert "make_mlp([5, 5, 5]) puts the same Linear module at positions 0 and 2" in message
    assert "new torch.nn.Linear(n_in, n_out) for every consecutive pair" in message


def _mlp_tying_weights(share):
    """Distinct Linear modules, but each layer of already seen sizes takes the first one's weight (``share``)."""
    def make_mlp(sizes, activation=torch.nn.ReLU):
        if len(sizes) < 2:
            raise ValueError("two sizes at least")
        first, layers = {}, []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            if i:
                layers.append(activation())
            layer = torch.nn.Linear(n_in, n_out)
            if (n_in, n_out) in first:
                share(layer, first[n_in, n_out])
            first.setdefault((n_in, n_out), layer)
            layers.append(layer)
        return torch.nn.Sequential(*layers)
    return make_mlp


def _same_parameter(layer, first):
    layer.weight = first.weight


def _same_memory(layer, first):
    layer.weight = torch.nn.Parameter(first.weight.data)    # a new Parameter on the same storage


@pytest.mark.parametrize("share", [_same_parameter, _same_memory], ids=["same Parameter", "same storage"])
def test_weights_tied_between_distinct_layers_lose_only_the_structure(share):
    failed = failing(TOPIC, with_replacements(TOPIC, {"make_mlp": _mlp_tying_weights(share)}))
    assert set(failed) == {"check_make_mlp_structure"}
    message = failed["check_make_mlp_structure"]
    assert "make_mlp([5, 5, 5]) has 35 distinct parameter values; expected 60" in message
    assert "0.weight = 2.weight" in message and "tied" in message

