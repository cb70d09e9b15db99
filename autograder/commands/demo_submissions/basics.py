"""The demo's plausible buggy student for `basics`: `grad_of` calls `.backward()` on the caller's tensor
(so `x` keeps `requires_grad` and a `.grad`), and `to_numpy` forgets `detach`.

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer.
"""

# the items these mistakes lose on the CPU, whatever the hidden seed (tests/course/test_grading.py)
LOSES = ('grad_of_values', 'to_numpy_requires_grad', 'to_numpy_views')

CELLS = {
    "to_numpy": '''import numpy as np
import torch


def to_numpy(t):
    """A NumPy array with the values, shape and dtype of the tensor `t`."""
    return t.cpu().numpy()
''',
    "grad_of": '''def grad_of(f, x):
    """The gradient of the scalar `f` at `x`: detached, shaped like `x`; `x` itself is left as it was."""
    x.requires_grad_(True)
    f(x).backward()
    return x.grad
''',
}
