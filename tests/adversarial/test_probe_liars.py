"""Notebook cells that replace the probes run beside the student's code, graded by the trusted runner's real worker.

Each case is a wrong answer (a mutant of ``tests/mutants/``) together with a cell that makes one kind of probe lie
for it: the compile session, the custom-backward facts, the modules structure probes, the amp refusal run (by
rebinding the module's name, or by swapping the function's code). The probes a request names
are the ones the worker froze before any student code ran (``autograder.seam.probes``), with their code and
their modules' functions put back before each use, so the lie changes nothing: the wrong answer loses every item
its mutant loses (``test_trusted_proofs`` proves that it loses them without the lie). An honest student graded in
the same worker before and after the lie keeps full marks on those items.

The registry is a lock on the door, not a proof: a cell that reaches the worker through the stack and wraps its
lookup of the probe a request names (``Worker._named``) gets any probe replaced, the memory probes that report no
graph and the right recomputation included. So no item's points rest on what a probe reports: the wrong answer
still loses exactly its mutant's items, on the grader's own evidence (the shifts the grader hands out and the
gradients that come back for checkpointing; the source for ``predict``, the structure items' drawn state, the
custom backward, the compile items and ``weights_only``); ``python -m autograder evidence --check`` fails on an
item whose points the worker's word could earn.

And a checkpoint kept in the process's memory (under whatever key) loses the resume items: they load the file in a
fresh worker that never ran the save (``remote.in_fresh_process``).

And a model that lies to the structure probes about itself (no probe replaced) loses the structure item: the weights
the grader draws and loads into it show the layers it shares (``checks/modules/drawn_state.py``).

The worker is started without the sandbox (``plain_launcher``): what is tested is what runs in the worker; the
sandbox is proved in tests/trusted/test_sandbox.py and end to end in test_attacks.py.
"""

import ast
import dataclasses
import importlib
import re
from pathlib import Path

import pytest

from autograder.checks import items_of
from autograder.engine.results import UNDER_REVIEW, grade_item
from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, plain_launcher
from autograder.source_evidence.submitted_source import Submission
from tests.proving import ROOT, not_passed

pytestmark = [pytest.mark.e2e]

SEED = 5
SETUP = f"import sys; sys.path.insert(0, {str(ROOT)!r})"

COMPILE_LIAR = '''
import autograder.checks.vectorization.probes.compiling as _compiling
from tests.proving import reference as _reference
_honest_open = _compiling.open_compiled
_compiling.open_compiled = lambda fn, *args: _honest_open(_reference("vectorization")["masked_batch_mean"], *args)
'''

COMPILE_CODE_SWAP = '''
import autograder.checks.vectorization.probes.compiling as _compiling
from tests.proving import reference as _reference
_compiling.HONEST = _reference("vectorization")["masked_batch_mean"]
_compiling.open_compiled.__code__ = (lambda fn, recompile_limit=8: CompiledSession(HONEST, recompile_limit)).__code__
'''                                  # HONEST and CompiledSession are read from the probe's own module

CUSTOM_BACKWARD_LIAR = '''
import autograder.checks.stability.probes as _cases
from tests.proving import reference as _reference
_honest_facts = _cases.custom_backward_facts
_ref = _reference("stability")
_cases.custom_backward_facts = lambda Softplus, softplus, x: _honest_facts(_ref["Softplus"], _ref["softplus"], x)
'''

STRUCTURE_LIAR = '''
import autograder.checks.modules.probes as _probes
_probes.same_module_positions = lambda model: list(range(len(model)))
_probes.distinct_parameters = lambda model: (sum(p.numel() for _, p in model.named_parameters(remove_duplicate=False)), [])
'''

