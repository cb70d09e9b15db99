"""The demo's plausible buggy student for `broadcasting`: the tutorial's tile-and-concatenate layer
(correct values, but it copies), the expanded square without a clamp, and a loss that compares only
the number of elements (so `[N, 1]` against `[N]` slips through).

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer.
"""

# the items these mistakes lose on the CPU, whatever the hidden seed (tests/course/test_grading.py)
LOSES = ('merge_no_tiling', 'pairwise_nonnegative', 'strict_mse_refuses_broadcast')

CELLS = {
    "Merge": '''import torch


class Merge(torch.nn.Module):
    """activation(linear1(a) + linear2(b)): a concatenate-then-linear layer that never tiles its inputs."""

    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features1, out_features)
        self.linear2 = torch.nn.Linear(in_features2, out_features)
        self.activation = activation

    def forward(self, a, b):
        # Tile both inputs to the common batch shape, then one layer on the concatenation.
        batch = torch.broadcast_shapes(a.shape[:-1], b.shape[:-1])
        tiled = torch.cat([a.expand(*batch, a.shape[-1]), b.expand(*batch, b.shape[-1])], -1)
        weight = torch.cat([self.linear1.weight, self.linear2.weight], 1)
        x = torch.nn.functional.linear(tiled, weight, self.linear1.bias + self.linear2.bias)
        return x if self.activation is None else self.activation(x)
''',
    "pairwise_sq_distances": '''def pairwise_sq_distances(x, y):
    """Squared Euclidean distances between the rows of x [N, D] and y [M, D], as [N, M]."""
    return (x ** 2).sum(1, keepdim=True) - 2 * x @ y.T + (y ** 2).sum(1)
''',
    "strict_mse_loss": '''def strict_mse_loss(prediction, target):
    """Mean squared error of two tensors of exactly the same shape; ValueError otherwise."""
    if prediction.numel() != target.numel():
        raise ValueError(f"{list(prediction.shape)} and {list(target.shape)} differ")
    return ((prediction - target) ** 2).mean()
''',
}
