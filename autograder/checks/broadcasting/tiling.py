"""Did code materialise a broadcast? A check for layers that must let broadcasting tile implicitly.

``expect_no_tiling(check, fn, a, b)`` runs ``fn(a, b)`` (whose two inputs broadcast
over their batch dimensions, features last) and fails when it copies either input,
or their concatenation, to the full broadcast batch. Three levels, from the most
readable message to the most thorough:

* tiling operations by name, in any spelling (``repeat``, ``tile``,
  ``repeat_interleave``), through the op recorder;
* a broadcast view (``expand``, ``expand_as``, ``broadcast_to``,
  ``broadcast_tensors``) followed by a join (``cat``, ``stack``, ``hstack``, ...):
  the view costs nothing, but the join copies it, in calls or ATen kernels;
* any tensor that an ATen kernel returns, owning storage for all its elements,
  whose last dimension is the features of a broadcast input or of the
  concatenation and which holds the broadcast number of rows of them (catches ``b + zeros``, ``expand(...).contiguous()``,
  copying into a preallocated buffer, ...).

Under trusted grading ``fn`` runs in the student's worker: the op recorder's record comes from
there, and so does the list of materialised tensors (``materialised_call`` runs beside ``fn``),
both reported by the student's process (forgeable by a hostile student, docs/security.md).
"""

import math

import torch

from autograder.checks.broadcasting.probes import materialised_call
from autograder.errors import CheckFailure
from autograder.seam.ops import record_ops
from autograder.seam.student import describe
from autograder.seam.student_calls import Student

TILING_OPS = ("repeat", "tile", "repeat_interleave")
BROADCAST_VIEWS = {"expand", "expand_as", "broadcast_to", "broadcast_tensors"}
JOINS = {"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack"}
TILING_HINT = ("Apply linear1 to `a` and linear2 to `b` separately and add the results: the addition broadcasts "
               "without copying anything.")


def _view_then_join(names):
    """The first broadcast view and the join that follows it, or None."""
    view = next((i for i, name in enumerate(names) if name in BROADCAST_VIEWS), None)
    if view is None:
        return None
    join = next((i for i in range(view + 1, len(names)) if names[i] in JOINS), None)
    return None if join is None else (view, join)


def _tiled_sizes(a, b):
    """``{features: what}`` for the tensors that tiling would create, and the broadcast number of rows."""
    batch = torch.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    rows = math.prod(batch)
    sizes = {}
    for name, x in (("a", a), ("b", b)):
        if math.prod(x.shape[:-1]) < rows:
            sizes[x.shape[-1]] = f"`{name}` tiled to the batch shape {list(batch)}"
    if sizes:
        sizes[a.shape[-1] + b.shape[-1]] = f"the concatenation of `a` and `b` tiled to the batch shape {list(batch)}"
    return sizes, rows


def expect_no_tiling(check, fn, a, b, *, what=None, hint=TILING_HINT):
    """``fn(a, b)`` must not copy ``a``, ``b`` or their concatenation to the broadcast batch shape.

    Choose feature sizes that differ from each other, from their sum and from the output's, so that
    no honest intermediate has a tiled input's size. Returns the result of ``fn(a, b)``.
    """
    __tracebackhide__ = True
    what = what or "your function"
    inputs = f"\nInput: a = {describe(a)}; b = {describe(b)}"
    with record_ops() as record:
        result, materialised = Student(fn, check, what).via(materialised_call, a, b, shown=(a, b))
    used = record.find(TILING_OPS)
    if used:
        raise CheckFailure(check, f"{what} calls {', '.join(used)}, which copies an input once per broadcast "
                                  f"row." + inputs, hint=hint)
    shown = [display for _, display in record.calls]
    for names, spell in ((record.names(), lambda i: shown[i]), (record.kernels, lambda i: f"aten.{record.kernels[i]}")):
        pair = _view_then_join(names)
        if pair:
            raise CheckFailure(check, f"{what} calls {spell(pair[0])} and then {spell(pair[1])}: the broadcast view "
                                      f"is free, but joining it copies every tiled row." + inputs, hint=hint)
    sizes, rows = _tiled_sizes(a, b)
    for op, shape in materialised:
        tiled = next((f for f in sizes if shape and shape[-1] == f and math.prod(shape) == rows * f), None)
        if tiled is not None:
            raise CheckFailure(check, f"{what} materialises a tensor of shape {shape} (made by aten.{op}): that is "
                                      f"{sizes[tiled]}, {rows} rows where the inputs hold fewer." + inputs, hint=hint)
    return result
