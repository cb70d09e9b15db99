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


def softmax_float32_always(logits, dim=-1):
    x = logits.float()                          # the other direction: float32 whatever the input's dtype
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


def ce_no_keepdim(labels, logits, dim=-1):
    shifted = logits - logits.amax(dim=dim, keepdim=True)
    log_probs = shifted - shifted.exp().sum(dim=dim).log()      # no keepdim: broadcasts along the wrong axis
    return -(labels * log_probs).sum(dim=dim)


# ---------------------------------------------------------------- Softplus

def _stable_softplus(x):
    return torch.relu(x) + torch.log1p(torch.exp(-x.abs()))


class SoftplusNaiveForward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log1p(torch.exp(x))                        # exp(x) overflows for large x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


class SoftplusHalfRewrite(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x + torch.log1p(torch.exp(-x))       # right for x > 0 only: exp(-x) overflows for very negative x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


class SoftplusNaiveSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _stable_softplus(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.exp(x) / (1 + torch.exp(x))   # inf / inf = NaN for large x


class SoftplusNoUpstream(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _stable_softplus(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return torch.sigmoid(x)                                   # forgets the chain rule


class SoftplusSavesOutput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = _stable_softplus(x)
        ctx.save_for_backward(y)                                  # saves the output ...
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors                                  # ... and uses it as if it were the input
        return grad_output * torch.sigmoid(x)


class SoftplusBuiltin(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


class SoftplusLogaddexp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.logaddexp(x, torch.zeros_like(x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


class SoftplusFloat64(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x = x.double()                                            # "more precision", and a float64 result
        ctx.save_for_backward(x)
        return _stable_softplus(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


def _function(cls):
    """The student objects of a Softplus answer: the class, and softplus as its apply."""
    return {"Softplus": cls, "softplus": cls.apply}


def softplus_plain(x):
    return torch.relu(x) + torch.log1p(torch.exp(-x.abs()))       # right values, autograd's own gradient


def softplus_where(x):
    return torch.where(x > 20, x, torch.log1p(torch.exp(x)))     # NaN gradient from the branch not taken


MUTANTS = {
    "softmax without the max-shift": ({"stable_softmax": softmax_no_shift}, {"check_softmax_extremes"}),
    "softmax with one max over the whole tensor": ({"stable_softmax": softmax_global_max},
                                                   {"check_softmax_extremes"}),
    "softmax forgetting keepdim": ({"stable_softmax": softmax_no_keepdim}, {"check_softmax_forward"}),
    "softmax summing over the wrong dim": ({"stable_softmax": softmax_wrong_dim_sum}, {"check_softmax_forward"}),
    "softmax of the wrong dtype": ({"stable_softmax": softmax_wrong_dtype}, {"check_softmax_forward"}),
    "softmax always in float32": ({"stable_softmax": softmax_float32_always}, {"check_softmax_forward"}),
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
    "cross-entropy without keepdim in the log-sum": ({"softmax_cross_entropy": ce_no_keepdim},
                                                    {"check_cross_entropy_forward", "check_cross_entropy_gradient"}),
    "softplus as log1p(exp(x))": (_function(SoftplusNaiveForward), {"check_softplus_extremes"}),
    "softplus as x + log1p(exp(-x)) (no max, no |x|)": (_function(SoftplusHalfRewrite),
                                                        {"check_softplus_extremes"}),
    "softplus backward as exp(x) / (1 + exp(x))": (_function(SoftplusNaiveSigmoid),
                                                   {"check_softplus_gradient"}),
    "softplus backward ignoring the upstream gradient": (_function(SoftplusNoUpstream),
                                                         {"check_softplus_gradient"}),
    "softplus backward using the saved output as the input": (_function(SoftplusSavesOutput),
                                                              {"check_softplus_gradient"}),
    "softplus calling F.softplus": (_function(SoftplusBuiltin), {"check_softplus_no_builtin"}),
    "softplus calling torch.logaddexp": (_function(SoftplusLogaddexp), {"check_softplus_no_builtin"}),
    "softplus computed and returned in float64": (_function(SoftplusFloat64), {"check_softplus_forward"}),
    "softplus as a plain function (no custom backward)": ({"softplus": softplus_plain},
                                                          {"check_softplus_custom_backward"}),
    "softplus with torch.where in a plain function": ({"softplus": softplus_where},
                                                      {"check_softplus_gradient", "check_softplus_custom_backward"}),
}

# What each mistake is, for the student: the grader says "This looks like: <description>" when a grade matches
# the mistake's signature (autograder/checks/stability/mistakes.py, written by tests/mistakes/signatures.py).
DESCRIPTIONS = {
    "softmax without the max-shift": "stable_softmax exponentiates the logits without subtracting a maximum first, "
                                     "so large logits overflow.",
    "softmax with one max over the whole tensor": "stable_softmax subtracts one max over the whole tensor instead "
                                                  "of the max of each row, so rows far below it underflow to 0.",
    "softmax forgetting keepdim": "stable_softmax reduces without `keepdim=True` and puts the dimension back at the "
                                  "end, which is wrong when `dim` is not the last one.",
    "softmax summing over the wrong dim": "stable_softmax normalises by a sum over another dimension than `dim`.",
    "softmax of the wrong dtype": "stable_softmax returns another dtype than its input's.",
    "softmax always in float32": "stable_softmax returns another dtype than its input's.",
    "softmax with NaN for float16 input": "stable_softmax shifts by the mean instead of the maximum, which still "
                                          "overflows in float16.",
    "softmax calling F.softmax": "stable_softmax calls a built-in softmax instead of building it from elementary "
                                 "operations.",
    "softmax through NumPy": "stable_softmax goes through NumPy, so no gradient flows back to the logits.",
    "cross-entropy as log(softmax(x))": "softmax_cross_entropy takes the log of a softmax, which is -inf when a "
                                        "probability underflows to 0.",
    "cross-entropy without the max-shift": "softmax_cross_entropy exponentiates the logits without subtracting a "
                                           "maximum first, so large logits overflow.",
    "cross-entropy with a global max": "softmax_cross_entropy subtracts one max over the whole batch instead of the "
                                       "max of each row.",
    "cross-entropy returning the batch mean": "softmax_cross_entropy averages over the batch instead of returning "
                                              "one loss per example.",
    "cross-entropy calling torch.logsumexp": "softmax_cross_entropy calls a built-in log-sum-exp instead of "
                                             "building it from elementary operations.",
    "cross-entropy summing over the wrong dim": "softmax_cross_entropy sums the per-class terms over another "
                                                "dimension than `dim`.",
    "cross-entropy of the wrong dtype": "softmax_cross_entropy computes in float32 whatever the input's dtype.",
    "cross-entropy with detached logits": "softmax_cross_entropy detaches the logits, so no gradient flows back to "
                                          "them.",
    "cross-entropy without keepdim in the log-sum": "softmax_cross_entropy reduces the log-sum-exp without "
                                                    "`keepdim=True`, so it broadcasts along the wrong axis.",
    "softplus as log1p(exp(x))": "Softplus's forward computes `log1p(exp(x))`, which overflows for large x.",
    "softplus as x + log1p(exp(-x)) (no max, no |x|)": "Softplus's forward computes `x + log1p(exp(-x))`, which "
                                                       "overflows for very negative x.",
    "softplus backward as exp(x) / (1 + exp(x))": "Softplus's backward computes `exp(x) / (1 + exp(x))`, which is "
                                                  "inf / inf = NaN for large x.",
    "softplus backward ignoring the upstream gradient": "Softplus's backward returns the local derivative without "
                                                        "multiplying by the upstream gradient (`grad_output`).",
    "softplus backward using the saved output as the input": "Softplus saves its output in forward and uses it in "
                                                             "backward as if it were the input.",
    "softplus calling F.softplus": "Softplus's forward calls a built-in softplus.",
    "softplus calling torch.logaddexp": "Softplus's forward calls `torch.logaddexp`, a built-in that does the "
                                        "stable part for you.",
    "softplus computed and returned in float64": "Softplus computes and returns float64 whatever the input's "
                                                 "dtype.",
    "softplus as a plain function (no custom backward)": "softplus is a plain function: autograd derives its "
                                                         "gradient, no `torch.autograd.Function` backward is "
                                                         "written.",
    "softplus with torch.where in a plain function": "softplus picks between two formulas with `torch.where` in a "
                                                     "plain function: the branch not taken still gives a NaN "
                                                     "gradient.",
}
