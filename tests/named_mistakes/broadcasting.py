"""Mistakes in the broadcasting exercises, written apart from the mutants (see ``__init__``)."""

import torch


def mse_assertion_error(prediction, target):
    if prediction.size() != target.size():
        raise AssertionError(f"{tuple(prediction.size())} vs {tuple(target.size())}")
    return torch.mean((prediction - target) ** 2)


def mse_functional(prediction, target):
    return torch.nn.functional.mse_loss(prediction, target)


def mse_total(prediction, target):
    if prediction.shape != target.shape:
        raise ValueError(f"shapes {list(prediction.shape)} and {list(target.shape)} differ")
    return torch.sum((prediction - target) ** 2)


def distances_sqrt(x, y):
    return ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1).sqrt()


def distances_append_loop(x, y):
    out = []
    for i in range(x.shape[0]):
        out.append(((x[i].unsqueeze(0) - y) ** 2).sum(dim=1))
    return torch.stack(out)


def distances_yx(x, y):
    return ((y.unsqueeze(1) - x.unsqueeze(0)) ** 2).sum(-1)


MISTAKES = {
    "strict_mse_loss raising AssertionError itself": ({"strict_mse_loss": mse_assertion_error},
                                                      "loss raising AssertionError"),
    "strict_mse_loss as F.mse_loss with no check": ({"strict_mse_loss": mse_functional},
                                                    "loss without a shape check"),
    "strict_mse_loss as a sum": ({"strict_mse_loss": mse_total}, "loss summing instead of averaging"),
    "pairwise distances with a square root": ({"pairwise_sq_distances": distances_sqrt},
                                              "distances not squared (cdist)"),
    "pairwise distances appended row by row": ({"pairwise_sq_distances": distances_append_loop},
                                               "distances with a loop over rows"),
    "pairwise distances with y's rows first": ({"pairwise_sq_distances": distances_yx},
                                               "distances transposed ([M, N])"),
}
