"""Realistic mistakes in the broadcasting exercises, each with the check that must catch it.

``MUTANTS[name] = (replacement objects, checks that must fail)``: the other
student objects come from the reference solution.
"""

import torch


class _TwoLinears(torch.nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features1, out_features)
        self.linear2 = torch.nn.Linear(in_features2, out_features)
        self.activation = activation

    def _activate(self, x):
        return x if self.activation is None else self.activation(x)

    def _concatenated(self, a, b_tiled, a_tiled=None):
        weight = torch.cat([self.linear1.weight, self.linear2.weight], 1)
        bias = self.linear1.bias + self.linear2.bias
        x = torch.cat([a if a_tiled is None else a_tiled, b_tiled], -1)
        return self._activate(torch.nn.functional.linear(x, weight, bias))


def _batch(a, b):
    return torch.broadcast_shapes(a.shape[:-1], b.shape[:-1])


class MergeRepeatCat(_TwoLinears):
    """The tutorial's first layer: repeat both inputs to the batch shape, then concatenate."""

    def forward(self, a, b):
        batch = _batch(a, b)
        reps_a = [s // t for s, t in zip(batch, [1] * (len(batch) - a.dim() + 1) + list(a.shape[:-1]))]
        reps_b = [s // t for s, t in zip(batch, [1] * (len(batch) - b.dim() + 1) + list(b.shape[:-1]))]
        a_t = a.reshape([1] * (len(batch) - a.dim() + 1) + list(a.shape)).repeat(reps_a + [1])
        b_t = b.reshape([1] * (len(batch) - b.dim() + 1) + list(b.shape)).repeat(reps_b + [1])
        return self._concatenated(a, b_t, a_t)


class MergeExpandCat(_TwoLinears):
    """expand looks free, but cat copies the expanded rows."""

    def forward(self, a, b):
        batch = _batch(a, b)
        return self._concatenated(a, b.expand(*batch, b.shape[-1]), a.expand(*batch, a.shape[-1]))


class MergeBroadcastTensorsCat(_TwoLinears):
    def forward(self, a, b):
        batch = _batch(a, b)
        a_t, _ = torch.broadcast_tensors(a, torch.empty(*batch, 1))
        b_t, _ = torch.broadcast_tensors(b, torch.empty(*batch, 1))
        return self._concatenated(a, b_t, a_t)


class MergeAddZerosCat(_TwoLinears):
    """Tiles by adding zeros: no tiling op by name, but the tiled tensors are materialised."""

    def forward(self, a, b):
        zeros = torch.zeros(*_batch(a, b), 1)
        return self._concatenated(a, b + zeros, a + zeros)


class MergeActivationAlways(_TwoLinears):
    """Applies ReLU when activation is None."""

    def forward(self, a, b):
        x = self.linear1(a) + self.linear2(b)
        return torch.relu(x) if self.activation is None else self.activation(x)


class MergeOneLinear(torch.nn.Module):
    """One Linear on the concatenation (the layer to be rewritten), no linear1/linear2."""

    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear = torch.nn.Linear(in_features1 + in_features2, out_features)
        self.activation = activation

    def forward(self, a, b):
        batch = _batch(a, b)
        x = self.linear(torch.cat([a.expand(*batch, a.shape[-1]), b.expand(*batch, b.shape[-1])], -1))
        return x if self.activation is None else self.activation(x)


class MergeExtraBias(_TwoLinears):
    """Adds a third, separate bias parameter."""

    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__(in_features1, in_features2, out_features, activation)
        self.bias = torch.nn.Parameter(torch.zeros(out_features))

    def forward(self, a, b):
        return self._activate(self.linear1(a) + self.linear2(b) + self.bias)


class MergeSwappedInputs(torch.nn.Module):
    """linear1 reads in_features2: the layers are built the wrong way round."""

    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features2, out_features)
        self.linear2 = torch.nn.Linear(in_features1, out_features)
        self.activation = activation

    def forward(self, a, b):
        x = self.linear2(a) + self.linear1(b)
        return x if self.activation is None else self.activation(x)


class MergeDetached(_TwoLinears):
    def forward(self, a, b):
        return self._activate(self.linear1(a) + self.linear2(b).detach())


def distances_unclamped(x, y):
    return (x * x).sum(1, keepdim=True) - 2 * x @ y.t() + (y * y).sum(1)


def distances_loop(x, y):
    rows = [((x[n] - y) ** 2).sum(-1) for n in range(x.shape[0])]
    return torch.stack(rows)


def distances_no_keepdim(x, y):
    # [N] + [M] and [N, M]: the ugly broadcast; wrong values when N == M, an error otherwise.
    return ((x * x).sum(1) - 2 * x @ y.t() + (y * y).sum(1)).clamp(min=0)


def distances_transposed(x, y):
    return ((y[:, None, :] - x[None, :, :]) ** 2).sum(-1)


def distances_not_squared(x, y):
    return torch.cdist(x, y)


def distances_float64(x, y):
    return ((x.double()[:, None] - y.double()[None]) ** 2).sum(-1)


def distances_abs_sum(x, y):
    return (x[:, None] - y[None]).abs().sum(-1)


def mse_no_check(prediction, target):
    return ((prediction - target) ** 2).mean()


def mse_numel_check(prediction, target):
    if prediction.numel() != target.numel():
        raise ValueError(f"sizes differ: {list(prediction.shape)} and {list(target.shape)}")
    return ((prediction - target) ** 2).mean()


def mse_ndim_check(prediction, target):
    if prediction.dim() != target.dim():
        raise ValueError(f"ranks differ: {list(prediction.shape)} and {list(target.shape)}")
    return ((prediction - target) ** 2).mean()


def mse_assert(prediction, target):
    assert prediction.shape == target.shape, f"{list(prediction.shape)} != {list(target.shape)}"
    return ((prediction - target) ** 2).mean()


def mse_vague_message(prediction, target):
    if prediction.shape != target.shape:
        raise ValueError("shapes do not match")
    return ((prediction - target) ** 2).mean()


def mse_squeezes(prediction, target):
    prediction, target = prediction.squeeze(), target.squeeze()
    if prediction.shape != target.shape:
        raise ValueError(f"{list(prediction.shape)} vs {list(target.shape)}")
    return ((prediction - target) ** 2).mean()


def mse_sum(prediction, target):
    if prediction.shape != target.shape:
        raise ValueError(f"{list(prediction.shape)} vs {list(target.shape)}")
    return ((prediction - target) ** 2).sum()


def mse_item(prediction, target):
    if prediction.shape != target.shape:
        raise ValueError(f"{list(prediction.shape)} vs {list(target.shape)}")
    return torch.tensor(((prediction - target) ** 2).mean().item(), dtype=prediction.dtype)


MUTANTS = {
    "Merge via repeat and cat": ({"Merge": MergeRepeatCat}, {"check_merge_no_tiling"}),
    "Merge via expand and cat": ({"Merge": MergeExpandCat}, {"check_merge_no_tiling"}),
    "Merge via broadcast_tensors and cat": ({"Merge": MergeBroadcastTensorsCat}, {"check_merge_no_tiling"}),
    "Merge tiling by adding zeros": ({"Merge": MergeAddZerosCat}, {"check_merge_no_tiling"}),
    "Merge with ReLU when activation is None": ({"Merge": MergeActivationAlways}, {"check_merge_forward"}),
    "Merge as one linear layer on the concatenation": ({"Merge": MergeOneLinear},
                                                       {"check_merge_structure", "check_merge_no_tiling"}),
    "Merge with an extra bias parameter": ({"Merge": MergeExtraBias}, {"check_merge_structure"}),
    "Merge with linear1 and linear2 swapped": ({"Merge": MergeSwappedInputs}, {"check_merge_structure"}),
    "Merge detaching linear2's output": ({"Merge": MergeDetached}, {"check_merge_forward"}),
    "distances from the expanded square without clamping": ({"pairwise_sq_distances": distances_unclamped},
                                                             {"check_pairwise_nonnegative"}),
    "distances with a loop over rows": ({"pairwise_sq_distances": distances_loop}, {"check_pairwise_vectorized"}),
    "distances with row norms missing keepdim": ({"pairwise_sq_distances": distances_no_keepdim},
                                                 {"check_pairwise_values"}),
    "distances transposed ([M, N])": ({"pairwise_sq_distances": distances_transposed}, {"check_pairwise_values"}),
    "distances not squared (cdist)": ({"pairwise_sq_distances": distances_not_squared}, {"check_pairwise_values"}),
    "distances always in float64": ({"pairwise_sq_distances": distances_float64}, {"check_pairwise_values"}),
    "distances as L1 sums": ({"pairwise_sq_distances": distances_abs_sum}, {"check_pairwise_values"}),
    "loss without a shape check": ({"strict_mse_loss": mse_no_check}, {"check_strict_mse_refuses_broadcast"}),
    "loss comparing numel only": ({"strict_mse_loss": mse_numel_check}, {"check_strict_mse_refuses_broadcast"}),
    "loss comparing the number of dims only": ({"strict_mse_loss": mse_ndim_check},
                                               {"check_strict_mse_refuses_broadcast"}),
    "loss raising AssertionError": ({"strict_mse_loss": mse_assert}, {"check_strict_mse_refuses_broadcast"}),
    "loss with a message that names no shape": ({"strict_mse_loss": mse_vague_message},
                                                {"check_strict_mse_refuses_broadcast"}),
    "loss squeezing both inputs": ({"strict_mse_loss": mse_squeezes}, {"check_strict_mse_refuses_broadcast"}),
    "loss summing instead of averaging": ({"strict_mse_loss": mse_sum}, {"check_strict_mse_value"}),
    "loss through .item()": ({"strict_mse_loss": mse_item}, {"check_strict_mse_value"}),
}

# What each mistake is, for the student: the grader says "This looks like: <description>" when a grade matches
# the mistake's signature (autograder/checks/broadcasting/mistakes.py, written by tests/mistakes/signatures.py).
DESCRIPTIONS = {
    "Merge via repeat and cat": "Merge copies (tiles) the inputs to the batch shape before its layers instead of "
                                "letting them broadcast.",
    "Merge via expand and cat": "Merge copies (tiles) the inputs to the batch shape before its layers instead of "
                                "letting them broadcast.",
    "Merge via broadcast_tensors and cat": "Merge copies (tiles) the inputs to the batch shape before its layers "
                                           "instead of letting them broadcast.",
    "Merge tiling by adding zeros": "Merge copies (tiles) the inputs to the batch shape before its layers instead of "
                                    "letting them broadcast.",
    "Merge with ReLU when activation is None": "Merge applies a ReLU when `activation` is None.",
    "Merge as one linear layer on the concatenation": "Merge keeps one linear layer on the concatenation instead of "
                                                      "two layers added together.",
    "Merge with an extra bias parameter": "Merge adds a third bias parameter of its own.",
    "Merge with linear1 and linear2 swapped": "Merge builds `linear1` and `linear2` the wrong way round (each reads "
                                              "the other input's features).",
    "Merge detaching linear2's output": "Merge detaches one layer's output, so that layer gets no gradient.",
    "distances from the expanded square without clamping": "pairwise_sq_distances expands the square and does not "
                                                           "clamp, so rounding gives small negative distances.",
    "distances with a loop over rows": "pairwise_sq_distances loops over the rows in Python.",
    "distances with row norms missing keepdim": "pairwise_sq_distances computes the row norms without "
                                                "`keepdim=True`, so they broadcast along the wrong axis.",
    "distances transposed ([M, N])": "pairwise_sq_distances returns the [M, N] matrix instead of [N, M].",
    "distances not squared (cdist)": "pairwise_sq_distances returns distances, not squared distances.",
    "distances always in float64": "pairwise_sq_distances computes and returns float64 whatever the input's dtype.",
    "distances as L1 sums": "pairwise_sq_distances sums absolute differences instead of squared ones.",
    "loss without a shape check": "strict_mse_loss lets inputs of different shapes through: it does not compare the "
                                  "whole shapes.",
    "loss comparing numel only": "strict_mse_loss lets inputs of different shapes through: it does not compare the "
                                 "whole shapes.",
    "loss comparing the number of dims only": "strict_mse_loss lets inputs of different shapes through: it does not "
                                              "compare the whole shapes.",
    "loss raising AssertionError": "strict_mse_loss checks the shapes with `assert` instead of raising ValueError.",
    "loss with a message that names no shape": "strict_mse_loss raises ValueError with a message that does not show "
                                               "the two shapes.",
    "loss squeezing both inputs": "strict_mse_loss lets inputs of different shapes through: it does not compare the "
                                  "whole shapes.",
    "loss summing instead of averaging": "strict_mse_loss sums the squared errors instead of averaging them.",
    "loss through .item()": "strict_mse_loss goes through `.item()`, which cuts the graph.",
}
