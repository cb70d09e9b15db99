"""The ``modules`` answers the checks compare against (grader-only)."""

import copy
import warnings

import torch


def sgd_training(model, x, y, steps, lr):
    """Train a copy of ``model`` with SGD and MSE; return it, each step's loss, the loss after training
    (``fit``'s answer), and ``{mistake: {name: tensor}}``, the parameters three known mistakes end with (the check
    tells them by name): gradients never zeroed (``"accumulated"``), SGD with ``momentum=0.9`` (``"momentum"``), the
    prediction squeezed, so that [N] against y's [N, 1] broadcasts to [N, N] in the loss (``"squeezed"``; a model
    with more than one output is not squeezed, and its loss is the right one)."""
    trained, losses = _sgd(model, x, y, steps, lr)
    with torch.no_grad():
        after = float(torch.nn.functional.mse_loss(trained(x), y))
    mistakes = {"accumulated": _sgd(model, x, y, steps, lr, zero_grad=False)[0],
                "momentum": _sgd(model, x, y, steps, lr, momentum=0.9)[0],
                "squeezed": _sgd(model, x, y, steps, lr, squeeze=True)[0]}
    return trained, losses, after, {mistake: {name: p.detach() for name, p in trained_wrong.named_parameters()}
                                    for mistake, trained_wrong in mistakes.items()}


def _sgd(model, x, y, steps, lr, *, zero_grad=True, momentum=0.0, squeeze=False):
    model = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    losses = []
    for _ in range(steps):
        prediction = model(x)
        if squeeze:
            prediction = prediction.squeeze(-1) if prediction.shape[-1] == 1 else prediction
        with warnings.catch_warnings():                 # the broadcast's warning is the mistake's, not the grader's
            warnings.simplefilter("ignore", UserWarning)
            loss = torch.nn.functional.mse_loss(prediction, y)
        if zero_grad:
            optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
