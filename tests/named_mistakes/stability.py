"""Mistakes in the stability exercises, written apart from the mutants (see ``__init__``)."""

import torch


def softmax_flat_max(logits, dim=-1):
    e = torch.exp(logits - logits.flatten().max())
    return e / torch.sum(e, dim=dim, keepdim=True)


def softmax_plain(logits, dim=-1):
    return torch.exp(logits) / torch.exp(logits).sum(dim, keepdim=True)


def softmax_sum_without_keepdim(logits, dim=-1):
    e = torch.exp(logits - logits.max(dim=dim, keepdim=True).values)
    return e / e.sum(dim=dim)


def softmax_float32(logits, dim=-1):
    x = logits.float()
    e = (x - x.amax(dim, keepdim=True)).exp()
    return e / e.sum(dim, keepdim=True)


def ce_log_softmax_by_hand(labels, logits, dim=-1):
    e = torch.exp(logits - logits.amax(dim=dim, keepdim=True))
    return -(labels * torch.log(e / e.sum(dim=dim, keepdim=True))).sum(dim=dim)


def ce_mean_by_hand(labels, logits, dim=-1):
    z = logits - logits.amax(dim=dim, keepdim=True)
    per_example = -(labels * (z - torch.log(torch.exp(z).sum(dim=dim, keepdim=True)))).sum(dim=dim)
    return per_example.sum() / logits.shape[0]


class SoftplusLogOnePlus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(1 + torch.exp(x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


class SoftplusLocalOnly(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.clamp(x, min=0) + torch.log1p(torch.exp(-torch.abs(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 1 / (1 + torch.exp(-x))


def softplus_autograd(x):
    return torch.clamp(x, min=0) + torch.log1p(torch.exp(-torch.abs(x)))


MISTAKES = {
    "softmax shifting by the max of the flattened logits": ({"stable_softmax": softmax_flat_max},
                                                           "softmax with one max over the whole tensor"),
    "softmax with no shift at all": ({"stable_softmax": softmax_plain}, "softmax without the max-shift"),
    "softmax dividing by a sum without keepdim": ({"stable_softmax": softmax_sum_without_keepdim},
                                                  "softmax forgetting keepdim"),
    "softmax in float32 for every input": ({"stable_softmax": softmax_float32}, "softmax of the wrong dtype"),
    "cross-entropy as log of a hand-made softmax": ({"softmax_cross_entropy": ce_log_softmax_by_hand},
                                                   "cross-entropy as log(softmax(x))"),
    "cross-entropy averaged by hand over the batch": ({"softmax_cross_entropy": ce_mean_by_hand},
                                                     "cross-entropy returning the batch mean"),
    "Softplus forward as log(1 + exp(x))": ({"Softplus": SoftplusLogOnePlus, "softplus": SoftplusLogOnePlus.apply},
                                            "softplus as log1p(exp(x))"),
    "Softplus backward returning the sigmoid only": ({"Softplus": SoftplusLocalOnly,
                                                      "softplus": SoftplusLocalOnly.apply},
                                                     "softplus backward ignoring the upstream gradient"),
    "softplus with autograd's own gradient": ({"softplus": softplus_autograd},
                                              "softplus as a plain function (no custom backward)"),
}
