"""The modules checks pass correct solutions and catch each realistic mistake."""

import pytest
import torch

from autograder.checks import modules
from tests.mutants.modules import MUTANTS, mlp_sharing_weights_of_equal_size, tie_weight
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


def test_fit_returns_the_last_steps_loss_as_a_python_float():
    """The lesson: "return the final loss as a Python float (`loss.item()` of the last step)". A 0-d tensor, or a
    new loss after the loop, once accepted against that text, now loses the item that reads the return value."""
    def fit_after(model, x, y, steps=500, lr=0.1):
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        for _ in range(steps):
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        with torch.no_grad():
            return torch.nn.functional.mse_loss(model(x), y)

    def fit_after_item(model, x, y, steps=500, lr=0.1):
        return fit_after(model, x, y, steps, lr).item()

    tensor = failing(TOPIC, with_replacements(TOPIC, {"fit": fit_after}))
    assert set(tensor) == {"check_fit_matches_sgd"}
    assert "expected the final loss as a Python float" in tensor["check_fit_matches_sgd"]
    after = failing(TOPIC, with_replacements(TOPIC, {"fit": fit_after_item}))
    assert set(after) == {"check_fit_matches_sgd"}
    assert "the loss after training; expected the loss of the last step" in after["check_fit_matches_sgd"]


def test_fit_returning_the_model_is_told_to_return_a_number():
    def fit_model(model, x, y, steps=500, lr=0.1):
        reference(TOPIC)["fit"](model, x, y, steps=steps, lr=lr)
        return model

    message = failing(TOPIC, with_replacements(TOPIC, {"fit": fit_model}))["check_fit_matches_sgd"]
    assert "expected the final loss as a Python float" in message


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
    message = failing_among(TOPIC, with_replacements(TOPIC, replacements),
                            {"check_make_mlp_structure"})["check_make_mlp_structure"]
    assert "make_mlp([5, 5, 5]) puts the same Linear module at positions 0 and 2" in message
    assert "new torch.nn.Linear(n_in, n_out) for every consecutive pair" in message


def _same_memory(layer, first):
    layer.weight = torch.nn.Parameter(first.weight.data)    # a new Parameter on the same storage


@pytest.mark.parametrize("share", [tie_weight, _same_memory], ids=["same Parameter", "same storage"])
def test_weights_tied_between_distinct_layers_lose_only_the_structure(share):
    failed = failing_among(TOPIC, with_replacements(TOPIC, {"make_mlp": mlp_sharing_weights_of_equal_size(share)}),
                           {c for c in check_names(TOPIC) if "make_mlp" in c})
    assert set(failed) == {"check_make_mlp_structure"}
    message = failed["check_make_mlp_structure"]
    assert "make_mlp([5, 5, 5]) has 35 distinct parameter values; expected 60" in message
    assert "0.weight = 2.weight" in message and "tied" in message


# ------------------------------------------------------------------------------ Normalizer


@pytest.mark.parametrize("mistake, check, phrases", [
    ("Normalizer with running statistics as plain tensor attributes", "check_normalizer_buffers",
     ["running_mean is a plain tensor attribute", "self.register_buffer(\"running_mean\""]),
    ("Normalizer with running statistics as nn.Parameter", "check_normalizer_buffers",
     ["running_mean is an nn.Parameter", "the optimizer"]),
    ("Normalizer with non-persistent buffers", "check_normalizer_buffers", ["persistent=False"]),
    ("Normalizer wrapping nn.BatchNorm1d", "check_normalizer_buffers", ["found norm.running_mean, inside a submodule"]),
    ("Normalizer wrapping nn.BatchNorm1d", "check_normalizer_no_builtin", ["norm: BatchNorm1d"]),
    ("Normalizer calling F.batch_norm", "check_normalizer_no_builtin",
     ["torch.nn.functional.batch_norm", "aten.native_batch_norm", "in train mode"]),
    ("Normalizer updating running_var with the biased variance", "check_normalizer_train",
     ["running_var after train step 1", ": it was updated with the biased batch variance"]),
    ("Normalizer applying momentum the other way round", "check_normalizer_train",
     ["running_mean after train step 1", ": momentum is applied the other way round"]),
    ("Normalizer normalising with the unbiased variance", "check_normalizer_train",
     ["the train-mode output of Normalizer(", ": it divides by the unbiased batch variance"]),
    ("Normalizer adding eps outside the square root", "check_normalizer_eval",
     ["the eval-mode output", ": eps is added outside the square root"]),
    ("Normalizer normalising over the features of each row", "check_normalizer_train",
     [": it normalises each row over its features"]),
    ("Normalizer using batch statistics in eval mode", "check_normalizer_eval",
     [": it normalises with the batch's own statistics"]),
    ("Normalizer updating running statistics in eval mode", "check_normalizer_eval",
     ["in eval() mode changed running_mean", "read, never updated", "self.training"]),
    ("Normalizer updating running statistics with gradient history", "check_normalizer_gradients",
     ["carries autograd history", "grad_fn=AddBackward0", "with torch.no_grad():"]),
])
def test_normalizer_mistake_is_named(mistake, check, phrases):
    replacements, _ = MUTANTS[mistake]
    message = failing_among(TOPIC, with_replacements(TOPIC, replacements), {check})[check]
    for phrase in phrases:
        assert phrase in message


