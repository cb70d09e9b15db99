"""Reference solutions for the `stability` assignment.

Generated from source/stability/stability.ipynb by `python -m autograder build`; do not edit.
"""


# --- cell stable_softmax ---
import torch


def stable_softmax(logits, dim=-1):
    """Softmax of `logits` along `dim`, finite for any finite input."""
    shifted = logits - logits.amax(dim=dim, keepdim=True)
    exp = shifted.exp()
    return exp / exp.sum(dim=dim, keepdim=True)


# --- cell softmax_cross_entropy ---
def softmax_cross_entropy(labels, logits, dim=-1):
    """Per-example -sum(labels * log_softmax(logits), dim), stable for any finite logits."""
    shifted = logits - logits.amax(dim=dim, keepdim=True)
    log_probs = shifted - shifted.exp().sum(dim=dim, keepdim=True).log()
    return -(labels * log_probs).sum(dim=dim)
