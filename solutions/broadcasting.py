"""Reference solutions for the `broadcasting` assignment.

Generated from source/broadcasting/broadcasting.ipynb by `python -m autograder build`; do not edit.
"""


# --- cell Merge ---
import torch


class Merge(torch.nn.Module):
    """activation(linear1(a) + linear2(b)): a concatenate-then-linear layer that never tiles its inputs."""

    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features1, out_features)
        self.linear2 = torch.nn.Linear(in_features2, out_features)
        self.activation = activation

    def forward(self, a, b):
        x = self.linear1(a) + self.linear2(b)
        if self.activation is not None:
            x = self.activation(x)
        return x


# --- cell pairwise_sq_distances ---
def pairwise_sq_distances(x, y):
    """Squared Euclidean distances between the rows of x [N, D] and y [M, D], as [N, M]."""
    x_norms = (x * x).sum(dim=1, keepdim=True)       # [N, 1]
    y_norms = (y * y).sum(dim=1, keepdim=True).t()   # [1, M]
    return (x_norms - 2 * (x @ y.t()) + y_norms).clamp(min=0)


# --- cell strict_mse_loss ---
def strict_mse_loss(prediction, target):
    """Mean squared error of two tensors of exactly the same shape; ValueError otherwise."""
    if prediction.shape != target.shape:
        raise ValueError(f"prediction has shape {list(prediction.shape)} but target has shape "
                         f"{list(target.shape)}; they must be equal (broadcasting would pair every "
                         f"prediction with every target)")
    return ((prediction - target) ** 2).mean()
