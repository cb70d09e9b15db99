"""A second correct solution, written differently from the reference: Merge with ``F.linear`` and
``torch.add``, an identity default activation; distances from explicit broadcasting of the difference
(no expanded square, so nothing to clamp); the loss checks shapes with ``torch.Size`` comparison."""

import torch
import torch.nn.functional as F


class Merge(torch.nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features1, out_features)
        self.linear2 = torch.nn.Linear(in_features2, out_features)
        self.activation = activation if activation is not None else (lambda t: t)

    def forward(self, a, b):
        merged = torch.add(F.linear(a, self.linear1.weight, self.linear1.bias),
                           F.linear(b, self.linear2.weight, self.linear2.bias))
        return self.activation(merged)


def pairwise_sq_distances(x, y):
    difference = x.unsqueeze(1) - y.unsqueeze(0)     # [N, M, D]
    return difference.pow(2).sum(dim=-1)


def strict_mse_loss(prediction, target):
    if tuple(prediction.shape) != tuple(target.shape):
        raise ValueError(f"shape mismatch: prediction {tuple(prediction.shape)} vs target {tuple(target.shape)}")
    return torch.mean(torch.square(prediction - target))
