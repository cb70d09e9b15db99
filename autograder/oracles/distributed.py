"""The ``distributed`` answers the checks compare against (grader-only): one process training on every rank's
samples at once, which data-parallel training must reproduce step for step."""

import copy

import torch


def single_process(model, x, y, steps, lr):
    """The parameters (float64) after every step of plain SGD on ``model``, where ``steps[s][r]`` lists the samples
    rank ``r`` takes in step ``s``: each step's gradient is the mean, over the ranks, of the gradient of the mean
    squared error on that rank's samples (what averaging the ranks' gradients gives; with equal batches, the mean
    squared error on their union). With gradient accumulation a rank's samples are its micro-batches together: the
    mean of the micro-batches' mean losses is the mean over all of them, since they are of equal size."""
    model = copy.deepcopy(model).double()
    x, y = x.double(), y.double()
    params = list(model.parameters())
    trained = [p for p in params if p.requires_grad]      # a frozen parameter keeps its value
    history = []
    for ranks in steps:
        grads = [torch.zeros_like(p) for p in trained]
        for ids in ranks:
            loss = torch.nn.functional.mse_loss(model(x[ids]), y[ids])
            for total, g in zip(grads, torch.autograd.grad(loss, trained, allow_unused=True)):
                if g is not None:           # a parameter the forward does not use gets no gradient
                    total += g / len(ranks)
        with torch.no_grad():
            for p, g in zip(trained, grads):
                p -= lr * g
        history.append([p.detach().clone() for p in params])
    return history
