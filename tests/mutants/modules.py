"""Realistic mistakes in the modules exercises, each with the checks that must catch it.

``MUTANTS[name] = (replacement objects, checks that must fail)``: the other
student objects come from the reference solution.
"""

import copy

import torch

# ------------------------------------------------------------------- Affine


class AffinePlainTensors(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.randn(1, requires_grad=True)
        self.b = torch.randn(1, requires_grad=True)

    def forward(self, x):
        return self.a * x + self.b


class AffineParameterList(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.params = [torch.nn.Parameter(torch.randn(1)), torch.nn.Parameter(torch.randn(1))]

    def forward(self, x):
        return self.params[0] * x + self.params[1]


class AffineScalars(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(1.0))
        self.b = torch.nn.Parameter(torch.tensor(0.0))

    def forward(self, x):
        return self.a * x + self.b


class AffineBuffers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.randn(1))
        self.register_buffer("b", torch.randn(1))

    def forward(self, x):
        return self.a * x + self.b


class AffineItem(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(1))
        self.b = torch.nn.Parameter(torch.randn(1))

    def forward(self, x):
        return self.a.item() * x + self.b.item()


class AffineSwapped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(1))
        self.b = torch.nn.Parameter(torch.randn(1))

    def forward(self, x):
        return self.b * x + self.a


class AffineFloat64(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(1, dtype=torch.float64))
        self.b = torch.nn.Parameter(torch.randn(1, dtype=torch.float64))

    def forward(self, x):
        return self.a * x + self.b


# ----------------------------------------------------------------- make_mlp


def _layers(sizes, activation, *, last_activation=False):
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers += [torch.nn.Linear(n_in, n_out), activation()]
    return layers if last_activation else layers[:-1]


def mlp_activation_after_last(sizes, activation=torch.nn.ReLU):
    if len(sizes) < 2:
        raise ValueError("need two sizes")
    return torch.nn.Sequential(*_layers(sizes, activation, last_activation=True))


def mlp_always_relu(sizes, activation=torch.nn.ReLU):
    if len(sizes) < 2:
        raise ValueError("need two sizes")
    return torch.nn.Sequential(*_layers(sizes, torch.nn.ReLU))


def mlp_activation_class_not_instance(sizes, activation=torch.nn.ReLU):
    if len(sizes) < 2:
        raise ValueError("need two sizes")
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        if i:
            layers.append(activation)
        layers.append(torch.nn.Linear(n_in, n_out))
    return torch.nn.Sequential(*layers)


def mlp_no_validation(sizes, activation=torch.nn.ReLU):
    return torch.nn.Sequential(*_layers(sizes, activation))


def mlp_assert_instead_of_value_error(sizes, activation=torch.nn.ReLU):
    assert len(sizes) >= 2, "need two sizes"
    return torch.nn.Sequential(*_layers(sizes, activation))


def mlp_without_bias(sizes, activation=torch.nn.ReLU):
    if len(sizes) < 2:
        raise ValueError("need two sizes")
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        if i:
            layers.append(activation())
        layers.append(torch.nn.Linear(n_in, n_out, bias=False))
    return torch.nn.Sequential(*layers)


def mlp_reusing_layers_of_equal_size(sizes, activation=torch.nn.ReLU):
    if len(sizes) < 2:
        raise ValueError("need two sizes")
    built, layers = {}, []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        if i:
            layers.append(activation())
        if (n_in, n_out) not in built:                       # the same layer again for the same sizes
            built[n_in, n_out] = torch.nn.Linear(n_in, n_out)
        layers.append(built[n_in, n_out])
    return torch.nn.Sequential(*layers)


def mlp_sharing_weights_of_equal_size(share):
    """A ``make_mlp`` with a Linear module of its own per layer, where each layer of sizes already seen takes the
    first such layer's weight by ``share(layer, first)``."""
    def make_mlp(sizes, activation=torch.nn.ReLU):
        if len(sizes) < 2:
            raise ValueError("need two sizes")
        first, layers = {}, []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            if i:
                layers.append(activation())
            layer = torch.nn.Linear(n_in, n_out)
            if (n_in, n_out) in first:
                share(layer, first[n_in, n_out])
            first.setdefault((n_in, n_out), layer)
            layers.append(layer)
        return torch.nn.Sequential(*layers)
    return make_mlp


