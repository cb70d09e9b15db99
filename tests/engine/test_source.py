"""Units of the source evidence: every spelling the rules and the evasion list name is caught; honest look-alikes
are not (a local ``sum``, a student's own method ``softmax``, a docstring that mentions ``torch._C``)."""

import pytest

from autograder.source_evidence.evasion import affecting
from autograder.source_evidence.source_rules import autograd_function, made_by, no_call, no_loop, rule_findings, uses
from autograder.source_evidence.submitted_source import Submission

SOFTMAX = no_call("stable_softmax", "softmax", "log_softmax", "logsumexp")


def broken(rule, *cells):
    return [f.text() for f in rule_findings(rule, Submission.from_cells(
        [(f"cell {i}", text) for i, text in enumerate(cells)]))]


def flagged(targets, *cells, names=("row_sum",)):
    return [f.text() for f in affecting(Submission.from_cells([(f"cell {i}", t) for i, t in enumerate(cells)]),
                                        targets, names)]


@pytest.mark.quick
@pytest.mark.parametrize("body", [
    "for r in x:\n        pass\n    return x.sum(0)", "i = 0\n    while i < 3:\n        i += 1\n    return x",
    "return torch.stack([r for r in x]).sum(0)", "return sum(x)", "return sum(r for r in x)",
    "return functools.reduce(lambda a, b: a + b, x)", "return list(map(lambda r: r, x))[0]",
])
def test_a_loop_in_any_form_is_found(body):
    assert broken(no_loop("row_sum"), "import functools\nimport torch\n", f"def row_sum(x):\n    {body}\n")


@pytest.mark.quick
def test_a_loop_in_a_helper_the_answer_calls_is_found_in_another_cell():
    found = broken(no_loop("row_sum"), "def helper(x):\n    for r in x:\n        pass\n    return x",
                   "def row_sum(x):\n    return helper(x).sum(0)")
    assert found and "cell 0, line 2" in found[0]


@pytest.mark.quick
def test_a_local_sum_and_a_loop_elsewhere_are_not_the_answers():
    assert broken(no_loop("row_sum"), "def other(x):\n    return [r for r in x]\n",
                  "def row_sum(x):\n    sum = x.sum\n    return sum(0)\n") == []


@pytest.mark.quick
@pytest.mark.parametrize("cell", [
    "import torch\ndef stable_softmax(x, dim):\n    return torch.softmax(x, dim)",
    "import torch.nn.functional as F\ndef stable_softmax(x, dim):\n    return F.softmax(x, dim)",
    "import torch\ndef stable_softmax(x, dim):\n    return torch.nn.functional.softmax(x, dim)",
    "from torch import softmax as s\ndef stable_softmax(x, dim):\n    return s(x, dim)",
    "def stable_softmax(x, dim):\n    return x.softmax(dim)",
    "import torch\ndef stable_softmax(x, dim):\n    return (x - torch.special.logsumexp(x, dim, True)).exp()",
    "import torch\ndef stable_softmax(x, dim):\n    return getattr(torch, 'softmax')(x, dim)",
    "import torch\nsm = torch.softmax\ndef stable_softmax(x, dim):\n    return sm(x, dim)",
    "from torch import nn\ndef stable_softmax(x, dim):\n    return nn.Softmax(dim)(x)",
    "import torch\ndef stable_softmax(x, dim):\n    return torch.ops.aten._softmax(x, dim, False)",
])
def test_a_builtin_in_any_spelling_is_found(cell):
    assert broken(SOFTMAX, cell)


@pytest.mark.quick
def test_the_students_own_method_named_softmax_is_theirs():
    cell = ("import torch\nclass Soft:\n    def softmax(self, x, dim):\n        e = (x - x.amax(dim, keepdim=True)).exp()"
            "\n        return e / e.sum(dim, keepdim=True)\n    def __call__(self, x, dim):\n"
            "        return self.softmax(x, dim)\n\nstable_softmax = Soft()\n")
    assert broken(SOFTMAX, cell) == []


@pytest.mark.quick
def test_made_by_and_autograd_function():
    assert broken(made_by("scripted", "torch.jit.script"), "import torch\nscripted = torch.jit.script(loop)") == []
    assert broken(made_by("scripted", "torch.jit.script"), "scripted = loop")
    honest = ("import torch\nclass Softplus(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
              "        return x\n    @staticmethod\n    def backward(ctx, g):\n        return g\n"
              "def softplus(x):\n    return Softplus.apply(x)\n")
    assert broken(autograd_function("Softplus", "softplus"), honest) == []
    assert len(broken(autograd_function("Softplus", "softplus"),
                      honest.replace("(torch.autograd.Function)", "").replace("Softplus.apply(x)", "x"))) == 2


