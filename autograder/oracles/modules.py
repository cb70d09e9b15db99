"""The ``modules`` answers the checks compare against (grader-only)."""

import copy

import torch


def sgd_training(model, x, y, steps, lr):
    """Train a copy of ``model`` with SGD and MSE; return it, each step's loss and the loss after training
    (``fit``'s answer)."""
    model = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        after = float(torch.nn.functional.mse_loss(model(x), y))
    return model, losses, after