def tie_weight(layer, first):
    layer.weight = first.weight          # its own module, but one weight Parameter for equal sizes


mlp_tying_weights_of_equal_size = mlp_sharing_weights_of_equal_size(tie_weight)


# ---------------------------------------------------------------------- fit


def _fit(model, x, y, steps, lr, *, zero_grad=True, reduction="mean", momentum=0.0, squeeze=False,
         report="last", step_first=False):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    losses = []
    for _ in range(steps):
        prediction = model(x)
        if squeeze:
            prediction = prediction.squeeze()
        loss = torch.nn.functional.mse_loss(prediction, y, reduction=reduction)
        if zero_grad:
            optimizer.zero_grad()
        if step_first:
            optimizer.step()
            loss.backward()
        else:
            loss.backward()
            optimizer.step()
        losses.append(loss.item())
    if report == "tensor":
        return loss
    if report == "after":
        with torch.no_grad():
            return torch.nn.functional.mse_loss(model(x), y).item()
    return losses[0] if report == "first" else losses[-1]


def fit_without_zero_grad(model, x, y, steps=500, lr=0.1):
    return _fit(model, x, y, steps, lr, zero_grad=False)


def fit_sum_of_squares(model, x, y, steps=500, lr=0.1):
    return _fit(model, x, y, steps, lr, reduction="sum")


def fit_with_momentum(model, x, y, steps=500, lr=0.1):
    return _fit(model, x, y, steps, lr, momentum=0.9)


def fit_squeezed_prediction(model, x, y, steps=500, lr=0.1):
    return _fit(model, x, y, steps, lr, squeeze=True)


def fit_returning_first_loss(model, x, y, steps=500, lr=0.1):
    return _fit(model, x, y, steps, lr, report="first")


def fit_returning_a_tensor(model, x, y, steps=500, lr=0.1):
    return _fit(model, x, y, steps, lr, report="tensor")


def fit_returning_the_loss_after_training(model, x, y, steps=500, lr=0.1):
    return _fit(model, x, y, steps, lr, report="after")


def fit_step_before_backward(model, x, y, steps=500, lr=0.1):
    return _fit(model, x, y, steps, lr, step_first=True)


def fit_on_a_copy(model, x, y, steps=500, lr=0.1):
    return _fit(copy.deepcopy(model), x, y, steps, lr)


def fit_fixed_lr(model, x, y, steps=500, lr=0.1):
    return _fit(model, x, y, steps, 0.01)


# --------------------------------------------------------------- Normalizer


class NormalizerMistake(torch.nn.Module):
    """A Normalizer with one mistake switched on by a subclass."""

    update_correction = 1          # the variance that goes into running_var (1: unbiased, as BatchNorm1d)
    normalise_correction = 0       # the variance the output divides by (0: biased, as BatchNorm1d)
    update_in_eval = False
    batch_stats_in_eval = False
    reversed_momentum = False
    detach = True
    eps_outside = False
    dim = 0

    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.make("running_mean", torch.zeros(num_features))
        self.make("running_var", torch.ones(num_features))

    def make(self, name, value):
        self.register_buffer(name, value)

    def forward(self, x):
        if self.training or self.batch_stats_in_eval:
            mean = x.mean(self.dim, keepdim=True)
            var = x.var(self.dim, correction=self.normalise_correction, keepdim=True)
        else:
            mean, var = self.running_mean, self.running_var
        if self.training or self.update_in_eval:
            self.update(x)
        if self.eps_outside:
            return (x - mean) / (torch.sqrt(var) + self.eps)
        return (x - mean) / torch.sqrt(var + self.eps)

    def statistics(self, x):
        mean, var = x.mean(0), x.var(0, correction=self.update_correction)
        return (mean.detach(), var.detach()) if self.detach else (mean, var)

    def update(self, x):
        mean, var = self.statistics(x)
        keep, take = (self.momentum, 1 - self.momentum) if self.reversed_momentum else (1 - self.momentum,
                                                                                         self.momentum)
        self.running_mean = keep * self.running_mean + take * mean
        self.running_var = keep * self.running_var + take * var


