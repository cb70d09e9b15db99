"""The demo's plausible buggy student for `stability`: the tutorial's global max in both functions.

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer.
"""

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
}
