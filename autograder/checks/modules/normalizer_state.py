"""The ``Normalizer``'s state as the checks read it: construction, its running statistics, whether they are
proper buffers (registered, persistent, not parameters), and what ``state_dict``, ``.to()`` and ``.double()`` do
with them. The graded checks are in ``__init__``; the oracle and the inputs in ``batchnorm_oracle``."""

import io

import torch

from autograder.checks.modules import batchnorm_oracle as oracle
from autograder.checks.modules import probes
from autograder.errors import CheckFailure
from autograder.measuring.compare import expect_close
from autograder.seam.handle import handle
from autograder.seam.student import describe

BUFFER_HINT = ("In __init__, after super().__init__(): `self.register_buffer(\"running_mean\", "
               "torch.zeros(num_features))` and `self.register_buffer(\"running_var\", torch.ones(num_features))`. "
               "A buffer is state that is not trained: state_dict() saves it, .to() and .double() convert it, "
               "parameters() (and so every optimizer) leave it out.")
NO_GRAD_HINT = ("Update the running statistics from detached values: inside `with torch.no_grad():` (in place, "
                "`self.running_mean.mul_(1 - m).add_(m * mean)`), or from `mean.detach()`.")


def new_normalizer(check, Normalizer, config):
    __tracebackhide__ = True
    args, kwargs = config.args()
    module = Normalizer(*args, **kwargs)
    if not isinstance(module, torch.nn.Module):
        raise CheckFailure(check, f"{config.call} is a {probes.type_name(module)}, not a torch.nn.Module.",
                           hint="Subclass torch.nn.Module and call super().__init__() first.")
    return module


def statistic(check, module, name, config):
    """``module.running_mean`` or ``module.running_var``: a tensor of shape [num_features], whatever holds it."""
    __tracebackhide__ = True
    value = getattr(module, name, None)
    if not isinstance(value, torch.Tensor):
        raise CheckFailure(check, f"{config.call}.{name} is {describe(value)}; expected a buffer of shape "
                                  f"[{config.features}].", hint=BUFFER_HINT)
    if tuple(value.shape) != (config.features,):
        raise CheckFailure(check, f"{config.call}.{name} has shape {list(value.shape)}; expected "
                                  f"[{config.features}] (one statistic per feature).", hint=BUFFER_HINT)
    return value


def set_mode(check, module, train, config):
    __tracebackhide__ = True
    check.student(module.train if train else module.eval, f"{config.call}.{'train' if train else 'eval'}")()


def convert(check, module, config, *args, method="to"):
    __tracebackhide__ = True
    moved = check.student(getattr(module, method), f"{config.call}.{method}")(*args)
    return module if moved is None else moved


def set_statistics(check, module, config, values):
    """Write ``values`` (name -> tensor) into the module's own statistics, in place (where the module lives)."""
    __tracebackhide__ = True
    for name in values:
        statistic(check, module, name, config)
    handle(module).beside(probes.set_values, values)


def buffer_problem(module, name, config):
    """``[kind, why]`` ``module.<name>`` is not a proper buffer, or ``None`` (registration is seen where the module
    lives)."""
    return handle(module).beside(probes.buffer_problem, name, config.call)


def expect_state_round_trip(check, Normalizer, module, config, gen):
    __tracebackhide__ = True
    values = {name: torch.rand(config.features, generator=gen) + 0.5 for name in oracle.BUFFERS}
    set_statistics(check, module, config, values)
    saved = io.BytesIO()
    torch.save(probes.state_of(module), saved)
    saved.seek(0)
    fresh = new_normalizer(check, Normalizer, config)
    try:
        fresh.load_state_dict(torch.load(saved))
    except RuntimeError as error:
        raise CheckFailure(check, f"loading a saved {config.call}.state_dict() into a fresh {config.call} failed: "
                                  f"{error}", hint=BUFFER_HINT) from None
    for name, value in values.items():
        expect_close(check, statistic(check, fresh, name, config), value, rtol=0, atol=0,
                     what=f"{name} of a fresh {config.call} after load_state_dict(saved)", hint=BUFFER_HINT)


def expect_conversions(check, Normalizer, config, gen):
    """``.to(torch.float64)``, ``.double()`` and (with a GPU) ``.to("cuda")`` carry both buffers, values kept;
    after a float64 train step they are still registered, persistent buffers."""
    __tracebackhide__ = True
    moves = [("to", (torch.float64,), torch.float64, "cpu"), ("double", (), torch.float64, "cpu")]
    if torch.cuda.is_available():
        moves.append(("to", ("cuda",), torch.get_default_dtype(), "cuda"))
    for method, args, dtype, device in moves:
        shown = f"{config.call}.{method}({', '.join(map(repr, args))})"
        module = convert(check, new_normalizer(check, Normalizer, config), config, *args, method=method)
        for name, initial in oracle.BUFFERS.items():
            value = statistic(check, module, name, config)
            if value.dtype != dtype or value.device.type != device:
                raise CheckFailure(check, f"after {shown}, {name} is {value.dtype} on {value.device}; expected "
                                          f"{dtype} on {device}: it was left behind.", hint=BUFFER_HINT)
            expect_close(check, value, torch.full((config.features,), initial, dtype=torch.float64), rtol=0, atol=0,
                         what=f"{name} after {shown}")
    module = convert(check, new_normalizer(check, Normalizer, config), config, method="double")
    x = oracle.draw_batch(gen, oracle.batch_size(gen), config.features)
    check.student(module, f"{config.call}.double() in train mode")(x)
    for name in oracle.BUFFERS:
        kind, problem = buffer_problem(module, name, config) or (None, None)
        if problem or name not in probes.state_of(module):
            raise CheckFailure(check, f"after a train step, {problem or f'{name} is missing from state_dict()'}. "
                                      "The forward pass replaced the buffer with something else.", kind=kind,
                               hint="Update the buffer in place (`self.running_mean.mul_(...)`) or assign a plain "
                                    "tensor to the same name (`self.running_mean = ...`), which keeps it a buffer.")


def expect_unchanged(check, module, config, held, x):
    __tracebackhide__ = True
    for name, value in held.items():
        now = statistic(check, module, name, config)
        if not torch.equal(now.detach().double().cpu(), value):
            raise CheckFailure(check, f"{config.call} in eval() mode changed {name} from {describe(value)} to "
                                      f"{describe(now)} on x = {describe(x)}. In eval mode the running statistics "
                                      "are read, never updated.",
                               hint="Update them only when `self.training` is True (module.train() sets it, "
                                    "module.eval() clears it).")
