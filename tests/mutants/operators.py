"""Realistic mistakes in the operators exercises, each with the checks that must catch it.

``MUTANTS[name] = (replacement objects, checks that must fail)``: the other
student objects come from the reference solution.
"""

import torch


def row_sum_slicing_loop(x):
    total = torch.zeros_like(x[0])
    for i in range(x.shape[0]):
        total = total + x[i]
    return total


def row_sum_unbind_loop(x):
    total = torch.zeros_like(x[0])
    for row in torch.unbind(x):
        total += row
    return total


def row_sum_python_sum(x):
    return sum(x)                   # iterates over the rows: a loop in disguise (and 0 for no rows)


def row_sum_last_dim(x):
    return x.sum(dim=-1)


def row_sum_flattened(x):
    return x.reshape(x.shape[0], -1).sum(0)      # right for matrices only


def row_sum_float32(x):
    return x.float().sum(0)


def row_sum_keepdim(x):
    return x.sum(0, keepdim=True)


def row_sum_via_numpy(x):
    return torch.from_numpy(x.cpu().numpy().sum(0))


def row_sum_skipping_nan(x):
    return torch.nansum(x, dim=0) if x.is_floating_point() else torch.sum(x, dim=0)    # NaN counted as 0


def masked_mean_clipped_bounds(x, low, high):
    largest = torch.finfo(x.dtype).max                 # "no infinite bound": inf is clipped to the largest float
    low = torch.as_tensor(low, dtype=x.dtype, device=x.device).clamp(-largest, largest)
    high = torch.as_tensor(high, dtype=x.dtype, device=x.device).clamp(-largest, largest)
    inside = (x >= low) & (x <= high)
    return torch.where(inside, x, 0).sum(0) / inside.sum(0).clamp(min=1)


def masked_mean_strict(x, low, high):
    inside = (x > low) & (x < high)
    return torch.where(inside, x, 0).sum(0) / inside.sum(0).clamp(min=1)


def masked_mean_times_mask(x, low, high):
    inside = (x >= low) & (x <= high)
    return (x * inside).sum(0) / inside.sum(0).clamp(min=1)


def masked_mean_not_outside(x, low, high):
    inside = ~(x < low) & ~(x > high)            # NaN is neither below nor above: counted
    return torch.where(inside, x, 0).sum(0) / inside.sum(0).clamp(min=1)


def masked_mean_zero_division(x, low, high):
    inside = (x >= low) & (x <= high)
    return torch.where(inside, x, 0).sum(0) / inside.sum(0)   # 0 / 0 = NaN for an empty column


def masked_mean_python_and(x, low, high):
    inside = (x >= low) and (x <= high)
    return torch.where(inside, x, 0).sum(0) / inside.sum(0).clamp(min=1)


def masked_mean_chained(x, low, high):
    inside = low <= x <= high
    return torch.where(inside, x, 0).sum(0) / inside.sum(0).clamp(min=1)


def masked_mean_over_everything(x, low, high):
    inside = (x >= low) & (x <= high)
    return torch.where(inside, x, 0).sum(0) / x.shape[0]      # divides by N, not by the count


def masked_mean_float64(x, low, high):
    x = x.double()
    inside = (x >= low) & (x <= high)
    return torch.where(inside, x, 0).sum(0) / inside.sum(0).clamp(min=1)


