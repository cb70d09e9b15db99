"""Mistakes in the basics exercises, written apart from the mutants (see ``__init__``)."""

import numpy as np


def grad_of_backward(f, x):
    x.requires_grad_(True)
    f(x).backward()
    return x.grad


def to_numpy_direct(t):
    return t.numpy()


def to_numpy_array_of_list(t):
    return np.array(t.tolist())


def to_numpy_float(t):
    return t.detach().cpu().float().numpy()


MISTAKES = {
    "grad_of through backward() and x.grad": ({"grad_of": grad_of_backward}, "grad_of with .backward() on x"),
    "to_numpy calling .numpy() directly": ({"to_numpy": to_numpy_direct}, "to_numpy without detach"),
    "to_numpy through a list": ({"to_numpy": to_numpy_array_of_list}, "to_numpy through tolist"),
    "to_numpy converting to float": ({"to_numpy": to_numpy_float}, "to_numpy always float32"),
}