VMAP = uses("per_sample_grads", "torch.func.vmap", "torch.vmap", "functorch.vmap")


@pytest.mark.quick
@pytest.mark.parametrize("cells", [
    ("import torch\ndef per_sample_grads(f, x):\n    return torch.func.vmap(f)(x)",),
    ("import torch\ndef per_sample_grads(f, x):\n    return torch.vmap(f)(x)",),
    ("from torch.func import vmap\ndef per_sample_grads(f, x):\n    return vmap(f)(x)",),
    ("from torch.func import vmap as batched\ndef per_sample_grads(f, x):\n    return batched(f)(x)",),
    ("import torch.func as tf\ndef per_sample_grads(f, x):\n    return tf.vmap(f, in_dims=0)(x)",),
    ("import functorch\ndef per_sample_grads(f, x):\n    return functorch.vmap(f)(x)",),
    ("import torch\ndef per_sample_grads(f, x):\n    return getattr(torch.func, 'vmap')(f)(x)",),
    ("import torch\nbatched = torch.func.vmap\ndef per_sample_grads(f, x):\n    return batched(f)(x)",),
    ("from torch import func\ndef helper(f):\n    return func.vmap(f)",          # in a helper, in another cell
     "def per_sample_grads(f, x):\n    return helper(f)(x)"),
])
def test_a_use_in_any_spelling_is_found(cells):
    assert broken(VMAP, *cells) == []


@pytest.mark.quick
@pytest.mark.parametrize("cells", [
    ("import torch\ndef per_sample_grads(f, x):\n    return torch.stack([f(r) for r in x])",),
    ("def vmap(f):\n    return lambda x: [f(r) for r in x]\ndef per_sample_grads(f, x):\n    return vmap(f)(x)",),
    ('import torch\ndef per_sample_grads(f, x):\n    """torch.func.vmap would do it"""\n'
     '    return torch.func.jacrev(f)(x)',),
    ("from torch.func import vmap\ndef other(f, x):\n    return vmap(f)(x)\n",
     "def per_sample_grads(f, x):\n    return f(x)"),
])
def test_no_use_is_found_where_the_answer_never_names_it(cells):
    found = broken(VMAP, *cells)
    assert len(found) == 1 and "`per_sample_grads` does not use `torch.func.vmap`" in found[0], found


@pytest.mark.quick
def test_an_answer_the_grader_cannot_find_breaks_its_rules():
    assert broken(no_loop("row_sum"), "globals()['row_sum'] = lambda x: x.sum(0)")


HIDE = ("import torch\n"
        "def row_sum(x):\n    from torch.utils._python_dispatch import _disable_current_modes\n    with _disable_current_modes(), torch._C.DisableTorchFunction():\n"
        "        return x.sum(0)\n")


@pytest.mark.quick
@pytest.mark.parametrize("cells, expected", [
    ((HIDE,), "_disable_current_modes"),
    (("import torch\ntorch.sum = lambda *a, **k: 0\ndef row_sum(x):\n    return x.sum(0)",), "assigns `torch.sum`"),
    (("import torch\nsetattr(torch, 'sum', None)\ndef row_sum(x):\n    return x.sum(0)",), "`setattr` on `torch`"),
    (("import torch\ndef row_sum(x):\n    return getattr(torch, 's' + 'um')(x, 0)",), "computed name"),
    (("import autograder.measuring.oprecorder\ndef row_sum(x):\n    return x.sum(0)",), "imports `autograder.measuring.oprecorder`"),
    (("import sys\ndef row_sum(x):\n    f = sys._getframe(1)\n    return x.sum(0)",), "sys._getframe"),
    (("import gc\ndef row_sum(x):\n    gc.get_objects()\n    return x.sum(0)",), "gc.get_objects"),
    (("import inspect\ndef row_sum(x):\n    inspect.currentframe().f_back\n    return x.sum(0)",), "f_back"),
    (("def row_sum(x):\n    return eval('x.sum(0)')",), "`eval`"),
    (("def row_sum(x):\n    return __import__('torch').sum(x, 0)",), "`__import__`"),
    (("import importlib\ndef row_sum(x):\n    return importlib.import_module('torch').sum(x, 0)",), "importlib"),
    (("import builtins\nbuiltins.sum = None\ndef row_sum(x):\n    return x.sum(0)",), "builtins"),
    (("import ctypes\ndef row_sum(x):\n    ctypes.pythonapi\n    return x.sum(0)",), "ctypes"),
    (("from torch._C import DisableTorchFunction as quiet\ndef row_sum(x):\n    with quiet():\n"
      "        return x.sum(0)",), "torch._C.DisableTorchFunction"),
    (("import sys\nsys.modules['autograder.seam.ops'] = None\ndef row_sum(x):\n    return x.sum(0)",), "sys.modules"),
])
def test_evasion_puts_the_answers_item_under_review(cells, expected):
    found = flagged(["row_sum"], *cells)
    assert any(expected in text for text in found), found


