"""Hypothesis strategies for the tensors the notebooks' contracts allow: dtypes, shapes (zero sizes where the text
allows them), and values from small grids (so that ties, bounds and shrinking mean something) with the edge values
a contract names (NaN, inf, 1e4, a dtype's largest value)."""

import math

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
NAN, INF = math.nan, math.inf

# Values exact in every float dtype, with ties and halves.
GRID = (0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -1.5)
SPECIAL = (NAN, INF, -INF)


def shapes(min_dims=1, max_dims=3, min_side=1, max_side=4):
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


def values(*, special=(), extremes=(), grid=GRID, uniform=8.0):
    """Elements: a grid, uniform floats in [-uniform, uniform], and the named edge values."""
    options = [st.sampled_from(grid), st.floats(-uniform, uniform, allow_nan=False, width=32)]
    if special or extremes:
        options.append(st.sampled_from(tuple(special) + tuple(extremes)))
    return st.one_of(*options)


def tensors(dtype, shape, elements):
    """A tensor of ``dtype`` and ``shape`` whose float64 values come from ``elements`` (rounded to ``dtype``)."""
    if not dtype.is_floating_point:
        return hnp.arrays(np.int64, shape, elements=elements).map(lambda a: torch.from_numpy(a).to(dtype))
    return hnp.arrays(np.float64, shape, elements=elements).map(lambda a: torch.from_numpy(a).to(dtype))


def dtype_max(dtype):
    return float(torch.finfo(dtype).max)


@st.composite
def maybe_strided(draw, t):
    """``t``, or a non-contiguous view with its values (a transpose of a transposed copy)."""
    if t.dim() >= 2 and draw(st.booleans()):
        return t.transpose(0, 1).contiguous().transpose(0, 1)
    return t


def drawn_state(module, draw, dtype=torch.float32, scale=1.0):
    """A state dict for ``module``'s parameters, drawn from a small grid (the check's "drawn state")."""
    return {name: draw(tensors(dtype, tuple(p.shape), values(grid=GRID, uniform=scale)))
            for name, p in module.state_dict().items()}
