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
    "masked_mean excluding the bounds": ({"masked_mean": masked_mean_strict}, {"check_masked_mean"}),
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