MUTANTS = {
    "row_sum as a slicing loop": ({"row_sum": row_sum_slicing_loop},
                                  {"check_row_sum_vectorized", "check_row_sum_speed"}),
    "row_sum as an unbind loop": ({"row_sum": row_sum_unbind_loop},
                                  {"check_row_sum_vectorized", "check_row_sum_speed"}),
    "row_sum with Python's sum": ({"row_sum": row_sum_python_sum},
                                  {"check_row_sum", "check_row_sum_vectorized", "check_row_sum_speed"}),
    "row_sum over the last dim": ({"row_sum": row_sum_last_dim}, {"check_row_sum"}),
    "row_sum for matrices only": ({"row_sum": row_sum_flattened}, {"check_row_sum"}),
    "row_sum always in float32": ({"row_sum": row_sum_float32}, {"check_row_sum"}),
    "row_sum keeping the dim": ({"row_sum": row_sum_keepdim}, {"check_row_sum"}),
    "row_sum through NumPy": ({"row_sum": row_sum_via_numpy}, {"check_row_sum"}),
    "row_sum skipping NaN": ({"row_sum": row_sum_skipping_nan}, {"check_row_sum"}),
    "masked_mean excluding the bounds": ({"masked_mean": masked_mean_strict}, {"check_masked_mean"}),
    "masked_mean clipping infinite bounds": ({"masked_mean": masked_mean_clipped_bounds},
                                             {"check_masked_mean_special_values"}),
    "masked_mean multiplying by the mask": ({"masked_mean": masked_mean_times_mask},
                                            {"check_masked_mean_special_values"}),
    "masked_mean counting NaN": ({"masked_mean": masked_mean_not_outside}, {"check_masked_mean_special_values"}),
    "masked_mean dividing 0 by 0": ({"masked_mean": masked_mean_zero_division},
                                    {"check_masked_mean_special_values"}),
    "masked_mean with Python's and": ({"masked_mean": masked_mean_python_and},
                                      {"check_masked_mean", "check_masked_mean_special_values"}),
    "masked_mean with a chained comparison": ({"masked_mean": masked_mean_chained},
                                              {"check_masked_mean", "check_masked_mean_special_values"}),
    "masked_mean dividing by N": ({"masked_mean": masked_mean_over_everything}, {"check_masked_mean"}),
    "masked_mean in float64": ({"masked_mean": masked_mean_float64}, {"check_masked_mean"}),
}

# What each mistake is, for the student: the grader says "This looks like: <description>" when a grade matches
# the mistake's signature (autograder/checks/operators/mistakes.py, written by tests/mistakes/signatures.py).
DESCRIPTIONS = {
    "row_sum as a slicing loop": "row_sum adds the rows one at a time in a Python loop.",
    "row_sum as an unbind loop": "row_sum adds the rows one at a time in a Python loop.",
    "row_sum with Python's sum": "row_sum uses Python's built-in `sum`, which loops over the rows in Python.",
    "row_sum over the last dim": "row_sum reduces over the last dimension instead of the first one (the rows).",
    "row_sum for matrices only": "row_sum flattens the trailing dimensions, so it is right for 2-D input only.",
    "row_sum always in float32": "row_sum converts its input to float32 whatever the input's dtype.",
    "row_sum keeping the dim": "row_sum keeps the reduced dimension, so the result has an extra dimension of size 1.",
    "row_sum through NumPy": "row_sum goes through NumPy, which loses the input's dtype rules, device and graph.",
    "row_sum skipping NaN": "row_sum skips NaN (as `nansum` does), but a column holding NaN sums to NaN.",
    "masked_mean clipping infinite bounds": "masked_mean clips an infinite bound to the largest finite value, so "
                                            "x = inf falls outside `high = inf` (and -inf outside `low = -inf`).",
    "masked_mean excluding the bounds": "masked_mean leaves out the values equal to `low` or `high`: the bounds "
                                        "belong to the range.",
    "masked_mean multiplying by the mask": "masked_mean multiplies by the mask, so a NaN or an infinity outside the "
                                           "range still reaches the sum (0 * inf is NaN).",
    "masked_mean counting NaN": "masked_mean counts NaN as inside the range (\"not below and not above\" is true "
                                "for NaN).",
    "masked_mean dividing 0 by 0": "masked_mean divides by a count that can be 0, giving NaN for a column with no "
                                   "value in the range.",
    "masked_mean with Python's and": "masked_mean combines the two comparisons with Python's `and` (a chained "
                                     "comparison `low <= x <= high` is one too), which does not work element by "
                                     "element on tensors.",
    "masked_mean with a chained comparison": "masked_mean combines the two comparisons with Python's `and` (a "
                                             "chained comparison `low <= x <= high` is one too), which does not work "
                                             "element by element on tensors.",
    "masked_mean dividing by N": "masked_mean divides by the number of rows instead of the number of values in "
                                 "the range.",
    "masked_mean in float64": "masked_mean computes and returns float64 whatever the input's dtype.",
}
