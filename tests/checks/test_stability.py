"""The stability checks pass correct solutions and catch each realistic mistake."""

import math

import pytest
import torch

from autograder.checks import stability
from autograder.measuring.gradients import call_source, tensor_source
from tests.mutants.stability import MUTANTS
from tests.proving import check_names, failing, failing_among, reference, with_replacements

TOPIC = "stability"


def test_global_max_message_names_the_problem():
    replacements, _ = MUTANTS["softmax with one max over the whole tensor"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_softmax_extremes"]
    assert "per row" in message and "NaN" in message and "Input: logits" in message


def test_forbidden_alias_is_named():
    def sneaky(logits, dim=-1):
        return torch.special.softmax(logits, dim)

    with pytest.raises(AssertionError) as excinfo:
        stability.check_softmax_no_builtin(sneaky)
    assert "torch.special" in str(excinfo.value)


def test_raising_function_costs_only_its_check():
    def broken(labels, logits, dim=-1):
        raise RuntimeError("boom")

    failed = failing(TOPIC, with_replacements(TOPIC, {"softmax_cross_entropy": broken}))
    assert set(failed) == {c for c in check_names(TOPIC) if "cross_entropy" in c}
    assert "raised RuntimeError: boom" in failed["check_cross_entropy_forward"]


def test_wrong_type_and_shape_get_clear_messages():
    failed = failing(TOPIC, with_replacements(TOPIC, {"stable_softmax": lambda logits, dim=-1: [0.5]}))
    assert "should be a torch.Tensor, got list" in failed["check_softmax_forward"]
    failed = failing(TOPIC, with_replacements(TOPIC, {"stable_softmax": lambda logits, dim=-1: logits.sum()}))
    assert "has shape []" in failed["check_softmax_forward"]


def test_output_flood_is_truncated_in_the_message():
    def chatty(labels, logits, dim=-1):
        print("x" * 100_000)
        raise ValueError("after printing")

    message = failing(TOPIC, with_replacements(TOPIC, {"softmax_cross_entropy": chatty}))["check_cross_entropy_forward"]
    assert "more characters of output dropped" in message
    assert len(message) < 10_000


def test_result_on_another_device_gets_a_clear_message():
    failed = failing(TOPIC, with_replacements(TOPIC, {"stable_softmax": lambda logits, dim=-1: logits.to("meta")}))
    assert "is on meta, expected cpu" in failed["check_softmax_forward"]
    assert "never hard-code" in failed["check_softmax_forward"]


# ------------------------------------------------ messages that name the real cause, with a call to paste

SOFTMAX_CHECKS = {"check_softmax_forward", "check_softmax_extremes", "check_softmax_gradient"}
PROBE_CALL = "stable_softmax(torch.tensor([[1e4, 1e4 - 1.0, 0.0], [1.0, 2.0, 3.0]]), dim=-1)"


def _repro(message):
    """The pasteable call of a message ("To reproduce, run: ..."), or None."""
    for line in message.splitlines():
        if line.startswith("To reproduce, run: "):
            return line[len("To reproduce, run: "):]
    return None


def test_global_max_softmax_fails_forward_with_its_real_cause():
    """The tutorial's global max first fails check_softmax_forward on a bfloat16 batch ([2, 5, 2, 3], dim -2)
    by tolerance alone; the message must name the global max and give a call that shows it, not say
    "normalise along dim"."""
    replacements, _ = MUTANTS["softmax with one max over the whole tensor"]
    failed = failing_among(TOPIC, with_replacements(TOPIC, replacements), SOFTMAX_CHECKS)
    message = failed["check_softmax_forward"]
    assert "torch.bfloat16" in message and "shape [2, 5, 2, 3]" in message
    assert "one max over the whole tensor" in message and PROBE_CALL in message
    assert "Normalise along `dim` only" not in message
    assert "Hint: Take the max per row, along `dim`" in message
    for check in ("check_softmax_extremes", "check_softmax_gradient"):
        assert PROBE_CALL in failed[check]
    out = eval(PROBE_CALL, {"torch": torch, "stable_softmax": replacements["stable_softmax"]})
    assert torch.isfinite(out[0]).all() and torch.isnan(out[1]).all()     # the call shows what the message says


@pytest.mark.parametrize("mistake", ["softmax forgetting keepdim", "softmax without the max-shift",
                                     "softmax summing over the wrong dim", "softmax with NaN for float16 input"])
def test_other_softmax_mistakes_are_not_blamed_on_a_global_max(mistake):
    replacements, _ = MUTANTS[mistake]
    for message in failing_among(TOPIC, with_replacements(TOPIC, replacements), SOFTMAX_CHECKS).values():
        assert "over the whole tensor" not in message.split("Hint:")[0]


def test_cross_entropy_gradient_failure_shows_the_full_call():
    """A cross-entropy missing keepdim fails the gradient check on a [2, 3] batch: the message shows labels,
    logits and dim, and its pasteable call raises the same error."""
    replacements, _ = MUTANTS["cross-entropy without keepdim in the log-sum"]
    message = failing_among(TOPIC, with_replacements(TOPIC, replacements),
                            {"check_cross_entropy_gradient"})["check_cross_entropy_gradient"]
    call = _repro(message)
    assert call and call.startswith("softmax_cross_entropy(torch.tensor([[0.25, 0.75, 0.0]") and "dim=-1)" in call
    assert "requires_grad=True" in call
    with pytest.raises(RuntimeError, match="must match the size"):
        eval(call, {"torch": torch, "softmax_cross_entropy": replacements["softmax_cross_entropy"]})


def test_wrong_cross_entropy_gradient_names_labels_logits_and_dim():
    def doubled_gradient(labels, logits, dim=-1):        # right values, twice the gradient
        loss = stability_reference(labels, logits, dim)
        return loss + (stability_reference(labels, logits, dim) - stability_reference(labels, logits.detach(), dim))

    with pytest.raises(AssertionError) as excinfo:
        stability.check_cross_entropy_gradient(doubled_gradient)
    message = str(excinfo.value)
    assert "the gradient with respect to `logits`" in message
    assert "labels = tensor of shape [2, 3]" in message and "dim = -1" in message
    call = _repro(message)
    assert call and "dim=-1" in call and call.count("torch.tensor(") == 2


def stability_reference(labels, logits, dim):
    z = logits - logits.amax(dim=dim, keepdim=True)
    return -(labels * (z - z.exp().sum(dim=dim, keepdim=True).log())).sum(dim=dim)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_pasteable_tensors_give_the_same_bits_back(dtype):
    x = torch.tensor([0.1, -1e-3, 3.0, float("inf"), -float("inf"), torch.finfo(dtype).max], dtype=torch.float64)
    x = torch.cat([x.to(dtype), (torch.randn(6, dtype=torch.float64) * 1e3).to(dtype)]).reshape(3, 4)
    text = tensor_source(x, requires_grad=True)
    back = eval(text, {"torch": torch})
    assert back.dtype == dtype and back.requires_grad and torch.equal(back.detach(), x)
    assert torch.isnan(eval(tensor_source(torch.tensor([float("nan")])), {"torch": torch})).all()
    assert eval(tensor_source(torch.empty(0, 3)), {"torch": torch}).shape == (0, 3)
    assert tensor_source(torch.zeros(100)) is None and call_source("f", [torch.zeros(100)]) is None


# ------------------------------------------------------------------ Softplus

def test_softplus_extreme_failure_names_the_inputs_and_reproduces():
    replacements, _ = MUTANTS["softplus as log1p(exp(x))"]
    message = failing_among(TOPIC, with_replacements(TOPIC, replacements),
                            {"check_softplus_extremes"})["check_softplus_extremes"]
    assert "x = 11.5938: expected 11.5938, got inf" in message and "Hint: log(1 + exp(x)) overflows" in message
    out = eval(_repro(message), {"torch": torch, "softplus": replacements["softplus"]})
    assert torch.isinf(out).all()


def test_softplus_nan_gradient_failure_reproduces():
    replacements, _ = MUTANTS["softplus backward as exp(x) / (1 + exp(x))"]
    message = failing_among(TOPIC, with_replacements(TOPIC, replacements),
                            {"check_softplus_gradient"})["check_softplus_gradient"]
    assert "got nan" in message and "inf / inf = NaN" in message
    namespace = {"torch": torch, "softplus": replacements["softplus"]}
    exec(_repro(message).replace("print(x.grad)", "grad = x.grad"), namespace)
    assert torch.isnan(namespace["grad"]).all()


def test_plain_softplus_loses_the_custom_backward_check_and_its_gradient_at_zero():
    replacements, _ = MUTANTS["softplus as a plain function (no custom backward)"]
    failed = failing_among(TOPIC, with_replacements(TOPIC, replacements),
                           {"check_softplus_custom_backward", "check_softplus_gradient"})
    assert "grad_fn AddBackward0, not one made by Softplus" in failed["check_softplus_custom_backward"]
    assert "x = 0: expected 0.5, got 0" in failed["check_softplus_gradient"]


def test_softplus_wrapped_after_apply_is_told_to_return_apply_itself():
    Softplus = reference(TOPIC)["Softplus"]
    with pytest.raises(AssertionError) as excinfo:
        stability.check_softplus_custom_backward(Softplus, lambda x: Softplus.apply(x) * 1.0)
    assert "passes through 1 more operation(s)" in str(excinfo.value)


def test_a_function_without_backward_is_named():
    class NoBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return torch.relu(x) + torch.log1p(torch.exp(-x.abs()))

    with pytest.raises(AssertionError) as excinfo:
        stability.check_softplus_custom_backward(NoBackward, NoBackward.apply)
    assert "does not define its own backward" in str(excinfo.value)
    with pytest.raises(AssertionError) as excinfo:
        stability.check_softplus_custom_backward(lambda x: x, NoBackward.apply)
    assert "should be a class" in str(excinfo.value)


def test_logsigmoid_is_a_forbidden_softplus():
    def disguised(x):
        return -torch.nn.functional.logsigmoid(-x)

    with pytest.raises(AssertionError) as excinfo:
        stability.check_softplus_no_builtin(disguised)
    assert "log_sigmoid" in str(excinfo.value)


def test_lesson_claims_about_softplus_and_where():
    """The numbers the lesson quotes, on this torch (2.13 CPU)."""
    assert torch.isinf(torch.exp(torch.tensor(11.1, dtype=torch.float16)))
    assert torch.isfinite(torch.exp(torch.tensor(11.08, dtype=torch.float16)))
    assert torch.isinf(torch.exp(torch.tensor(88.8))) and torch.isfinite(torch.exp(torch.tensor(88.7)))
    x = torch.tensor([-5.0, 0.0, 5.0, 100.0], requires_grad=True)
    torch.where(x > 20, x, torch.log1p(torch.exp(x))).sum().backward()
    assert torch.isnan(x.grad[3]) and torch.isfinite(x.grad[:3]).all()
    x.grad = None
    torch.where(x > 20, x, torch.log1p(torch.exp(x.clamp(max=20)))).sum().backward()
    assert torch.allclose(x.grad, torch.sigmoid(x.detach()).where(x < 20, torch.tensor(1.0)))
    zero = torch.zeros(1, requires_grad=True)
    (torch.relu(zero) + torch.log1p(torch.exp(-zero.abs()))).backward()
    assert zero.grad.item() == 0.0                       # autograd's subgradient, not sigmoid(0) = 0.5
    shift = torch.tensor(1.3203125, dtype=torch.bfloat16) - torch.tensor(21.125, dtype=torch.bfloat16)
    assert shift.item() == -19.75                        # exactly -19.8046875: an error of 0.055
    assert 0.05 < math.exp(-19.75 + 19.8046875) - 1 < 0.06


def test_a_function_in_the_setup_context_style_gets_full_marks():
    """torch >= 2.0 also accepts forward(x) without ctx plus setup_context(ctx, inputs, output)."""
    class Softplus(torch.autograd.Function):
        @staticmethod
        def forward(x):
            positive = x + torch.log1p(torch.exp(-x.clamp(min=0)))       # each branch's input clamped
            return torch.where(x > 0, positive, torch.log1p(torch.exp(x.clamp(max=0))))

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output / (1 + torch.exp(-x))    # exp(-x) = inf gives 1 / inf = 0: stable in IEEE

    failed = failing_among(TOPIC, with_replacements(TOPIC, {"Softplus": Softplus, "softplus": Softplus.apply}),
                           {name for name in check_names(TOPIC) if "softplus" in name}, seed=3)
    assert failed == {}
