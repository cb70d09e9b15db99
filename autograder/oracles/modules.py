"""The ``modules`` answers the checks compare against (grader-only)."""

import copy

import torch


def sgd_training(model, x, y, steps, lr):
    """Train a copy of ``model`` with SGD and MSE; return it, each step's loss, the loss after training
    (``fit``'s answer), and ``{mistake: {name: tensor}}``, the parameters two known mistakes end with (the check
    tells them by name): gradients never zeroed (``"accumulated"``), SGD with ``momentum=0.9`` (``"momentum"``)."""
    trained, losses = _sgd(model, x, y, steps, lr)
    with torch.no_grad():
        after = float(torch.nn.functional.mse_loss(trained(x), y))
    mistakes = {"accumulated": _sgd(model, x, y, steps, lr, zero_grad=False)[0],
                "momentum": _sgd(model, x, y, steps, lr, momentum=0.9)[0]}
    return trained, losses, after, {mistake: {name: p.detach() for name, p in trained_wrong.named_parameters()}
                                    for mistake, trained_wrong in mistakes.items()}


def _sgd(model, x, y, steps, lr, *, zero_grad=True, momentum=0.0):
    model = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    losses = []
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(model(x), y)
        if zero_grad:
            optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