# The model itself lies to the structure probes (no probe is replaced): layers of equal sizes are one Linear, its
# __iter__ hands out copies (so every position looks like its own module) and named_parameters() hands out clones (so
# no two names share memory). Only what the model does with weights the grader draws and loads shows the tie.
LYING_MLP = '''
import copy
import torch

class _Mlp(torch.nn.Sequential):
    """Layers of equal size are one Linear; asked about itself, it says every layer is its own."""

    def __iter__(self):
        return iter([copy.copy(m) for m in self._modules.values()])

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        decoys = self.__dict__.setdefault("_decoys", [])
        for i, m in enumerate(self._modules.values()):
            for n, p in m._parameters.items():
                decoys.append(torch.nn.Parameter(p.detach().clone()))
                yield f"{i}.{n}", decoys[-1]


def make_mlp(sizes, activation=torch.nn.ReLU):
    if len(sizes) < 2:
        raise ValueError("at least two sizes")
    cache, layers = {}, []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        if i:
            layers.append(activation())
        if (n_in, n_out) not in cache:
            cache[(n_in, n_out)] = torch.nn.Linear(n_in, n_out)
        layers.append(cache[(n_in, n_out)])
    return _Mlp(*layers)
'''

REFUSAL_LIAR = '''
import autograder.checks.amp.probes.checkpoint_runs as _runs
_runs.refusal_run = lambda load_checkpoint, check, seed, content: {"failure": None, "probe_ran": False}
'''

KEPT_IN_MEMORY = '''
import copy, os
import torch
_last = {}


def save_checkpoint(path, model, optimizer, scaler, step):
    """Writes the step; keeps the state in this process (the last one saved, whatever the path)."""
    _last["state"] = copy.deepcopy({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                    "scaler": scaler.state_dict()})
    torch.save({"step": step}, path)


def load_checkpoint(path, model, optimizer, scaler):
    kept = _last.get("state")
    if kept is not None:
        model.load_state_dict(kept["model"])
        optimizer.load_state_dict(kept["optimizer"])
        scaler.load_state_dict(kept["scaler"])
    return torch.load(path, weights_only=True)["step"]
'''

# The worker's own lookup of the probe a request names (``Worker._named``), wrapped from a cell: the frozen registry
# is bypassed, and each probe whose name is a key of ``_LIES`` is replaced by ``_LIES[name](the honest probe)``. The
# worker is reached through the stack (``traceback.walk_stack``), as a student who has read the worker would.
NAMED = '''
import traceback as _tb
_Worker = next(type(f.f_locals["self"]) for f, _ in _tb.walk_stack(None)
               if type(f.f_locals.get("self")).__name__ == "Worker")
_honest_named = getattr(_Worker, "_honest_named", _Worker._named)
_Worker._honest_named = _honest_named
_LIES = {}


def _named(self, name):
    found = _honest_named(self, name)
    lie = _LIES.get(str(name).rpartition(":")[2])
    return found if lie is None else lie(found)


_Worker._named = _named
'''

# memory: predict_run reports no graph, checkpoint_run the right recomputation and a small memory, and the run
# with the grader's shifts asks every block for a second shift (recomputing nothing)
MEMORY_LIES = NAMED + '''
def _no_graph(honest):
    def predict_run(*args, **kwargs):
        entry = honest(*args, **kwargs)
        if "out" in entry:
            entry.update(requires_grad=False, kept_bytes=0, param_grads=0)
        return entry
    return predict_run


def _recomputed(honest):
    def checkpoint_run(fn, check, plan):
        entry = honest(fn, check, plan)
        if "out" in entry:
            entry.update(kept_bytes=0, forward_calls=[2] * (2 * plan["blocks"]))
        return entry
    return checkpoint_run


def _asked_twice(honest):
    def recompute_run(fn, check, plan, source):
        entry = honest(fn, check, plan, source)
        for index in range(plan["blocks"]):
            source(index)
        return entry
    return recompute_run


_LIES.update(predict_run=_no_graph, checkpoint_run=_recomputed, recompute_run=_asked_twice)
'''

STRUCTURE_NAMED = NAMED + '''
_LIES.update(same_module_positions=lambda honest: lambda model: list(range(len(model))),
             distinct_parameters=lambda honest: lambda model: (
                 sum(p.numel() for _, p in model.named_parameters(remove_duplicate=False)), []))
'''

CUSTOM_BACKWARD_NAMED = NAMED + '''
from tests.proving import reference as _reference
_ref = _reference("stability")
_LIES.update(custom_backward_facts=lambda honest: lambda Softplus, softplus, x: honest(_ref["Softplus"],
                                                                                     _ref["softplus"], x))
'''