@pytest.mark.quick
def test_evasion_only_affects_the_items_whose_answer_reaches_it():
    cells = [HIDE.replace("row_sum", "masked_mean"), "def row_sum(x):\n    return x.sum(0)"]
    assert flagged(["row_sum"], *cells, names=("row_sum", "masked_mean")) == []
    assert flagged(["masked_mean"], *cells, names=("row_sum", "masked_mean"))


@pytest.mark.quick
@pytest.mark.parametrize("cell", [
    'def row_sum(x):\n    """Not torch._C, not eval(), not sys._getframe."""\n    return x.sum(0)',
    "import torch\ndef row_sum(x):\n    m = torch.nn.Linear(2, 2)\n    m.eval()\n    return x.sum(0)",
    "import torch\nclass M:\n    def __init__(self, **kw):\n        for k, v in kw.items():\n            setattr(self, k, v)"
    "\n    def get(self, k):\n        return getattr(self, k)\ndef row_sum(x):\n    return M(a=x).get('a').sum(0)",
    "import torch\ntorch.backends.cudnn.benchmark = True\nf = torch.compile\ndef row_sum(x):\n    return x.sum(0)",
    "from autograder.measuring.timing import measure_speedup\nprint(measure_speedup)",   # an example cell, not an answer's
    "import os\nos.environ['OMP_NUM_THREADS'] = '1'\nconfig = {}\nconfig['lr'] = 0.1\ntime = {}\ntime['x'] = 1",
    # the AMP lesson's own optional import, on a machine without matplotlib (Gradescope's lean bundle)
    "def show(y):\n    try:\n        import not_installed_plots.pyplot as plt\n        plt.plot(y)\n"
    "    except ImportError:\n        print(y)\nshow([1, 2])",
    "try:\n    import not_installed_plots\nexcept (ModuleNotFoundError, OSError):\n    pass",
])
def test_honest_look_alikes_are_not_flagged(cell):
    cells = [cell] if "def row_sum" in cell else [cell, "def row_sum(x):\n    return x.sum(0)"]
    assert flagged(["row_sum"], *cells) == []


@pytest.mark.quick
def test_safe_load():
    from autograder.source_evidence.source_rules import safe_load
    rule = safe_load("load_checkpoint")
    ok = "import torch\ndef load_checkpoint(path, model):\n    s = torch.load(path{})\n    model.load_state_dict(s)"
    assert broken(rule, ok.format("")) == [] and broken(rule, ok.format(", weights_only=True")) == []
    assert broken(rule, ok.format(", weights_only=False")) and broken(rule, ok.format(", **options"))
    assert broken(rule, ok.format(", weights_only=model")) and broken(rule, "import torch\ndef load_checkpoint(path, "
                  "safe=True):\n    safe = False\n    return torch.load(path, weights_only=safe)")
    assert broken(rule, "import torch\ndef load_checkpoint(path, safe=True):\n    return torch.load(path, "
                        "weights_only=safe)") == []
    assert broken(rule, "import pickle\ndef load_checkpoint(path, model):\n    return pickle.load(open(path, 'rb'))")


# ---------------------------------------------------------------- scopes (Python's own), and what cannot be read

@pytest.mark.quick
@pytest.mark.parametrize("cells", [
    # a local never reaches another function's local or a top-level name of the same spelling
    ("def try_per_sample(model):\n    weights = {n: p for n, p in model.named_parameters()}\n    return weights",
     "import torch\ndef row_sum(x):\n    weights = torch.ones(x.shape[0])\n    return weights @ x"),
    ("import torch\nx = torch.tensor([[float(i) for i in range(3)] for _ in range(4)])\n"
     "def row_sum(x):\n    return x.sum(0)\nprint(row_sum(x))",),
    ("import torch\nsum = [r for r in range(3)]\ndef helper():\n    sum = 1\n    return sum\n",
     "def row_sum(x):\n    def inner(sum):\n        return sum.sum(0)\n    return inner(x)"),
    ("def row_sum(x, eval=False):\n    out = x.sum(0)\n    return out.detach() if eval else out",),
    ("import torch\ndef row_sum(x):\n    if not all(s >= 0 for s in x.shape) or sum(x.shape) < 0:\n"
     "        raise ValueError(', '.join(str(d) for d in range(x.dim())))\n    return x.sum(0)",),
])
def test_names_are_resolved_by_scope(cells):
    assert broken(no_loop("row_sum"), *cells) == [] and flagged(["row_sum"], *cells) == []