class NormalizerPlainTensors(NormalizerMistake):
    def make(self, name, value):
        setattr(self, name, value)


class NormalizerParameters(NormalizerMistake):
    def make(self, name, value):
        setattr(self, name, torch.nn.Parameter(value, requires_grad=False))

    def update(self, x):
        mean, var = self.statistics(x)
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * var)


class NormalizerNotPersistent(NormalizerMistake):
    def make(self, name, value):
        self.register_buffer(name, value, persistent=False)


class NormalizerBiasedRunningVar(NormalizerMistake):
    update_correction = 0


class NormalizerUnbiasedOutput(NormalizerMistake):
    normalise_correction = 1


class NormalizerUpdatingInEval(NormalizerMistake):
    update_in_eval = True


class NormalizerBatchStatsInEval(NormalizerMistake):
    batch_stats_in_eval = True


class NormalizerReversedMomentum(NormalizerMistake):
    reversed_momentum = True


class NormalizerNotDetached(NormalizerMistake):
    detach = False


class NormalizerEpsOutsideSqrt(NormalizerMistake):
    eps_outside = True


class NormalizerOverFeatures(NormalizerMistake):
    dim = 1


class NormalizerFunctionalBatchNorm(NormalizerMistake):
    def forward(self, x):
        return torch.nn.functional.batch_norm(x, self.running_mean, self.running_var, training=self.training,
                                              momentum=self.momentum, eps=self.eps)