COMPILE_NAMED = NAMED + '''
from tests.proving import reference as _reference
_honest_mean = _reference("vectorization")["masked_batch_mean"]
_LIES.update(open_compiled=lambda honest: lambda fn, *args: honest(_honest_mean, *args),
             _fresh_graph_breaks=lambda honest: lambda fn, *args: honest(_honest_mean, *args))
'''

REFUSAL_NAMED = NAMED + '''
_LIES.update(refusal_run=lambda honest: lambda load_checkpoint, check, seed, content: {"failure": None,
                                                                                      "probe_ran": False})
'''

# basics: the state of x after grad_of reported as it was before the call (the flag grad_of left set is hidden)
GRAD_STATE_NAMED = NAMED + '''
import autograder.checks.basics.probes as _inworker


def _flag_kept(honest):
    def grad_of_leaving(grad_of, f, kind, base, here=None):
        x, owner = here or _inworker.grad_input(kind, base)
        flag = x.requires_grad
        answer = honest(grad_of, f, kind, base, here=(x, owner))
        answer["x"]["requires_grad"] = flag
        return answer
    return grad_of_leaving


_LIES.update(grad_of_leaving=_flag_kept)
'''

# A predict that its old source rule ("uses no_grad") passed: only the worker's "no graph" told it from the reference
NO_GRAD_STATEMENT = '''
import torch


def predict(model, x):
    torch.no_grad()              # makes a context manager and drops it: autograd still records the call
    return model(x)
'''

# (topic, the wrong answer: a mutant's name or code, the lying cell, the items it must not win)
CASES = [
    ("vectorization", "masked_batch_mean as a Python loop over T", COMPILE_LIAR, {"check_masked_mean_no_recompiles"}),
    ("vectorization", "masked_batch_mean as a Python loop over T", COMPILE_CODE_SWAP,
     {"check_masked_mean_no_recompiles"}),
    ("stability", "softplus as a plain function (no custom backward)", CUSTOM_BACKWARD_LIAR, None),
    ("modules", "make_mlp reusing one Linear for layers of equal size", STRUCTURE_LIAR, None),
    ("modules", LYING_MLP, "", {"check_make_mlp_structure"}),
    ("amp", "load_checkpoint with weights_only=False", REFUSAL_LIAR, None),
    ("amp", KEPT_IN_MEMORY, "", {"check_checkpoint_roundtrip", "check_checkpoint_resume_exact"}),
    # the worker's lookup of probes wrapped: what the worker reports can only cost, the grader's evidence decides
    ("memory", "checkpointed_forward checkpoints the first block only", MEMORY_LIES, None),
    ("memory", NO_GRAD_STATEMENT, MEMORY_LIES, {"check_predict_no_graph"}),
    ("modules", "make_mlp reusing one Linear for layers of equal size", STRUCTURE_NAMED, None),
    ("stability", "softplus as a plain function (no custom backward)", CUSTOM_BACKWARD_NAMED, None),
    ("vectorization", "masked_batch_mean branching on lengths' values", COMPILE_NAMED, None),
    ("amp", "load_checkpoint with weights_only=False", REFUSAL_NAMED, None),
    ("basics", "grad_of leaving requires_grad set on x", GRAD_STATE_NAMED, None),
]


@pytest.fixture(scope="module")
def workers(tmp_path_factory):
    """One worker per topic, started on first use; every case of the topic is graded in it, one after another."""
    started = {}

    def worker(topic):
        if topic not in started:
            started[topic] = NotebookWorker([], plain_launcher, str(tmp_path_factory.mktemp(topic)))
            _run(started[topic], SETUP)
        return started[topic]
    yield worker
    for w in started.values():
        w.close()


def _run(worker, code):
    answer = worker.live().request("cell", code, timeout=180)
    assert not answer["ok"]["error"], answer["ok"]["error"]


