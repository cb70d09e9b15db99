"""Realistic mistakes in the basics exercises, each with the checks that must catch it.

``MUTANTS[name] = (replacement objects, checks that must fail)``: the other
student objects come from the reference solution. ``GPU_MUTANTS`` are caught
only on a machine with CUDA.
"""

import numpy as np
import torch

# ------------------------------------------------------------------ grad_of


def grad_of_flag_left_set(f, x):
    x.requires_grad_(True)
    return torch.autograd.grad(f(x), x)[0]


def grad_of_backward_on_x(f, x):
    # The tutorial's second style, on the caller's tensor: .grad accumulates on it.
    x.requires_grad_(True)
    f(x).backward()
    grad = x.grad
    x.requires_grad_(False)
    return grad


def grad_of_create_graph(f, x):
    leaf = x.detach().requires_grad_(True)
    return torch.autograd.grad(f(leaf), leaf, create_graph=True)[0]


def grad_of_tuple(f, x):
    leaf = x.detach().requires_grad_(True)
    return torch.autograd.grad(f(leaf), leaf)      # forgot the [0]


def grad_of_finite_differences(f, x, eps=1e-3):
    flat = x.detach().reshape(-1)
    grad = torch.zeros_like(flat)
    with torch.no_grad():
        for i in range(flat.numel()):
            step = torch.zeros_like(flat)
            step[i] = eps
            grad[i] = (f((flat + step).reshape(x.shape)) - f((flat - step).reshape(x.shape))) / (2 * eps)
    return grad.reshape(x.shape)


# ----------------------------------------------------------------- to_numpy


def to_numpy_no_detach(t):
    return t.cpu().numpy()


def to_numpy_clearing_the_flag(t):
    t.requires_grad_(False)
    return t.cpu().numpy()


def to_numpy_via_tolist(t):
    return np.array(t.tolist())


def to_numpy_always_float32(t):
    return t.detach().cpu().numpy().astype(np.float32)


def to_numpy_through_flat_view(t):
    return t.detach().cpu().view(-1).numpy().reshape(tuple(t.shape))


def to_numpy_no_cpu(t):
    return t.detach().numpy()


# ------------------------------------------------------------ fit_quadratic

def _features(x):
    return torch.stack([x * x, x, torch.ones_like(x)], dim=-1)