class NormalizerBatchNormModule(torch.nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.norm = torch.nn.BatchNorm1d(num_features, momentum=momentum, eps=eps, affine=False)

    running_mean = property(lambda self: self.norm.running_mean)
    running_var = property(lambda self: self.norm.running_var)

    def forward(self, x):
        return self.norm(x)


MUTANTS = {
    "Affine with plain tensors": ({"Affine": AffinePlainTensors},
                                  {"check_affine_parameters", "check_affine_round_trips"}),
    "Affine keeping its parameters in a list": ({"Affine": AffineParameterList},
                                                {"check_affine_parameters", "check_affine_round_trips"}),
    "Affine with scalar parameters": ({"Affine": AffineScalars}, {"check_affine_parameters"}),
    "Affine with buffers": ({"Affine": AffineBuffers}, {"check_affine_parameters", "check_affine_gradients"}),
    "Affine calling .item() in forward": ({"Affine": AffineItem}, {"check_affine_gradients"}),
    "Affine computing b * x + a": ({"Affine": AffineSwapped}, {"check_affine_forward"}),
    "Affine with float64 parameters": ({"Affine": AffineFloat64},
                                       {"check_affine_parameters", "check_affine_forward"}),
    "make_mlp with an activation after the last layer": (
        {"make_mlp": mlp_activation_after_last}, {"check_make_mlp_structure", "check_make_mlp_forward"}),
    "make_mlp ignoring activation": ({"make_mlp": mlp_always_relu},
                                     {"check_make_mlp_structure", "check_make_mlp_forward"}),
    "make_mlp with the activation class instead of an instance": (
        {"make_mlp": mlp_activation_class_not_instance}, {"check_make_mlp_structure", "check_make_mlp_forward"}),
    "make_mlp accepting fewer than two sizes": ({"make_mlp": mlp_no_validation},
                                                {"check_make_mlp_rejects_short_sizes"}),
    "make_mlp asserting instead of raising ValueError": ({"make_mlp": mlp_assert_instead_of_value_error},
                                                         {"check_make_mlp_rejects_short_sizes"}),
    "make_mlp without biases": ({"make_mlp": mlp_without_bias}, {"check_make_mlp_structure"}),
    "make_mlp reusing one Linear for layers of equal size": ({"make_mlp": mlp_reusing_layers_of_equal_size},
                                                              {"check_make_mlp_structure"}),
    "make_mlp tying the weights of layers of equal size": ({"make_mlp": mlp_tying_weights_of_equal_size},
                                                            {"check_make_mlp_structure"}),
    "fit without zero_grad": ({"fit": fit_without_zero_grad}, {"check_fit_matches_sgd"}),
    "fit on the sum of squares": ({"fit": fit_sum_of_squares}, {"check_fit_matches_sgd", "check_fit_recovers_line"}),
    "fit with momentum": ({"fit": fit_with_momentum}, {"check_fit_matches_sgd"}),
    "fit with a squeezed prediction": ({"fit": fit_squeezed_prediction},
                                       {"check_fit_matches_sgd", "check_fit_recovers_line"}),
    "fit returning the first loss": ({"fit": fit_returning_first_loss}, {"check_fit_matches_sgd"}),
    "fit returning a tensor": ({"fit": fit_returning_a_tensor}, {"check_fit_matches_sgd"}),
    "fit returning the loss after training": ({"fit": fit_returning_the_loss_after_training},
                                              {"check_fit_matches_sgd"}),
    "fit stepping before backward": ({"fit": fit_step_before_backward}, {"check_fit_matches_sgd"}),
    "fit training a copy": ({"fit": fit_on_a_copy}, {"check_fit_matches_sgd", "check_fit_recovers_line"}),
    "fit ignoring lr": ({"fit": fit_fixed_lr}, {"check_fit_matches_sgd"}),
    "Normalizer with running statistics as plain tensor attributes": ({"Normalizer": NormalizerPlainTensors},
                                                                      {"check_normalizer_buffers"}),
    "Normalizer with running statistics as nn.Parameter": ({"Normalizer": NormalizerParameters},
                                                           {"check_normalizer_buffers"}),
    "Normalizer with non-persistent buffers": ({"Normalizer": NormalizerNotPersistent},
                                               {"check_normalizer_buffers"}),
    "Normalizer updating running_var with the biased variance": ({"Normalizer": NormalizerBiasedRunningVar},
                                                                  {"check_normalizer_train"}),
    "Normalizer normalising with the unbiased variance": ({"Normalizer": NormalizerUnbiasedOutput},
                                                          {"check_normalizer_train", "check_normalizer_gradients"}),
    "Normalizer updating running statistics in eval mode": ({"Normalizer": NormalizerUpdatingInEval},
                                                            {"check_normalizer_eval"}),
    "Normalizer using batch statistics in eval mode": ({"Normalizer": NormalizerBatchStatsInEval},
                                                       {"check_normalizer_eval"}),
    "Normalizer applying momentum the other way round": ({"Normalizer": NormalizerReversedMomentum},
                                                         {"check_normalizer_train"}),
    "Normalizer updating running statistics with gradient history": ({"Normalizer": NormalizerNotDetached},
                                                                     {"check_normalizer_gradients"}),
    "Normalizer adding eps outside the square root": ({"Normalizer": NormalizerEpsOutsideSqrt},
                                                      {"check_normalizer_train", "check_normalizer_eval",
                                                       "check_normalizer_gradients"}),
    "Normalizer normalising over the features of each row": ({"Normalizer": NormalizerOverFeatures},
                                                             {"check_normalizer_train",
                                                              "check_normalizer_gradients"}),
    "Normalizer calling F.batch_norm": ({"Normalizer": NormalizerFunctionalBatchNorm},
                                        {"check_normalizer_no_builtin"}),
    "Normalizer wrapping nn.BatchNorm1d": ({"Normalizer": NormalizerBatchNormModule},
                                           {"check_normalizer_buffers", "check_normalizer_no_builtin"}),
}

# What each mistake is, for the student: the grader says "This looks like: <description>" when a grade matches
# the mistake's signature (autograder/checks/modules/mistakes.py, written by tests/mistakes/signatures.py).
DESCRIPTIONS = {
    "Affine with plain tensors": "Affine keeps its weights as plain tensors, not `nn.Parameter`s, so the module does "
                                 "not register them.",
    "Affine keeping its parameters in a list": "Affine keeps its parameters in a Python list, which the module does "
                                               "not register.",
    "Affine with scalar parameters": "Affine's parameters are scalars instead of having the shape the exercise "
                                     "gives.",
    "Affine with buffers": "Affine registers its weights as buffers, which get no gradient.",
    "Affine calling .item() in forward": "Affine calls `.item()` in forward, which cuts the graph.",
    "Affine computing b * x + a": "Affine swaps the roles of its two parameters.",
    "Affine with float64 parameters": "Affine creates float64 parameters.",
    "make_mlp with an activation after the last layer": "make_mlp puts an activation after the last layer too.",
    "make_mlp ignoring activation": "make_mlp ignores the `activation` it is given.",
    "make_mlp with the activation class instead of an instance": "make_mlp puts the activation class in the "
        "Sequential instead of an instance of it.",
    "make_mlp accepting fewer than two sizes": "make_mlp accepts fewer than two sizes instead of raising "
                                               "ValueError.",
    "make_mlp asserting instead of raising ValueError": "make_mlp checks the sizes with `assert` instead of raising "
                                                        "ValueError.",
    "make_mlp without biases": "make_mlp builds its Linear layers without biases.",
    "make_mlp reusing one Linear for layers of equal size": "make_mlp reuses one Linear object for layers of equal "
                                                            "size, so they share their weights.",
    "make_mlp tying the weights of layers of equal size": "make_mlp ties the weights of layers of equal size.",
    "fit without zero_grad": "fit never clears the gradients, so they add up across steps.",
    "fit on the sum of squares": "fit minimises the sum of squared errors instead of their mean.",
    "fit with momentum": "fit uses SGD with momentum instead of plain SGD.",
    "fit with a squeezed prediction": "fit squeezes the prediction, so [N] against [N, 1] broadcasts to [N, N] in "
                                      "the loss.",
    "fit returning the first loss": "fit returns the loss of the first step instead of the last.",
    "fit returning a tensor": "fit returns the loss as a tensor instead of a Python float.",
    "fit returning the loss after training": "fit returns a new loss computed after the last update instead of the "
                                             "loss of the last step.",
    "fit stepping before backward": "fit steps the optimizer before calling backward.",
    "fit training a copy": "fit trains a copy of the model, so the model it is given does not change.",
    "fit ignoring lr": "fit ignores the learning rate it is given.",
    "Normalizer with running statistics as plain tensor attributes": "Normalizer does not register its running "
                                                                     "statistics as buffers saved in the state_dict.",
    "Normalizer with running statistics as nn.Parameter": "Normalizer does not register its running statistics as "
                                                          "buffers saved in the state_dict.",
    "Normalizer with non-persistent buffers": "Normalizer does not register its running statistics as buffers saved "
                                              "in the state_dict.",
    "Normalizer updating running_var with the biased variance": "Normalizer updates `running_var` with the biased "
                                                                "variance instead of the unbiased one.",
    "Normalizer normalising with the unbiased variance": "Normalizer normalises the batch with the unbiased "
                                                         "variance instead of the biased one.",
    "Normalizer updating running statistics in eval mode": "Normalizer updates its running statistics in eval mode "
                                                           "too.",
    "Normalizer using batch statistics in eval mode": "Normalizer uses the batch's statistics in eval mode instead "
                                                      "of the running ones.",
    "Normalizer applying momentum the other way round": "Normalizer applies the momentum the other way round in the "
                                                        "running average.",
    "Normalizer updating running statistics with gradient history": "Normalizer updates its running statistics "
        "from tensors that carry gradient history.",
    "Normalizer adding eps outside the square root": "Normalizer adds eps outside the square root instead of "
                                                     "inside it.",
    "Normalizer normalising over the features of each row": "Normalizer normalises over the features of each row "
                                                            "instead of over the batch.",
    "Normalizer calling F.batch_norm": "Normalizer calls a built-in batch norm.",
    "Normalizer wrapping nn.BatchNorm1d": "Normalizer wraps a built-in BatchNorm1d.",
}
