"""The contracts of the operators exercises, clause by clause (``autograder.contracts``): the build writes them
into the notebook's bullet lists and docs/operators.md's table; ``tests/checks/test_contracts.py`` proves that
each clause's items send its inputs."""

from autograder.contracts import Clause, Contract, tensor_labels

FLOATS = ("float16", "bfloat16", "float32", "float64")

CONTRACTS = (
    Contract("masked_mean", (
        Clause("bounds **included**; NaN is in no range; `inf` and `-inf` lie outside finite bounds;",
               items=("masked_mean", "masked_mean_special_values"),
               inputs=("values_on_bounds", "number_bounds", "tensor_bounds", "nan", "inf", "neg_inf",
                       "infinite_bounds")),
        Clause("a position with no entry in range (or `N = 0`) gets `0`, not NaN;",
               items=("masked_mean_special_values",), inputs=("empty_column", "zero_rows")),
        Clause("the shape of `x[0]`, the dtype and device of `x`.",
               items=("masked_mean", "masked_mean_special_values"),
               inputs=("rank_1", "rank_2", "rank_3", *FLOATS, "on_cpu", "on_cuda")),
    )),
    Contract("row_sum", (
        Clause("`x` has **any rank** (a `[N]` vector gives a 0-d tensor, a `[N, A, B]` tensor gives `[A, B]`), any "
               "number of rows (`N = 0` gives zeros), any dtype and any device;",
               items=("row_sum",),
               inputs=("rank_1", "rank_2", "rank_3", "rank_4", "zero_rows", "one_row", "non_contiguous",
                       *FLOATS, "int32", "int64", "bool", "on_cpu", "on_cuda", "nan", "inf", "neg_inf")),
        Clause("the result has the shape, dtype and device of `torch.sum(x, dim=0)` (integers and booleans sum to "
               "int64);", items=("row_sum",), inputs=("int32", "int64", "bool")),
        Clause("no loop: the grader reads your source for loops, counts the torch operations your function makes for 4 "
               "rows and for 64 rows (they must be the same), and times it against the slicing loop above.",
               items=("row_sum_vectorized", "row_sum_speed"), inputs=("rows_4_and_64", "timed_500x10")),
    )),
)


def masked_mean_labels(x, low, high):
    """The cases a ``masked_mean`` input covers (:func:`autograder.contracts.exercised_as`)."""
    labels = tensor_labels(x)
    labels.add("tensor_bounds" if hasattr(low, "shape") else "number_bounds")
    if x.numel() and bool(((x == low) | (x == high)).any()):
        labels.add("values_on_bounds")
    if any(bool((abs(bound) == float("inf")).any()) if hasattr(bound, "shape") else abs(bound) == float("inf")
           for bound in (low, high)):
        labels.add("infinite_bounds")
    return labels
