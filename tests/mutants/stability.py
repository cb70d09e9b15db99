"""Realistic mistakes in the stability exercises, one per function, each with the check that must catch it.

``MUTANTS[name] = (replacement objects, checks that must fail)``: the other
student objects come from the reference solution.
"""

import numpy as np
import torch


def softmax_no_shift(logits, dim=-1):
    e = logits.exp()
    return e / e.sum(dim=dim, keepdim=True)


def softmax_global_max(logits, dim=-1):
    # The tutorial's version: one max over the whole tensor.
    e = (logits - torch.max(logits)).exp()
    return e / e.sum(dim=dim, keepdim=True)


def softmax_no_keepdim(logits, dim=-1):
    z = logits - logits.amax(dim=dim).unsqueeze(-1)   # right only when dim is the last one
    e = z.exp()
    return e / e.sum(dim=dim).unsqueeze(-1)


def softmax_wrong_dim_sum(logits, dim=-1):
    z = logits - logits.amax(dim=dim, keepdim=True)
    e = z.exp()
    return e / e.sum(dim=0, keepdim=True)


def softmax_wrong_dtype(logits, dim=-1):
    x = logits.double()
    z = x - x.amax(dim=dim, keepdim=True)
    return z.exp() / z.exp().sum(dim=dim, keepdim=True)


def softmax_mean_shift(logits, dim=-1):
    # Centring instead of shifting by the max: exp overflows float16 for ordinary logits.
    e = (logits - logits.mean(dim=dim, keepdim=True)).exp()
    return e / e.sum(dim=dim, keepdim=True)


def softmax_builtin(logits, dim=-1):
    return torch.nn.functional.softmax(logits, dim=dim)


def softmax_via_numpy(logits, dim=-1):
    x = logits.detach().cpu().numpy()
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return torch.from_numpy(e / e.sum(axis=dim, keepdims=True)).to(logits.dtype)


def _stable_softmax(logits, dim=-1):
    z = logits - logits.amax(dim=dim, keepdim=True)
    e = z.exp()
    return e / e.sum(dim=dim, keepdim=True)


def ce_log_of_softmax(labels, logits, dim=-1):
    return -(labels * torch.log(_stable_softmax(logits, dim))).sum(dim=dim)


def ce_no_shift(labels, logits, dim=-1):
    return -(labels * (logits - logits.exp().sum(dim=dim, keepdim=True).log())).sum(dim=dim)


def ce_global_max(labels, logits, dim=-1):
    z = logits - logits.max()
    return -(labels * (z - z.exp().sum(dim=dim, keepdim=True).log())).sum(dim=dim)


def ce_batch_mean(labels, logits, dim=-1):
    z = logits - logits.amax(dim=dim, keepdim=True)
    return -(labels * (z - z.exp().sum(dim=dim, keepdim=True).log())).sum(dim=dim).mean()


def ce_logsumexp(labels, logits, dim=-1):
    return -(labels * (logits - torch.logsumexp(logits, dim=dim, keepdim=True))).sum(dim=dim)


def ce_wrong_dim(labels, logits, dim=-1):
    z = logits - logits.amax(dim=dim, keepdim=True)
    return -(labels * (z - z.exp().sum(dim=dim, keepdim=True).log())).sum(dim=0)


def ce_float32_always(labels, logits, dim=-1):
    x = logits.float()
    z = x - x.amax(dim=dim, keepdim=True)
    return -(labels.float() * (z - z.exp().sum(dim=dim, keepdim=True).log())).sum(dim=dim)


def ce_detached(labels, logits, dim=-1):
    x = logits.detach()
    z = x - x.amax(dim=dim, keepdim=True)
    return -(labels * (z - z.exp().sum(dim=dim, keepdim=True).log())).sum(dim=dim)


MUTANTS = {
    "softmax without the max-shift": ({"stable_softmax": softmax_no_shift}, {"check_softmax_extremes"}),
    "softmax with one max over the whole tensor": ({"stable_softmax": softmax_global_max},
                                                   {"check_softmax_extremes"}),
    "softmax forgetting keepdim": ({"stable_softmax": softmax_no_keepdim}, {"check_softmax_forward"}),
    "softmax summing over the wrong dim": ({"stable_softmax": softmax_wrong_dim_sum}, {"check_softmax_forward"}),
    "softmax of the wrong dtype": ({"stable_softmax": softmax_wrong_dtype}, {"check_softmax_forward"}),
    "softmax with NaN for float16 input": ({"stable_softmax": softmax_mean_shift}, {"check_softmax_forward"}),
    "softmax calling F.softmax": ({"stable_softmax": softmax_builtin}, {"check_softmax_no_builtin"}),
    "softmax through NumPy": ({"stable_softmax": softmax_via_numpy}, {"check_softmax_gradient"}),
    "cross-entropy as log(softmax(x))": ({"softmax_cross_entropy": ce_log_of_softmax},
                                         {"check_cross_entropy_extremes"}),
    "cross-entropy without the max-shift": ({"softmax_cross_entropy": ce_no_shift},
                                            {"check_cross_entropy_extremes"}),
    "cross-entropy with a global max": ({"softmax_cross_entropy": ce_global_max}, {"check_cross_entropy_extremes"}),
    "cross-entropy returning the batch mean": ({"softmax_cross_entropy": ce_batch_mean},
                                               {"check_cross_entropy_forward"}),
    "cross-entropy calling torch.logsumexp": ({"softmax_cross_entropy": ce_logsumexp},
                                              {"check_cross_entropy_no_builtin"}),
    "cross-entropy summing over the wrong dim": ({"softmax_cross_entropy": ce_wrong_dim},
                                                 {"check_cross_entropy_forward"}),
    "cross-entropy of the wrong dtype": ({"softmax_cross_entropy": ce_float32_always},
                                         {"check_cross_entropy_forward"}),
    "cross-entropy with detached logits": ({"softmax_cross_entropy": ce_detached},
                                           {"check_cross_entropy_gradient"}),
}
