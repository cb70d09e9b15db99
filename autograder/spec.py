"""The grading spec: every graded item declared once, as data, beside its check.

A topic's checks are plain functions; ``@graded`` declares each one a graded item::

    @graded(points=3, hidden=[{"cases": 80}])
    def check_softmax_forward(check, stable_softmax, *, seed=0, cases=40):
        gen = check.generator()
        ...

``@graded`` hands the check its seam (``autograder.seam.student_calls``): ``check``, the check's name with its item, seed
and generator, then the student's objects as handles; callers pass only the student's objects and the keywords.

The declaration is all there is: the notebook's test cells are written from it by
``python -m autograder build``, and ``check``, ``grade``, the reports, the exports and
the kit's own proofs read it through :func:`autograder.checks.items_of`.

Hidden variants take their ``seed`` at grading time from the grading run's seed
(:func:`hidden_seed`), so reading this package does not reveal the hidden inputs; the
run's seed is recorded in the grading report, and ``--seed`` reproduces a run.
"""

import contextlib
import contextvars
import functools
import hashlib
import inspect
import os
import secrets
from dataclasses import dataclass, field

from autograder.errors import CheckFailure
from autograder.settings import settings

GRADING_ENV = "AUTOGRADER_GRADING"        # "1": a process started to compute an official grade (read, never set here)
SEED_ENV = "AUTOGRADER_GRADING_SEED"      # the seed such a process's hidden variants draw from
PENDING_GPU = "pending: needs a GPU"      # the first words of a GPU item's message on a machine without one

_REGISTRY = {}                 # module name -> [Item], in the order the checks are defined
_CURRENT = contextvars.ContextVar("autograder_current_check", default="check")
_PROCESS_SEED = secrets.randbits(31)


@dataclass(frozen=True)
class Item:
    """One graded item: a check, its points, and the arguments it runs with."""

    topic: str                  # the assignment, e.g. "stability"
    id: str                     # the item's name everywhere (report, export, check), e.g. "softmax_forward"
    check: object = field(repr=False)   # the check function (called with the student's objects)
    points: float = 1.0
    visible: dict = field(default_factory=dict)   # keyword arguments of the visible test (seed 0 by default)
    hidden: tuple = ()          # keyword arguments of each hidden variant; its seed is drawn at grading time
    needs: str | None = None    # "cuda": graded only on a machine with a GPU (pending elsewhere)
    source: tuple = ()          # rules read from the submitted source (autograder.source_evidence.source_rules): no_loop, no_call...
    evidence: tuple = ()        # what earns its points: "data", "clock", "source" (evidence_of adds "source")
    worker_facts: str = ""      # what the worker reports for it, which explains or costs points, never earns them
    facts_only_cost: bool = False   # the points rest on the grader's evidence alone; the facts can only cost

    @property
    def name(self):
        """The check function's name, as a student calls it: ``check_softmax_forward``."""
        return self.check.__name__

    @property
    def cell_id(self):
        """The nbgrader grade id of the item's test cell."""
        return f"test_{self.id}"

    @property
    def targets(self):
        """The student objects the check takes, by the names the exercise gives them."""
        return [p.name for p in inspect.signature(self.check).parameters.values()
                if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]

    def variants(self, run_seed=None):
        """Keyword arguments of every call that grades this item: the visible one, then each hidden one."""
        calls = [dict(self.visible)]
        for k, extra in enumerate(self.hidden, 1):
            calls.append({"seed": hidden_seed(f"{self.topic}.{self.id}", k, run_seed), **extra})
        return calls


EVIDENCE = ("data", "drawn state", "clock", "source", "traffic")


def graded(points=1.0, *, visible=None, hidden=(), needs=None, source=(), evidence=("data",), worker_facts="",
           facts_only_cost=False):
    """Declare the decorated ``check_<name>`` a graded item of its topic's module.

    ``source``: rules on how its answer is written, read from the submitted source by the grader
    (``autograder.source_evidence.source_rules``: ``no_loop("row_sum")``, ``no_call("stable_softmax", "softmax")``...).
    ``evidence``: what its points rest on, of :data:`EVIDENCE` ("data": what comes back, judged in the grader;
    "drawn state": values the grader draws, loaded into the student's object through its own ``load_state_dict``,
    and the outputs judged against the grader's own computation from them (a structure the object describes falsely
    computes something else); "clock": the grader's clock on inputs drawn at grading time; "traffic": what the
    worker's processes sent on the sandbox's own network, counted by the grader from outside (where the worker has a
    network namespace of its own; elsewhere the item's worker facts decide)); "source" is added when
    ``source`` declares rules.
    ``worker_facts``: what the worker reports about itself for this item (op counts, node types): it explains and
    may cost points, never earns them. ``facts_only_cost``: the item's points are earned by the grader's own evidence
    alone (data, drawn state, the clock, the source), and the facts are a precondition on top (a student who forges
    them still had to pass that evidence): say so only when every wrong answer the facts catch is also caught by it
    (``python -m autograder evidence --check`` fails on an item with facts that does not say so). ``python -m autograder evidence`` lists them
    all (docs/security.md)."""
    unknown = set(evidence) - set(EVIDENCE)
    if unknown:
        raise ValueError(f"evidence must be among {EVIDENCE}, not {sorted(unknown)}")
    evidence = tuple(dict.fromkeys([*evidence, *(["source"] if source else [])]))
    def declare(fn):
        if not fn.__name__.startswith("check_"):
            raise ValueError(f"graded checks are named check_<item>, not {fn.__name__}")

        signature = inspect.signature(fn)
        seam_first = next(iter(signature.parameters), None) == "check"
        public = signature.replace(parameters=list(signature.parameters.values())[1:]) if seam_first else signature

        @functools.wraps(fn)
        def run(*args, **kwargs):
            __tracebackhide__ = True
            token = _CURRENT.set(fn.__name__)
            try:
                if seam_first:
                    args, kwargs = with_seam(run.item, public, args, kwargs)
                result = fn(*args, **kwargs)
            except PendingGPU:
                raise
            except CheckFailure as failure:
                observe(run.item, failure)
                raise
            finally:
                _CURRENT.reset(token)
            observe(run.item, None)
            return result

        package = topic_package(fn.__module__)
        item = Item(package.rsplit(".", 1)[-1], fn.__name__[len("check_"):], run, float(points),
                    dict(visible or {}), tuple(dict(h) for h in hidden), needs, tuple(source), evidence,
                    worker_facts, facts_only_cost)
        run.item = item
        run.__signature__ = public
        _REGISTRY.setdefault(package, []).append(item)
        return run
    return declare


