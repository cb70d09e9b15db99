"""Bounded grading through the real sandboxed worker: one wall-clock budget per notebook (cells, restarts and items
together, enforced by killing the worker), and answers checked for size before they are read or parsed.

The budget tests grade a whole notebook (``jobs.grade_job_here``, the path of ``grade``, nbgrader and Dask) with a
short budget, then an honest notebook after them keeps full marks. The wire tests ask one sandboxed worker for
answers that break a limit: each is cut at once (or at its deadline), the item's message says why, the grader's
memory stays put, and the worker started again answers the honest calls around them.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import psutil
import pytest

from autograder.checks import items_of
from autograder.engine import jobs, notebooks
from autograder.engine.budget import Budget
from autograder.engine.jobs import grade_job_here
from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, launcher_for
from autograder.errors import WorkerLost
from autograder.sandbox import bubblewrap as sandbox
from autograder.sandbox import cgroups
from autograder.seam import remote, wire
from autograder.settings import override
from tests.proving import ROOT

TOPIC = "operators"
BUDGET_S = 20


def reference_cells(topic=TOPIC):
    return notebooks.code_cells(notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb"), topic)


def with_cell(cells, name, source):
    """``cells`` with the cell ``name``'s source replaced by ``source``."""
    assert name in dict(cells)
    return [(cell, source if cell == name else text) for cell, text in cells]


def graded(cells, limits):
    with override(limits):
        started = time.monotonic()
        data = grade_job_here(TOPIC, cells, seed=5, sandbox=True)
        return data, time.monotonic() - started


def by_check(data):
    return {r["check"]: r for r in data["items"]}


SLOW_ROW_SUM = "import time\nimport torch\n\n\ndef row_sum(x):\n    time.sleep(2)\n    return torch.sum(x, dim=0)\n"
SPIN_AT_IMPORT = "import time\n_until = time.monotonic() + 3600\nwhile time.monotonic() < _until:\n    pass\n"
DYING_ROW_SUM = "import os\ndef row_sum(x):\n    os._exit(3)\n"


@pytest.mark.e2e
def test_one_budget_bounds_the_notebook_and_the_next_one_keeps_full_marks(ready):
    """A row_sum that takes 2 s a call (check_row_sum makes 84 calls, each allowed call_timeout_s = 60 s: nearly
    3 minutes, and hours with a sleep just under the call timeout) is stopped when the notebook's 20 s are spent:
    the item running then and every item after score 0 with the budget's message, and the recorded seconds are the
    notebook's wall time. A cell that spins at import and a row_sum that kills its worker (every item starts a worker
    again and runs the cells again) are bounded by the same budget. The honest notebook graded after keeps full marks.
    """
    # one definition (two go to review), and no lesson cell that calls it: the budget runs out in the check
    cells = [cell for cell in with_cell(reference_cells(), "row_sum", SLOW_ROW_SUM) if cell[0] != "try_row_sum"]
    slow, wall = graded(cells, {"grading": {"submission_timeout_s": BUDGET_S}})
    assert wall < BUDGET_S + 10, f"{wall:.1f} s"
    assert abs(slow["seconds"] - wall) < 2, (slow["seconds"], wall)
    results = by_check(slow)
    assert results["check_row_sum"]["score"] == 0
    assert "not finished" in results["check_row_sum"]["message"], results["check_row_sum"]["message"]
    assert "submission_timeout_s" in results["check_row_sum"]["message"]
    after = [r for r in slow["items"] if r["check"] != "check_row_sum"]
    assert all(r["score"] == 0 and "used up its 20 s" in r["message"] and "check_row_sum" in r["message"]
               for r in after), [r["message"] for r in after]
    assert any("ran out while check_row_sum was running" in p for p in slow["problems"]), slow["problems"]
    assert all(r["evidence"]["sandbox_memory"] == cgroups.memory_bound(8 << 30)[1] for r in slow["items"])

    cells = reference_cells() + [("spin", SPIN_AT_IMPORT), ("dies", DYING_ROW_SUM)]
    dying, wall = graded(cells, {"grading": {"submission_timeout_s": 12, "cell_timeout_s": 3}})
    assert wall < 12 + 10, f"{wall:.1f} s"
    assert abs(dying["seconds"] - wall) < 2, (dying["seconds"], wall)
    assert any("was run" in p and "times" in p for p in dying["problems"]), dying["problems"]   # restarts ran
    assert any("12 s" in p and "ran out" in p for p in dying["problems"]), dying["problems"]
    results = by_check(dying)
    assert all(results[name]["score"] == 0 for name in results if name.startswith("check_row_sum"))
    last = dying["items"][-1]
    assert last["score"] == 0 and "submission_timeout_s" in last["message"], last["message"]

    honest, _ = graded(reference_cells(), {})
    assert {r["check"]: r["score"] for r in honest["items"]} == {i.name: i.points for i in items_of(TOPIC)}, \
        [r["message"] for r in honest["items"] if r["score"] == 0]