def _submit(worker, topic, answer, liar=""):
    """The reference, then ``answer`` (a mutant's name, or code) over it, then the lying cell: the notebook's cells,
    run in its worker and in its fresh one (in_fresh_process) alike. The cells hold the source the grader reads:
    the reference solution's text without the definitions a mutant replaces, and the mutants' file with each
    replacing function renamed to the name it answers (a mutant made by a factory is put in by value, and its
    source rules then read the reference's)."""
    code = ["for _name in [n for n in globals() if not n.startswith('_') and n != 'sys']: del globals()[_name]"]
    mutants = importlib.import_module(f"tests.mutants.{topic}")
    replaced = mutants.MUTANTS[answer][0] if answer in mutants.MUTANTS else {}
    renamed = {name: fn.__name__ for name, fn in replaced.items()
               if callable(fn) and "<locals>" not in getattr(fn, "__qualname__", "<locals>")
               and getattr(fn, "__module__", "") == mutants.__name__}
    own = set(renamed) if answer in mutants.MUTANTS or not answer else _defined(answer)
    code.append(_without_definitions((ROOT / "solutions" / f"{topic}.py").read_text(encoding="utf-8"), own))
    if renamed:
        text = Path(mutants.__file__).read_text(encoding="utf-8")
        for name, own in renamed.items():
            text = re.sub(rf"\b{re.escape(own)}\b", name, text)
        code.append(text)
    if set(replaced) - set(renamed):
        code.append(f"from tests.mutants.{topic} import MUTANTS as _M\n"
                    f"globals().update({{k: v for k, v in _M[{answer!r}][0].items() if k not in {set(renamed)!r}}})")
    elif answer and answer not in mutants.MUTANTS:
        code.append(answer)
    if liar:
        code.append(liar)
    cells = [("setup", SETUP)] + [(f"cell-{k}", c) for k, c in enumerate(code)]
    for _, source in cells[1:]:
        _run(worker, source)
    worker.cells = cells
    if worker.loader is not None:
        worker.loader.close()
        worker.loader = None


def _defined(code):
    """The names of the top-level definitions of ``code``."""
    return {node.name for node in ast.parse(code).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def _without_definitions(text, names):
    """``text`` without the top-level definitions (a ``def`` or ``class`` with its decorators) of ``names``."""
    lines = text.splitlines()
    for node in reversed(ast.parse(text).body):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            del lines[first - 1:node.end_lineno]
    return "\n".join(lines) + "\n"


def _failing(worker, topic, names):
    """``{check name: message}`` of the items of ``names`` that do not pass. An item under review (the lying cell
    reaches into the worker's frames) is judged by the verdict an instructor's acceptance would give it: the lie
    must win nothing even then."""
    namespace = RemoteNamespace(worker)
    source = Submission.from_cells(worker.cells)     # what the grader reads, as the trusted runner passes it
    results = [grade_item(item, namespace, seed=SEED, source=source) for item in items_of(topic) if item.name in names]
    return not_passed([_on_accept(r) for r in results])


def _on_accept(result):
    verdict = result.evidence.get("review", {}).get("on_accept") if result.status == UNDER_REVIEW else None
    if verdict is None:
        return result
    return dataclasses.replace(result, status=verdict["status"], score=verdict["score"], message=verdict["message"])


@pytest.mark.parametrize("topic, answer, liar, targets", CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)])
def test_a_lying_probe_wins_nothing_and_honest_neighbours_keep_full_marks(workers, topic, answer, liar, targets):
    mutants = importlib.import_module(f"tests.mutants.{topic}").MUTANTS
    targets = targets or mutants[answer][1]
    worker = workers(topic)
    _submit(worker, topic, "")
    assert _failing(worker, topic, targets) == {}, "the honest student before"
    if liar:
        _submit(worker, topic, answer)
        assert set(_failing(worker, topic, targets)) == set(targets), "the control: the same answer, no lie"
    _submit(worker, topic, answer, liar)
    failed = _failing(worker, topic, targets)
    assert set(failed) == set(targets), f"the lie won {sorted(set(targets) - set(failed))}: {failed}"
    _submit(worker, topic, "")
    assert _failing(worker, topic, targets) == {}, "the honest student after the lie, in the same worker"