@pytest.mark.quick
@pytest.mark.parametrize("cells", [
    ("import torch\ndef row_sum(x):\n    return x[0] if len(x) == 1 else x[0] + row_sum(x[1:])",),
    ("def a(x):\n    return x if len(x) < 2 else b(x[1:]) + x[0]\ndef b(x):\n    return a(x)",
     "def row_sum(x):\n    return a(x)"),
    ("def row_sum(x):\n    def go(x):\n        return x[0] if len(x) == 1 else x[0] + go(x[1:])\n    return go(x)",),
    ("def row_sum(x):\n    x = x.reshape([1] * 3 + list(x.shape))\n    return [x[d] for d in range(x.dim())]",),
])
def test_recursion_and_loops_over_rebound_shapes_are_loops(cells):
    assert broken(no_loop("row_sum"), *cells)


@pytest.mark.quick
@pytest.mark.parametrize("cells, expected", [
    (("def row_sum(x):\n    return x.sum(0)\n(row_sum := lambda x: x)",), "defined 2 times"),
    (("def row_sum(x):\n    return x.sum(0)\ndef _fix():\n    global row_sum\n    row_sum = lambda x: x\n",),
     "through `global`"),
    (("def row_sum(x):\n    return x.sum(0)\nrow_sum.__doc__ = 'x'",), "__doc__"),
    (("import torch\nclass S:\n    def f(self):\n        return 1\nS.f = print\ndef row_sum(x):\n    return x.sum(0)",),
     "changes `S`"),
    (("import torch\nfor lib in (torch,):\n    lib.sum = None\ndef row_sum(x):\n    return x.sum(0)",), "changes a module"),
    (("import torch\nfor n in ('__dict__',):\n    getattr(torch, n)\ndef row_sum(x):\n    return x.sum(0)",), "`__dict__`"),
    (("import torch\nn = 'lo' + 'ad'\nf = getattr(torch, n)\nf('x.pt', weights_only=False)\n"
      "def row_sum(x):\n    return x.sum(0)",), "calls what a computed name looked up"),
    (("def _go():\n    getattr(print.__self__, 'ex' + 'ec')('row_sum = None')\n_go()\n"
      "def row_sum(x):\n    return x.sum(0)",), "__self__"),
    (("import my_helpers\ndef row_sum(x):\n    return x.sum(0)",), "neither installed"),
    (("try:\n    import my_helpers\nexcept KeyError:\n    pass\ndef row_sum(x):\n    return x.sum(0)",), "neither installed"),
    (("import sys\nsys.path.insert(0, '.')\ndef row_sum(x):\n    return x.sum(0)",), "`sys.path"),
    (("import site\nsite.addsitedir('.')\ndef row_sum(x):\n    return x.sum(0)",), "`site.addsitedir`"),
    (("import torch\ntorch.Tensor.__getitem__ = print\ndef row_sum(x):\n    return x.sum(0)",), "changes a module"),
    (("import time\ndef row_sum(x):\n    time.perf_counter = print\n    return x.sum(0)",), "changes a module"),
    (("from torch.utils.cpp_extension import load_inline\nm = load_inline('m', '')\ndef row_sum(x):\n"
      "    return x.sum(0)",), "cpp_extension"),
    (("import torch\nclass N(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
      "        type(self).forward = torch.nn.functional.relu\n    def forward(self, x):\n        return x\n"
      "def row_sum(x):\n    return N()(x)",), "cannot name"),
    (("import torch\nclass N:\n    def __init__(self):\n        setattr(self.__class__, 'f', print)\n"
      "def row_sum(x):\n    return N()",), "`setattr`"),
    (("def row_sum(x):\n    return x.sum(0)\nclass C:\n    def m(self, n):\n        return getattr(self.m, n)\n"
      "C().m('__globals__')",), "computed name"),
])
def test_what_cannot_be_read_goes_to_review(cells, expected):
    found = flagged(["row_sum"], *cells)
    assert any(expected in text for text in found), found


@pytest.mark.quick
def test_a_name_looked_up_on_a_module_is_unknown_where_an_answer_reaches_it():
    helper = "import torch\ndef as_dtype(name):\n    return getattr(torch, name)\n"
    assert flagged(["row_sum"], helper, "def row_sum(x):\n    return x.sum(0)\nprint(as_dtype('float32'))") == []
    assert flagged(["row_sum"], helper, "def row_sum(x, name='float32'):\n    return x.sum(0).to(as_dtype(name))")


@pytest.mark.quick
def test_beyond_the_reading_bound_is_unknown_reach():
    chain = "".join(f"def h{i}(x):\n    return h{i + 1}(x)\n" for i in range(80))
    chain += "def h80(x):\n    return sum(x)\n"
    found = flagged(["row_sum"], chain, "def row_sum(x):\n    return h0(x)")
    assert any("reaches more than" in text for text in found), found
