"""The ``fit`` exercise's checks: the training loop compared step for step with ``torch.optim.SGD`` on a copy of the
same model in float64 (the grader's oracle, ``modules.sgd_training``), its final loss, and a noisy line it must
recover."""

import torch

from autograder.checks.modules import probes
from autograder.contracts import exercised
from autograder.errors import CheckFailure
from autograder.measuring.compare import expect_close
from autograder.measuring.expected_outputs import oracle as grader_oracle
from autograder.seam.student import describe
from autograder.spec import graded


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