# ------------------------------------------------------------------ the wire

BIG_ANSWER = """
import torch

def big_tensor():
    return torch.zeros(150_000_000 // 4)           # 150 MB of raw bytes

def row_sum(x):
    return x.sum(dim=1)
"""


class PeakRss:
    """The largest resident memory of this process while the block runs, sampled every 5 ms."""

    def __enter__(self):
        self.process = psutil.Process()
        self.start = self.peak = self.process.memory_info().rss
        self.running = True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self):
        while self.running:
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.005)

    def __exit__(self, *exc):
        self.running = False
        self.thread.join()

    @property
    def growth_mb(self):
        return (self.peak - self.start) / 2**20


def test_a_150_mb_answer_is_refused_before_it_is_read(ready, tmp_path):
    """A student function returning a 150 MB tensor: the worker is killed on the answer's first 12 bytes, the call
    fails with the size and the limit, the grader's memory does not grow by 300 MB (it went from 364 MB to 4.3 GB
    before), and the worker started again answers the honest calls before and after."""
    import torch

    worker = NotebookWorker([("answers", BIG_ANSWER)], launcher_for(True), str(tmp_path))
    names = RemoteNamespace(worker)
    x = torch.arange(6.0).reshape(2, 3)
    try:
        assert torch.equal(names["row_sum"](x), x.sum(dim=1))
        with PeakRss() as memory:
            with pytest.raises(WorkerLost, match=r"the answer is 150 MB; the limit is 64 MB \(settings.grading.max_reply_mb\)"):
                names["big_tensor"]()
        assert memory.growth_mb < 300, f"{memory.growth_mb:.0f} MB"
        assert torch.equal(names["row_sum"](x), x.sum(dim=1)) and worker.starts == 2
    finally:
        worker.close()


def _frame(header, body=b""):
    return wire.HEADER.pack(len(header) + len(body), len(header)) + header + body


# What a hostile worker writes on the grader's pipe: a real process, a real pipe (cheaper than a worker importing
# torch for each; the sandboxed worker's path is the test above).
HOSTILE_FRAMES = {
    "header": (_frame(json.dumps({"L": [0.5] * 600_000}).encode()), r"description .* is 3\.\d MB; the limit is 2 MB"),
    "values": (_frame(json.dumps({"L": [0] * 300_000}).encode()), "more than 200,000 values"),
    "nesting": (_frame(b"[" * 200_000 + b"]" * 200_000), "nested too deeply"),
    "claimed": (wire.HEADER.pack(10**12, 100), "the answer is 1000000 MB; the limit is 64 MB"),
}