def with_seam(item, public, args, kwargs):
    """``(args, kwargs)`` of a check that takes ``check`` first: its :class:`~autograder.seam.student_calls.Seam`, then
    the student's objects as :class:`~autograder.seam.student_calls.Student` handles under their parameters' names."""
    from autograder.seam.student_calls import Seam, Student
    bound = public.bind(*args, **kwargs)
    bound.apply_defaults()
    seam = Seam(item, bound.arguments.get("seed", 0))
    for name, parameter in public.parameters.items():
        if parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and name in bound.arguments:
            bound.arguments[name] = Student(bound.arguments[name], seam, name)
    return (seam, *bound.args), bound.kwargs


_OBSERVED = {}   # topic -> {item id: kind of its last failure, "" when it last passed}: this process's test cells


def observe(item, failure):
    """Remember how ``item``'s check last ended in this process (a notebook's test cells, one item per cell), for the
    hint that names a known mistake on a failed cell (``autograder.checks.live_hint``)."""
    _OBSERVED.setdefault(item.topic, {})[item.id] = "" if failure is None else failure.kind


def observed(topic):
    """``{item id: kind}`` of ``topic``'s checks run so far in this process (``""``: passed)."""
    return dict(_OBSERVED.get(topic, {}))


def topic_package(module_name):
    """``autograder.checks.<topic>`` for a module of that package (its ``__init__`` or a module beside it): a topic
    may split its checks across files; its items are the topic's, in the order they are defined."""
    parts = module_name.split(".")
    return ".".join(parts[:3]) if parts[:2] == ["autograder", "checks"] and len(parts) > 2 else module_name


def declared_in(package):
    """The items declared in a topic's package, in definition order."""
    return list(_REGISTRY.get(package, []))


def current_check():
    """The name of the check that is running (``check_softmax_forward``): for the shared machinery (contracts,
    recorded oracle values); a check has its own as ``check``."""
    return _CURRENT.get()


# ------------------------------------------------------------------ the grading run

@dataclass(frozen=True)
class GradingRun:
    """The grading run a block of this process belongs to: passed down explicitly by :func:`grading_run`, never
    through the environment."""

    official: bool = True       # an official grade: a GPU item without a GPU is pending (``gpu_unavailable``)
    seed: int | None = None     # the hidden variants' seed; None: the process's own


_RUN = contextvars.ContextVar("autograder_grading_run", default=None)


@contextlib.contextmanager
def grading_run(*, official=True, seed=None):
    """Grade the block as :class:`GradingRun` ``(official, seed)`` (the trusted grader, ``check``); restored after."""
    token = _RUN.set(GradingRun(official, seed))
    try:
        yield
    finally:
        _RUN.reset(token)


def grading():
    """Whether this block computes an official grade: inside :func:`grading_run`, else when the process was started
    as one (``AUTOGRADER_GRADING=1`` in its environment, e.g. a kernel that nbgrader runs)."""
    run = _RUN.get()
    return run.official if run is not None else os.environ.get(GRADING_ENV) == "1"


def run_seed():
    """The grading run's seed: :func:`grading_run`'s, else the one the process was started with, else its own."""
    run = _RUN.get()
    if run is not None and run.seed is not None:
        return run.seed
    value = os.environ.get(SEED_ENV)
    return int(value) if value else _PROCESS_SEED


def hidden_seed(key, k=1, seed=None):
    """The seed of hidden variant ``k`` of item ``key`` ("stability.softmax_forward") in this grading run."""
    base = run_seed() if seed is None else seed
    digest = hashlib.sha256(f"{base}:{key}:{k}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 1_000_000 + 1


def new_run_seed():
    return secrets.randbelow(1_000_000_000)


class PendingGPU(CheckFailure):
    """A GPU item on a machine without a GPU: 0 points until a machine with one grades it."""


def gpu_unavailable(check, note):
    """What a GPU-only item does without a GPU, by the instructor's ``grading.gpu_items`` setting.

    In an official grade: "pending" (the default) records it as pending with 0 points, "fail" fails it, "waive"
    gives its points. A student checking their own work sees the note and the check passes.
    """
    __tracebackhide__ = True
    policy = settings.grading.gpu_items
    if policy not in ("pending", "fail", "waive"):
        raise ValueError(f"settings.grading.gpu_items must be pending, fail or waive, not {policy!r}")
    if grading() and policy == "pending":
        raise PendingGPU(check, f"{PENDING_GPU}. {note} It scores 0 until it is graded on a machine with a GPU.")
    if grading() and policy == "fail":
        raise CheckFailure(check, f"{note} (The instructor requires a GPU for this check.)")
    print(f"[{check}] note: {note}" + (" (The instructor waives it: full points.)" if grading() else ""))
