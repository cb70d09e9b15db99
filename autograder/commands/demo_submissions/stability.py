"""The demo's plausible buggy student for `stability`: the tutorial's global max in softmax, log(softmax) in
cross-entropy, and softplus written as it reads, log1p(exp(x)), which overflows for large x.

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer.
"""

# the items these mistakes lose on the CPU, whatever the hidden seed (tests/course/test_grading.py)
LOSES = ('cross_entropy_extremes', 'cross_entropy_forward', 'softmax_extremes', 'softmax_forward',
         'softmax_gradient', 'softplus_extremes')

CELLS = {
    "stable_softmax": '''import torch


def stable_softmax(logits, dim=-1):
    """Softmax of `logits` along `dim`, finite for any finite input."""
    exp = torch.exp(logits - torch.max(logits))   # one max for the whole batch
    return exp / exp.sum(dim=dim, keepdim=True)
''',
    "softmax_cross_entropy": '''def softmax_cross_entropy(labels, logits, dim=-1):
    """Per-example -sum(labels * log_softmax(logits), dim)."""
    return -(labels * torch.log(stable_softmax(logits, dim=dim))).sum(dim=dim)
''',
    "softplus": '''import torch


class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)) with a hand-written backward; finite for every finite input."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log1p(torch.exp(x))           # log1p is accurate, but exp(x) overflows past 88.7

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


def softplus(x):
    """Softplus through the custom Function, so that autograd runs your backward."""
    return Softplus.apply(x)
''',
}
