"""Inputs and float64 references for the softmax and cross-entropy checks.

Random shapes, dims and scales drawn from a seeded generator; extreme magnitudes per dtype; label
distributions (soft, one-hot, broadcast along the batch); references computed in float64 with PyTorch's own
softmax and log_softmax.
"""

import torch

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
# Largest finite magnitude we feed each dtype in the extreme cases (well inside its range).
EXTREME = {torch.float16: 6e4, torch.bfloat16: 1e38, torch.float32: 1e30, torch.float64: 1e300}
# Cross-entropy can be as large as twice the logits' magnitude: keep it representable.
CE_EXTREME = {torch.float16: 1e4, torch.bfloat16: 1e37, torch.float32: 1e30, torch.float64: 1e300}
# log(sum(exp(x - max))) is log of a number >= 1: in a low-precision dtype it carries an absolute
# error of about one ulp of 1, which the loss inherits.
CE_TOLERANCES = {torch.float16: (5e-3, 2e-3), torch.bfloat16: (3e-2, 1.6e-2),
                 torch.float32: (1e-5, 1e-6), torch.float64: (1e-9, 1e-12)}


def ce_atol(logits):
    """Rounding (x - max) or (logsumexp - x) in the logits' dtype costs a few ulps of the largest logit."""
    scale = float(logits.detach().abs().max()) if logits.numel() else 0.0
    return max(CE_TOLERANCES[logits.dtype][1], 4 * torch.finfo(logits.dtype).eps * scale)


def devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def random_case(gen, max_rank=4):
    """A random shape, a random ``dim`` (positive or negative) and a scale for the logits."""
    rank = int(torch.randint(1, max_rank + 1, (1,), generator=gen))
    shape = [int(s) for s in torch.randint(1, 7, (rank,), generator=gen)]
    dim = int(torch.randint(-rank, rank, (1,), generator=gen))
    scale = float([0.1, 1.0, 5.0, 10.0][int(torch.randint(0, 4, (1,), generator=gen))])
    return shape, dim, scale


def random_logits(gen, shape, scale, dtype, device="cpu"):
    return (torch.randn(shape, generator=gen, dtype=torch.float64) * scale).to(dtype).to(device)


def random_labels(gen, logits, dim, kind):
    """Soft labels (a distribution along ``dim``), one-hot labels, or labels broadcast along the batch."""
    shape = list(logits.shape)
    if kind == "broadcast":   # one distribution shared by every example: size 1 on all other dims
        shape = [s if i == dim % logits.dim() else 1 for i, s in enumerate(shape)]
    raw = torch.rand(shape, generator=gen, dtype=torch.float64)
    if kind == "onehot":
        raw = (raw == raw.amax(dim=dim, keepdim=True)).double()
        raw = raw / raw.sum(dim=dim, keepdim=True)
    else:
        raw = raw / raw.sum(dim=dim, keepdim=True)
    return raw.to(logits.dtype).to(logits.device)


def ref_softmax(logits, dim):
    return torch.softmax(logits.double(), dim=dim)


def ref_cross_entropy(labels, logits, dim):
    return -(labels.double() * torch.log_softmax(logits.double(), dim=dim)).sum(dim=dim)


def expected_ce_shape(logits, dim):
    shape = list(logits.shape)
    del shape[dim % logits.dim()]
    return shape


# Small fixed cases graded first, so that a mistake in shapes (a missing keepdim, the wrong dim) fails on an
# input short enough to print as a call the student can paste: a [2, 3] batch along dim -1, the same batch
# transposed along dim 0, and one [3] distribution broadcast over the batch.
_CE_LOGITS = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], dtype=torch.float64)
_CE_LABELS = torch.tensor([[0.25, 0.75, 0.0], [0.5, 0.25, 0.25]], dtype=torch.float64)
CE_GRADIENT_CASES = [
    (_CE_LABELS, _CE_LOGITS, -1),
    (_CE_LABELS.t().contiguous(), _CE_LOGITS.t().contiguous(), 0),
    (torch.tensor([0.125, 0.375, 0.5], dtype=torch.float64), _CE_LOGITS, -1),
]