def _train(generate_data, steps, lr, *, optimizer=torch.optim.Adam, fixed_sample=False, order=(0, 1, 2)):
    w = torch.randn(3, requires_grad=True)
    opt = optimizer([w], lr=lr)
    sample = generate_data() if fixed_sample else None
    for _ in range(steps):
        x, y = sample if fixed_sample else generate_data()
        loss = torch.nn.functional.mse_loss(_features(x)[:, list(order)] @ w, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w.detach()


def fit_sgd(generate_data, steps=1000, lr=0.1):
    return _train(generate_data, steps, lr, optimizer=torch.optim.SGD)


def fit_one_sample(generate_data, steps=1000, lr=0.1):
    return _train(generate_data, steps, lr, fixed_sample=True)


def fit_tutorial_shape(generate_data, steps=1000, lr=0.1):
    return _train(generate_data, steps, lr).reshape(3, 1)


def fit_reversed_features(generate_data, steps=1000, lr=0.1):
    return _train(generate_data, steps, lr, order=(2, 1, 0))


def fit_fixed_steps(generate_data, steps=1000, lr=0.1):
    return _train(generate_data, 1000, lr)


def fit_ignoring_lr(generate_data, steps=1000, lr=0.1):
    return _train(generate_data, steps, 0.01)


MUTANTS = {
    "grad_of leaving requires_grad set on x": ({"grad_of": grad_of_flag_left_set}, {"check_grad_of_values"}),
    "grad_of with .backward() on x": ({"grad_of": grad_of_backward_on_x}, {"check_grad_of_values"}),
    "grad_of with create_graph=True": ({"grad_of": grad_of_create_graph}, {"check_grad_of_values"}),
    "grad_of returning autograd.grad's tuple": ({"grad_of": grad_of_tuple}, {"check_grad_of_values"}),
    "grad_of by finite differences": ({"grad_of": grad_of_finite_differences}, {"check_grad_of_values"}),
    "to_numpy without detach": ({"to_numpy": to_numpy_no_detach},
                                {"check_to_numpy_requires_grad", "check_to_numpy_views"}),
    "to_numpy clearing requires_grad of its argument": ({"to_numpy": to_numpy_clearing_the_flag},
                                                        {"check_to_numpy_requires_grad"}),
    "to_numpy through tolist": ({"to_numpy": to_numpy_via_tolist}, {"check_to_numpy_values"}),
    "to_numpy always float32": ({"to_numpy": to_numpy_always_float32}, {"check_to_numpy_values"}),
    "to_numpy through a flat view": ({"to_numpy": to_numpy_through_flat_view}, {"check_to_numpy_views"}),
    "fit_quadratic with SGD": ({"fit_quadratic": fit_sgd}, {"check_fit_quadratic"}),
    "fit_quadratic on one sample": ({"fit_quadratic": fit_one_sample}, {"check_fit_quadratic_fresh_samples"}),
    "fit_quadratic returning the tutorial's [3, 1] weights": (
        {"fit_quadratic": fit_tutorial_shape}, {"check_fit_quadratic", "check_fit_quadratic_fresh_samples"}),
    "fit_quadratic with features in the order 1, x, x^2": ({"fit_quadratic": fit_reversed_features},
                                                           {"check_fit_quadratic"}),
    "fit_quadratic always running 1000 steps": ({"fit_quadratic": fit_fixed_steps},
                                                {"check_fit_quadratic_fresh_samples"}),
    "fit_quadratic ignoring lr": ({"fit_quadratic": fit_ignoring_lr}, {"check_fit_quadratic"}),
}

GPU_MUTANTS = {
    "to_numpy without .cpu()": ({"to_numpy": to_numpy_no_cpu}, {"check_to_numpy_values"}),
}

# What each mistake is, for the student: the grader says "This looks like: <description>" when a grade matches
# the mistake's signature (autograder/checks/basics/mistakes.py, written by tests/mistakes/signatures.py).
DESCRIPTIONS = {
    "grad_of leaving requires_grad set on x": "grad_of leaves `requires_grad` switched on for the caller's tensor.",
    "grad_of with .backward() on x": "grad_of calls `.backward()` and reads `x.grad`, which accumulates into the "
                                     "caller's tensor.",
    "grad_of with create_graph=True": "grad_of keeps the graph of the gradient (`create_graph=True`), so the result "
                                      "still requires grad.",
    "grad_of returning autograd.grad's tuple": "grad_of returns the tuple that `torch.autograd.grad` gives instead "
                                               "of the gradient tensor in it.",
    "grad_of by finite differences": "grad_of estimates the gradient by finite differences instead of autograd.",
    "to_numpy without detach": "to_numpy converts a tensor that requires grad without detaching it first.",
    "to_numpy clearing requires_grad of its argument": "to_numpy switches off `requires_grad` on the caller's "
                                                       "tensor.",
    "to_numpy through tolist": "to_numpy goes through `tolist()`, which loses the dtype.",
    "to_numpy always float32": "to_numpy converts to float32 whatever the tensor's dtype.",
    "to_numpy through a flat view": "to_numpy flattens the tensor, so the array has the wrong shape or is not a "
                                    "view.",
    "fit_quadratic with SGD": "fit_quadratic trains with plain SGD instead of the optimizer the lesson uses, and "
                              "does not reach the fit in the given steps.",
    "fit_quadratic on one sample": "fit_quadratic does not draw one fresh sample from generate_data() per step.",
    "fit_quadratic returning the tutorial's [3, 1] weights": "fit_quadratic returns the weights with the tutorial's "
                                                             "[3, 1] shape instead of the shape the exercise asks "
                                                             "for.",
    "fit_quadratic with features in the order 1, x, x^2": "fit_quadratic orders the features 1, x, x^2, so the "
                                                          "coefficients come back reversed.",
    "fit_quadratic always running 1000 steps": "fit_quadratic does not draw one fresh sample from generate_data() "
                                               "per step.",
    "fit_quadratic ignoring lr": "fit_quadratic ignores the learning rate it is given.",
}