def _writer(data, then_trickle=False):
    with tempfile.NamedTemporaryFile(delete=False) as handle:
        handle.write(data)
    code = ("import os, sys, time\n"
            f"data = open({handle.name!r}, 'rb').read(); os.unlink({handle.name!r})\n"
            "while data:\n    data = data[os.write(1, data):]\n"
            + ("while True:\n    os.write(1, b' ')\n    time.sleep(0.2)\n" if then_trickle else "time.sleep(60)\n"))
    return subprocess.Popen([sys.executable, "-I", "-S", "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            bufsize=0, start_new_session=True)


@pytest.mark.parametrize("name", sorted(HOSTILE_FRAMES))
def test_hostile_frames_stop_the_worker_with_the_limit_they_broke(name):
    data, expected = HOSTILE_FRAMES[name]
    session = remote.Session(_writer(data), stop=sandbox.stop)
    with PeakRss() as memory, pytest.raises(WorkerLost, match=expected):
        session.request("call", 1, timeout=20)
    assert memory.growth_mb < 100, f"{memory.growth_mb:.0f} MB"
    assert session.proc.poll() is not None            # killed, not left writing


def test_a_trickled_answer_is_cut_at_its_deadline_and_at_the_budget():
    """An answer that starts and then comes one byte every 0.2 s: the request ends at its timeout (2 s); with the
    notebook's budget ending first (1 s left), at the budget, and the message says so."""
    session = remote.Session(_writer(wire.HEADER.pack(1000, 10), then_trickle=True), stop=sandbox.stop)
    started = time.monotonic()
    with pytest.raises(WorkerLost, match="did not answer within 2 s") as lost:
        session.request("call", 1, timeout=2)
    assert 2 <= time.monotonic() - started < 3 and lost.value.timed_out
    session = remote.Session(_writer(wire.HEADER.pack(1000, 10), then_trickle=True), stop=sandbox.stop)
    session.budget = Budget(1)
    session.budget.running = "check_row_sum"
    started = time.monotonic()
    with pytest.raises(WorkerLost, match=r"grading time of 1 s \(settings.grading.submission_timeout_s\) ran out "
                                         "while check_row_sum was running"):
        session.request("call", 1, timeout=60)
    assert time.monotonic() - started < 2
    with pytest.raises(WorkerLost, match="ran out"):      # no request past the budget
        session.request("call", 1, timeout=60)


# ------------------------------------------------------------------ the sandbox's memory

def _cgroup_tree(base, *, v2=True, own="user.slice/grading/grader", controllers="cpu memory pids", owner=4321):
    """A fake cgroup file system under ``base`` and the ``/proc/self/cgroup`` that places a process in it."""
    root = base / "cgroup"
    (root / own).mkdir(parents=True)
    if v2:
        (root / "cgroup.controllers").write_text("cpu io memory pids\n")
    (root / own / "cgroup.controllers").write_text(controllers + "\n")
    parent = (root / own).parent
    (parent / "cgroup.procs").write_text("")
    for path in (parent, parent / "cgroup.procs"):
        os.chown(path, owner, owner)
    (base / "self").write_text(f"0::/{own}\n")
    return str(root), str(base / "self"), str(parent)


def test_cgroup_delegation_is_read_from_the_files(tmp_path):
    """Where a sandbox gets a cgroup of its own: only under a cgroup v2 parent delegated to the grader's user with the
    memory controller enabled; everywhere else (this machine: cgroup v1 hybrid, managed by its host) the rlimits."""
    cases = {"yes": {}, "v1": {"v2": False}, "no-memory": {"controllers": "cpu pids"},
             "not-owned": {"owner": 999}, "root-cgroup": {"own": ""}}
    found = {}
    for name, shape in cases.items():
        root, self_cgroup, parent = _cgroup_tree(tmp_path / name, **{"owner": 4321, **shape})
        where, why = cgroups.delegation(root, self_cgroup, uid=4321)
        found[name] = (where == parent, why)
    assert found["yes"] == (True, f"cgroup v2 delegated at {tmp_path / 'yes' / 'cgroup' / 'user.slice' / 'grading'}")
    assert found["v1"][1].startswith("no cgroup v2 hierarchy")
    assert "memory controller is not enabled" in found["no-memory"][1]
    assert "not delegated to this user" in found["not-owned"][1]
    assert "root cgroup" in found["root-cgroup"][1]
    assert not any(ok for name, (ok, _) in found.items() if name != "yes")
    root, self_cgroup, _ = _cgroup_tree(tmp_path / "as-root", owner=0)
    assert cgroups.delegation(root, self_cgroup, uid=0)[0] is None          # root never takes the machine's cgroups
    parent, how = cgroups.memory_bound(8 << 30, root, self_cgroup, uid=4321)
    assert parent is None and how.startswith("rlimits: RLIMIT_DATA per process x RLIMIT_NPROC")
    root, self_cgroup, parent = _cgroup_tree(tmp_path / "bound")
    assert cgroups.memory_bound(8 << 30, root, self_cgroup, uid=4321) == (
        parent, f"cgroup v2: memory.max 8 GiB for all of the sandbox's processes (cgroup v2 delegated at {parent})")
    group = tmp_path / "group"             # the shell that moves itself into the cgroup, then becomes the sandbox
    group.mkdir()
    (group / "cgroup.procs").write_text("")
    ran = subprocess.run(cgroups.entering(str(group), ["/bin/echo", "inside"]), capture_output=True, text=True)
    assert ran.stdout == "inside\n" and (group / "cgroup.procs").read_text() == "0\n"


def test_this_machine_uses_the_fallback_and_the_record_says_so():
    """The machine the tests run on delegates no cgroup (or runs them as root): the sandbox starts with the rlimits,
    and ``memory_bound`` says what they cannot bound."""
    parent, how = cgroups.memory_bound(8 << 30)
    assert parent is None and "no bound on the total" in how, how


def test_the_grading_process_is_bounded_for_the_job_and_put_back_after():
    """``grader_memory_bound`` lowers this process's address space for one job (never below what it has mapped plus
    1 GiB), an allocation past it fails with MemoryError here instead of taking the machine, and the limit is put back
    afterwards (a Dask worker grades its next job as before)."""
    import resource

    import torch

    before = resource.getrlimit(resource.RLIMIT_AS)
    with override({"grading": {"grader_memory_gb": 0.5}}), jobs.grader_memory_bound() as bound:
        if torch.cuda.is_available():
            assert bound.startswith("none: CUDA")
            return
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        assert bound == f"RLIMIT_AS {soft / 2**30:.1f} GiB on the grading process"
        assert soft >= jobs._mapped_bytes() + 2**30 - 2**28
        with pytest.raises(MemoryError):
            bytearray(soft)
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    with override({"grading": {"grader_memory_gb": 0}}), jobs.grader_memory_bound() as bound:
        assert bound.startswith("none") and resource.getrlimit(resource.RLIMIT_AS) == before