def test_first_normalizer_case_uses_the_defaults():
    calls = []

    class Recording(torch.nn.Module):
        def __init__(self, *args, **kwargs):
            super().__init__()
            calls.append((args, kwargs))
            raise RuntimeError("stop")

    failing_among(TOPIC, with_replacements(TOPIC, {"Normalizer": Recording}), {"check_normalizer_train"})
    (args, kwargs), = calls
    assert len(args) == 1 and kwargs == {}


class _NormalizerOtherSpellings(torch.nn.Module):
    """Correct, written otherwise: var_mean with keepdim, in-place lerp_ under no_grad, and an extra buffer that
    counts batches as BatchNorm1d's num_batches_tracked does."""

    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.m, self.e = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x):
        if self.training:
            var, mean = torch.var_mean(x, dim=0, keepdim=True, correction=0)
            n = x.shape[0]
            with torch.no_grad():
                self.running_mean.lerp_(mean.squeeze(0), self.m)
                self.running_var.lerp_(var.squeeze(0) * (n / (n - 1)), self.m)
                self.num_batches_tracked += 1
        else:
            mean, var = self.running_mean.unsqueeze(0), self.running_var.unsqueeze(0)
        return (x - mean) / (var + self.e).sqrt()


def test_other_normalizer_spellings_pass():
    normalizer_checks = {c for c in check_names(TOPIC) if "normalizer" in c}
    assert failing_among(TOPIC, with_replacements(TOPIC, {"Normalizer": _NormalizerOtherSpellings}),
                         normalizer_checks) == {}


class _NormalizerViaAten(_NormalizerOtherSpellings):
    def forward(self, x):
        return torch.ops.aten.native_batch_norm(x, None, None, self.running_mean, self.running_var, self.training,
                                                self.m, self.e)[0]


class _NormalizerViaInstanceNorm(_NormalizerOtherSpellings):
    def forward(self, x):      # each feature as an instance: correct in train mode, and batch norm underneath
        if not self.training:
            return (x - self.running_mean) / torch.sqrt(self.running_var + self.e)
        out = torch.nn.functional.instance_norm(x.t().unsqueeze(0), eps=self.e)
        return out.squeeze(0).t()


@pytest.mark.parametrize("normalizer", [_NormalizerViaAten, _NormalizerViaInstanceNorm], ids=["aten", "instance_norm"])
def test_batch_norm_in_any_spelling_is_seen(normalizer):
    message = failing_among(TOPIC, with_replacements(TOPIC, {"Normalizer": normalizer}),
                            {"check_normalizer_no_builtin"})["check_normalizer_no_builtin"]
    assert "which this exercise forbids" in message and "native_batch_norm" in message


def test_float32_normalizer_must_stay_float32():
    class Float64Out(_NormalizerOtherSpellings):
        def forward(self, x):
            return super().forward(x).double()

    message = failing_among(TOPIC, with_replacements(TOPIC, {"Normalizer": Float64Out}),
                            {"check_normalizer_train"})["check_normalizer_train"]
    assert "has dtype torch.float64, expected torch.float32" in message


def test_normalizer_modifying_x_in_place_is_told():
    class InPlace(_NormalizerOtherSpellings):
        def forward(self, x):
            out = super().forward(x)
            return x.copy_(out)

    message = failing_among(TOPIC, with_replacements(TOPIC, {"Normalizer": InPlace}),
                            {"check_normalizer_train"})["check_normalizer_train"]
    assert "changed its input" in message
