"""The contracts of the memory exercises, clause by clause (``autograder.contracts``): the build writes them into the
notebook's bullet lists and docs/memory.md's table; ``tests/checks/test_contracts.py`` proves that each clause's
items send its inputs."""

from autograder.contracts import Clause, Contract

CONTRACTS = (
    Contract("saved_bytes", (
        Clause("run `model(x)` inside `saved_tensors_hooks` of your own and return `(output, total)`: the model's "
               "output and the number of bytes (a Python `int`) of the tensors autograd packed for backward during "
               "that forward pass;",
               items=("saved_bytes_count", "saved_bytes_backward"),
               inputs=("float32", "float64", "x_requires_grad", "x_without_grad")),
        Clause("`numel() * element_size()` each time `pack` is called (parameters and views included, a tensor saved "
               "twice counted twice);",
               items=("saved_bytes_count",), inputs=("saves_views", "relu", "tanh", "two_to_four_layers")),
        Clause("your `unpack` must give back the tensor, so that backward through the output still works.",
               items=("saved_bytes_backward",), inputs=("backward_through_output",)),
    )),
    Contract("checkpointed_forward", (
        Clause("apply the blocks in order, each block's output the next one's input, and return the last output: its "
               "value and the gradients of `x` and of every parameter are those of the plain forward;",
               items=("checkpoint_gradients",), inputs=("dropout", "x_requires_grad", "x_without_grad")),
        Clause("run **every block under `checkpoint(..., use_reentrant=False)`**.",
               items=("checkpoint_trades_memory",), inputs=("four_blocks",)),
    )),
    Contract("most_expensive_op", (
        Clause("profile one call of `step` with `torch.profiler.profile` (after one call to warm up) and return the "
               "name of the operator with the largest **self** CPU time, as the profile shows it (a `str` such as "
               "`\"aten::add\"`).",
               items=("top_op",), inputs=("matmul_step", "topk_step")),
    )),
    Contract("residual_relu", (
        Clause("`residual_relu(x, w)` returns `relu(x @ w) + x` for `x` of shape `[B, D]` and `w` of shape `[D, D]`;",
               items=("residual_values",), inputs=("float32", "float64", "rank_2")),
        Clause("backward through it must work and give the right gradients for `x` and `w`. You may use in-place "
               "operations where they are safe (the lesson says where); do not modify `x` or `w`.",
               items=("residual_backward",), inputs=("float32", "float64", "leaves_requiring_grad")),
    )),
    Contract("predict", (
        Clause("`predict(model, x)` returns `model(x)` computed under `torch.no_grad()` or `torch.inference_mode()`: "
               "its result needs no gradient, and autograd keeps nothing during the call (the grader measures that in "
               "your notebook's process, and reads the context manager from your source).",
               items=("predict_no_graph",), inputs=("float32", "float64")),
    )),
)


def model_labels(plan):
    """The cases a ``saved_bytes`` / ``predict`` model plan covers: dtype, activations, input with or without grad."""
    labels = {plan["dtype"], "x_requires_grad" if plan["x_grad"] else "x_without_grad", "two_to_four_layers"}
    labels.update("saves_views" if act == "gate" else act for act in plan["acts"] if act)
    return labels


def blocks_labels(plan):
    """The cases a ``checkpointed_forward`` plan covers."""
    labels = {"x_requires_grad" if plan["x_grad"] else "x_without_grad"}
    if plan["dropout"]:
        labels.add("dropout")
    if plan["blocks"] == 4:
        labels.add("four_blocks")
    return labels
