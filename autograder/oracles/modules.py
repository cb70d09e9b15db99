"""The ``modules`` answers the checks compare against (grader-only)."""

import copy

import torch


def sgd_training(model, x, y, steps, lr):
    """Train a copy of ``model`` with SGD and MSE; return it, each step's loss, the loss after training
    (``fit``'s answer), and the parameters a run that never zeroes the gradients ends with (``{name: tensor}``: the
    known mistake the check tells by name)."""
    trained, losses = _sgd(model, x, y, steps, lr, zero_grad=True)
    with torch.no_grad():
        after = float(torch.nn.functional.mse_loss(trained(x), y))
    accumulated, _ = _sgd(model, x, y, steps, lr, zero_grad=False)
    return trained, losses, after, {name: p.detach() for name, p in accumulated.named_parameters()}


def _sgd(model, x, y, steps, lr, *, zero_grad):
    model = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(model(x), y)
        if zero_grad:
            optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
