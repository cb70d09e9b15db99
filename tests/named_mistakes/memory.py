"""Mistakes in the memory exercises, written apart from the mutants (see ``__init__``)."""

import torch


def saved_nelement(model, x):
    count = [0]

    def pack(t):
        count[0] += t.nelement()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, count[0]


def predict_data(model, x):
    return model(x).data


def residual_relu_inplace_sum(x, w):
    h = torch.relu(x @ w)
    h.add_(x)
    return h


MISTAKES = {
    "saved_bytes counting nelement()": ({"saved_bytes": saved_nelement}, "saved_bytes counts elements, not bytes"),
    "predict returning .data": ({"predict": predict_data}, "predict detaches the result instead of no_grad"),
    "residual_relu with add_ on relu's output": ({"residual_relu": residual_relu_inplace_sum},
                                                 "residual_relu adds x in place into relu's saved output"),
}
