"""Mistakes in the operators exercises, written apart from the mutants (see ``__init__``)."""

import torch


def row_sum_comprehension(x):
    return torch.stack([row for row in x]).sum(0)         # the rows in a Python comprehension


def row_sum_dim1(x):
    return torch.sum(x, dim=1)


def row_sum_everything(x):
    return x.sum()                                        # one number, not a sum over the rows


def row_sum_to_float(x):
    return x.to(torch.float32).sum(dim=0)


def row_sum_double(x):
    return x.double().sum(dim=0)


def row_sum_while_loop(x):
    total, i = x[0] * 0, 0
    while i < len(x):
        total = total + x[i]
        i += 1
    return total


def masked_mean_nanmean(x, low, high):
    inside = (x >= low) & (x <= high)
    return torch.nanmean(torch.where(inside, x, torch.nan), dim=0)   # NaN for a column with nothing inside


def masked_mean_open_interval(x, low, high):
    inside = torch.logical_and(x.gt(low), x.lt(high))
    return torch.where(inside, x, 0.0).sum(0) / inside.sum(0).clamp(min=1)


def masked_mean_mean_of_zeros(x, low, high):
    inside = (x >= low) & (x <= high)
    return torch.where(inside, x, torch.zeros_like(x)).mean(dim=0)


def masked_mean_whole_tensor(x, low, high):
    return x[(x >= low) & (x <= high)].mean()


MISTAKES = {
    "row_sum through a list comprehension of rows": ({"row_sum": row_sum_comprehension}, "row_sum as a slicing loop"),
    "row_sum over dim 1": ({"row_sum": row_sum_dim1}, "row_sum over the last dim"),
    "row_sum of the whole tensor": ({"row_sum": row_sum_everything}, None),
    "row_sum casting to float32 with .to": ({"row_sum": row_sum_to_float}, "row_sum always in float32"),
    "row_sum in float64": ({"row_sum": row_sum_double}, None),
    "row_sum with a while loop": ({"row_sum": row_sum_while_loop}, "row_sum as a slicing loop"),
    "masked_mean with nanmean (NaN for an empty column)": ({"masked_mean": masked_mean_nanmean},
                                                          "masked_mean dividing 0 by 0"),
    "masked_mean with gt/lt (open interval)": ({"masked_mean": masked_mean_open_interval},
                                              "masked_mean excluding the bounds"),
    "masked_mean as the mean of the zero-filled column": ({"masked_mean": masked_mean_mean_of_zeros},
                                                         "masked_mean dividing by N"),
    "masked_mean of every selected value at once": ({"masked_mean": masked_mean_whole_tensor}, None),
}
