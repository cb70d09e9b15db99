"""The contracts of the basics exercises, clause by clause (``autograder.contracts``): the build writes them into
the notebook's bullet lists and docs/basics.md's table; ``tests/checks/test_contracts.py`` proves that each clause's
items send its inputs."""

from autograder.contracts import Clause, Contract

NUMPY_DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
VIEW_LABELS = ("transposed", "strided", "permuted", "expanded", "diagonal", "column", "transposed_requires_grad")
REQUIRES_GRAD_LABELS = ("leaf", "parameter", "computed")

CONTRACTS = (
    Contract("to_numpy", (
        Clause("every real dtype NumPy has (float16/32/64, int8/16/32/64, uint8, bool), exact values including inf "
               "and NaN, a 0-d tensor;",
               items=("to_numpy_values",), inputs=(*NUMPY_DTYPES, "inf", "neg_inf", "nan", "rank_0", "empty")),
        Clause("one that requires grad; do not change `t` itself (for example its `requires_grad` flag);",
               items=("to_numpy_requires_grad", "to_numpy_views"),
               inputs=(*REQUIRES_GRAD_LABELS, "transposed_requires_grad")),
        Clause("a non-contiguous view;", items=("to_numpy_views",), inputs=VIEW_LABELS),
        Clause("one on a GPU (the grader checks the CUDA case when a GPU is present).",
               items=("to_numpy_values", "to_numpy_requires_grad", "to_numpy_views"), inputs=("on_cpu", "on_cuda")),
    )),
    Contract("grad_of", (
        Clause("the same shape, dtype and device as `x`, and **detached** (no `requires_grad`, no `grad_fn`);",
               items=("grad_of_values",),
               inputs=("rank_0", "rank_1", "rank_2", "rank_3", "float32", "float64", "non_contiguous", "on_cpu",
                       "on_cuda")),
        Clause("`x` is left exactly as it was: no `requires_grad` flag left set (or cleared), no `.grad` added to it "
               "or to any tensor `x` was computed from, values unchanged. Work on a new leaf: "
               "`x.detach().requires_grad_(True)`.",
               items=("grad_of_values",), inputs=("plain", "requires_grad", "with_grad", "computed")),
    )),
    Contract("fit_quadratic", (
        Clause("start from any `w` of shape `[3]` (for example `torch.randn(3, requires_grad=True)`; not the "
               "tutorial's `[3, 1]`);",
               items=("fit_quadratic", "fit_quadratic_fresh_samples"), inputs=("unseen_quadratic", "steps_1")),
        Clause("run `steps` steps of `torch.optim.Adam([w], lr=lr)`, each on a **fresh** sample `x, y = "
               "generate_data()` (1-D float tensors of the same length), minimising the mean squared error of "
               "`features @ w`;",
               items=("fit_quadratic", "fit_quadratic_fresh_samples"),
               inputs=("steps_800", "steps_1", "steps_4", "steps_25", "calls_counted")),
        Clause("use the arguments you are given: the grader passes its own `generate_data`, `steps` and `lr`.",
               items=("fit_quadratic", "fit_quadratic_fresh_samples"),
               inputs=("own_generate_data", "steps_1", "steps_800")),
    )),
)
