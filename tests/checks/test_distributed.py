"""The distributed checks: the source rules that earn the DDP and no_sync points, the facts that only cost, the
grader's launcher (bounded, no rank outlives it, and a rank that raises fails the whole job promptly with its
message), the messages of the launcher's failures, and the traffic the grader reads from outside a sandboxed worker
with its bounds."""

import os
import re
import signal
import sys
import time

import pytest

from autograder.checks import distributed
from autograder.checks.distributed import launcher, problems, traffic
from autograder.checks.distributed.rules import uses_method
from autograder.errors import CheckFailure
from autograder.sandbox import bubblewrap as sandbox
from autograder.sandbox import loopback
from autograder.seam.student_calls import Seam
from autograder.source_evidence.source_rules import rule_findings, uses
from autograder.source_evidence.submitted_source import Submission
from tests.mutants.distributed import _accumulating
from tests.proving import failing_among, reference, run_check, with_replacements

TOPIC = "distributed"
NO_SYNC_RULE = uses_method("train_accumulate", "no_sync")
DDP_RULE = uses("train_ddp", *distributed.DDP_NAMES)


def _findings(rule, text):
    return rule_findings(rule, Submission.from_text(text))


@pytest.mark.quick
@pytest.mark.parametrize("text", [
    "def train_accumulate(rank, world_size, model, dataset, **kw):\n    with model.no_sync():\n        pass\n",
    "import contextlib\ndef train_accumulate(rank, world_size, model, dataset, **kw):\n"
    "    ctx = model.no_sync if kw else contextlib.nullcontext\n    with ctx():\n        pass\n",
    "def train_accumulate(rank, world_size, model, dataset, **kw):\n    return micro(model)\n"
    "def micro(ddp):\n    with ddp.no_sync():\n        pass\n",
])
def test_the_no_sync_rule_sees_every_spelling(text):
    assert _findings(NO_SYNC_RULE, text) == []


@pytest.mark.quick
@pytest.mark.parametrize("text", [
    "def train_accumulate(rank, world_size, model, dataset, **kw):\n    # model.no_sync() would help\n    pass\n",
    "def train_accumulate(rank, world_size, model, dataset, **kw):\n    return 'no_sync'\n",
    "def train_accumulate(rank, world_size, model, dataset, **kw):\n    pass\ndef unused(m):\n    m.no_sync()\n",
])
def test_the_no_sync_rule_needs_the_method_in_the_answer(text):
    assert [f.construct for f in _findings(NO_SYNC_RULE, text)] == ["`train_accumulate` never uses `.no_sync()`"]


@pytest.mark.quick
@pytest.mark.parametrize("text", [
    "from torch.nn.parallel import DistributedDataParallel as DDP\ndef train_ddp(*a, **k):\n    DDP(None)\n",
    "import torch\ndef train_ddp(*a, **k):\n    torch.nn.parallel.DistributedDataParallel(None)\n",
    "from torch import nn\ndef train_ddp(*a, **k):\n    nn.parallel.DistributedDataParallel(None)\n",
    "import torch.nn.parallel as par\ndef train_ddp(*a, **k):\n    par.DistributedDataParallel(None)\n",
])
def test_the_ddp_rule_sees_every_spelling(text):
    assert _findings(DDP_RULE, text) == []


def test_no_sync_only_mentioned_loses_the_item_on_the_count():
    """A ``no_sync`` that is never entered passes the source rule; the all-reduce count (the student's process's
    word, which may cost) then takes the item, with the count in the message."""
    def train_accumulate(rank, world_size, model, dataset, **keywords):
        if keywords.get("never"):
            model.no_sync()
        return _accumulating(no_sync=None)(rank, world_size, model, dataset, **keywords)

    failed = failing_among(TOPIC, with_replacements(TOPIC, {"train_accumulate": train_accumulate}),
                           {"check_accumulate_no_sync"})
    assert re.search(r"all-reduced the gradients \[3(, 3)+\] times", failed["check_accumulate_no_sync"])


def test_set_epoch_missing_is_named():
    from tests.mutants.distributed import MUTANTS

    replacements, _ = MUTANTS["train_ddp never calls set_epoch (every epoch the same order)"]
    result = run_check(distributed.check_ddp_data_split, with_replacements(TOPIC, replacements))
    assert "same order in epoch 1 as in epoch 0" in result.message and "set_epoch(epoch)" in result.message


def _descendants():
    """The pids of every process below this one (read from /proc)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [os.getpid()]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _hangs_with_a_child(rank, world_size):
    """Rank 1 starts a process of its own (a DataLoader worker, say) and then never finishes."""
    if rank == 1:
        if os.fork() == 0:
            signal.pause()
        time.sleep(1000)
    return rank


def test_a_hung_rank_is_stopped_and_nothing_survives_the_launch():
    before = set(_descendants())
    start = time.monotonic()
    answer = launcher.launch(2, _hangs_with_a_child)
    seconds = time.monotonic() - start
    assert f"rank 1 was still running {problems.STRAGGLER_S} s after rank 0 finished" in answer["failure"][0]
    assert seconds < problems.STRAGGLER_S + 3
    assert set(_descendants()) - before == set()


def _raises_on_rank_0(rank, world_size):
    if rank == 0:
        raise ValueError("drawn message 8127")
    import torch.distributed as dist

    dist.barrier()


@pytest.mark.quick
def test_a_rank_that_raises_ends_the_launch_at_once():
    before = set(_descendants())
    start = time.monotonic()
    answer = launcher.launch(3, _raises_on_rank_0)
    # at once: well before the process group's timeout, which would end the waiting ranks anyway (the launch itself,
    # three processes that import torch, takes 1 to 2 s on a quiet 2-core machine and more under load)
    assert time.monotonic() - start < problems.GROUP_TIMEOUT_S / 2
    assert answer["failure"][0].startswith("rank 0 failed: ValueError: drawn message 8127")
    assert set(_descendants()) - before == set()


class _RaisesOnOneRank:
    """A student's ``train_ddp`` that raises on ``bad`` while the other ranks go on into DDP's first collective
    (the broadcast of the parameters in its constructor), where they wait for the rank that failed, forever but for
    the launcher."""

    def __init__(self, bad, message):
        from tests.mutants.distributed import _training

        self.bad, self.message, self.train = bad, message, _training()

    def __call__(self, rank, world_size, model, dataset, **keywords):
        if rank == self.bad:
            raise RuntimeError(self.message)
        return self.train(rank, world_size, model, dataset, **keywords)


@pytest.mark.parametrize("world_size, bad", [(2, 1), (3, 0)])
def test_a_train_ddp_that_raises_on_one_rank_fails_promptly_with_its_message(world_size, bad):
    """The property the lesson's launcher teaches, proven as the grader's: the job fails as a whole, promptly (well
    before the straggler limit), with the failed rank's own message, and no rank process survives."""
    message = f"shard {417 + world_size} of rank {bad} is unreadable"
    check_ddp = distributed.check_ddp_matches_single
    launcher.launch(1, _returns_rank)       # torch._dynamo imported once, out of the timed call
    before = set(_descendants())
    start = time.monotonic()
    result = run_check(check_ddp, with_replacements(TOPIC, {"train_ddp": _RaisesOnOneRank(bad, message)}),
                       world_size=world_size)
    seconds = time.monotonic() - start
    assert not result.passed
    assert result.message.startswith(f"[check_ddp_matches_single] rank {bad}: train_ddp({bad}, {world_size}, ")
    assert f"raised RuntimeError: {message}" in result.message
    assert seconds < problems.STRAGGLER_S, seconds
    assert set(_descendants()) - before == set()


def _returns_rank(rank, world_size):
    return rank


def _fails_the_check_on_rank_1(rank, world_size):
    if rank == 1:
        raise CheckFailure("check_x", "average_gradients(model) raised KeyError: 7", hint="Run that call yourself.")
    import torch.distributed as dist

    dist.barrier()


@pytest.mark.quick
def test_a_rank_whose_student_call_failed_ends_the_launch_with_the_check_message():
    before = set(_descendants())
    start = time.monotonic()
    answer = launcher.launch(2, _fails_the_check_on_rank_1)
    assert time.monotonic() - start < 3
    assert answer["failure"] == ["rank 1: average_gradients(model) raised KeyError: 7", "Run that call yourself.",
                                 "failed at tests.checks.test_distributed._fails_the_check_on_rank_1:1"]   # its kind
    assert set(_descendants()) - before == set()


def _fails_the_check_on_every_rank(rank, world_size):
    if rank == 0:
        time.sleep(0.2)         # rank 0 answers last: its message is still the one reported
    raise CheckFailure("check_x", f"train_ddp({rank}, {world_size}, ...) raised NotImplementedError", hint="Write it.")


@pytest.mark.quick
def test_a_mistake_every_rank_makes_gives_the_lowest_rank_message_without_waiting_for_the_grace():
    """The same message in every run (the kit's and the instructor's messages are compared), and no grace spent
    when every rank has answered."""
    start = time.monotonic()
    answer = launcher.launch(3, _fails_the_check_on_every_rank)
    assert time.monotonic() - start < launcher.FAILED_GRACE_S
    assert answer["failure"][:2] == ["rank 0: train_ddp(0, 3, ...) raised NotImplementedError", "Write it."]


def test_the_reference_training_leaves_no_process():
    before = set(_descendants())
    namespace = reference(TOPIC)
    for check in (distributed.check_ddp_matches_single, distributed.check_average_matches_single):
        assert run_check(check, namespace).passed
    assert set(_descendants()) - before == set()


@pytest.mark.quick
def test_the_gradescope_bundle_refuses_the_assignment_saying_why():
    from autograder.gradescope import bundle

    with pytest.raises(bundle.BundleError) as refused:
        bundle.config(TOPIC, "waive", "immediate", {})
    assert "AF_UNIX" in str(refused.value) and "python -m autograder grade" in str(refused.value)


@pytest.mark.e2e
def test_every_item_passes_in_the_sandbox_over_its_own_loopback(tmp_path):
    """The trusted grader's real path: the reference's cells in a bubblewrap worker (its own network namespace, only
    ``lo``), every item graded here, hidden variants (3 ranks) included. gloo's ranks and their store talk over that
    ``lo``."""
    from autograder.checks import items_of
    from autograder.engine.results import grade_item
    from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, sandbox_launcher
    from tests.proving import ROOT

    folder = tmp_path / "worker"
    folder.mkdir()
    worker = NotebookWorker([], sandbox_launcher, str(folder))
    try:
        cell = (ROOT / "solutions" / f"{TOPIC}.py").read_text()
        worker.cells = [("submission", cell)]
        worker.live().request("cell", cell, timeout=120)
        results = [grade_item(item, RemoteNamespace(worker), seed=5) for item in items_of(TOPIC)]
    finally:
        worker.close()
    assert {r.item: r.message for r in results if not r.passed} == {}


GLOO_UNDER_FILTER = """
import datetime, tempfile
import torch.distributed as dist
try:
    dist.init_process_group("gloo", init_method="file://" + tempfile.mkdtemp() + "/store", rank=0, world_size=1,
                            timeout=datetime.timedelta(seconds=5))
    print("gloo ok")
except RuntimeError as error:
    print("gloo refused:", error)
"""


def test_gloo_cannot_run_in_the_gradescope_fallback_sandbox(tmp_path):
    """Why the bundle is refused: under the fallback's seccomp filter (only AF_UNIX sockets) gloo cannot form even a
    group of one rank, with a file store and no TCPStore."""
    import subprocess
    import sys

    from autograder.gradescope import seccomp

    if not seccomp.supported():
        pytest.skip("no seccomp filter on this machine")
    done = subprocess.run([sys.executable, seccomp.__file__, "deny-network", "--", sys.executable, "-c",
                           GLOO_UNDER_FILTER], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "gloo refused: Cannot resolve 127.0.0.1 to a (local) address" in done.stdout, done.stdout + done.stderr


GIVEN_LAUNCHER_RUNS = r'''
import sys
exec(sys.stdin.read())
def rank_sum(rank, world_size):
    t = torch.tensor([float(rank)])
    dist.all_reduce(t)
    return t.item()
for _ in range(5):
    assert run_ranks(rank_sum, 3) == [3.0, 3.0, 3.0]
print("done")
'''


def test_the_lessons_given_launcher_prints_nothing_after_a_success():
    """The lesson's own ``run_ranks`` (the notebook's given cell, run as a student runs it) lets the ranks of a
    successful job leave together: killing one in its last barrier made the others fail there and print
    "Process ForkProcess-N: Traceback ..." under the cell (seen in the browser test; 3 runs of 6 before the fix)."""
    import subprocess
    import sys

    from autograder.engine import notebooks
    from tests.proving import ROOT

    nb = notebooks.read(ROOT / "source" / "distributed" / "distributed.ipynb")
    given = next(notebooks.source_text(c) for c in nb["cells"]
                 if c["metadata"].get("nbgrader", {}).get("grade_id") == "given_launcher")
    done = subprocess.run([sys.executable, "-c", GIVEN_LAUNCHER_RUNS], input=given, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "Error" not in done.stderr, done.stderr


# ---------------------------------------------------------------- the traffic read from outside the worker

MEASURED = traffic.MEASURED     # per optimizer step in units of the gradients' bytes g, and the start of a run


def _item_plans(seed):
    """The plans the two traffic items draw with ``seed`` (their seams' generators)."""
    no_sync, calls = (Seam(c.item, seed).generator() for c in (distributed.check_accumulate_no_sync,
                                                                distributed.check_average_calls))
    return (distributed._plans(no_sync, 2, accumulation=3, wide=True)[0],
            distributed._plans(calls, 2, frozen=True, unused=True, wide=True)[0])


@pytest.mark.quick
@pytest.mark.parametrize("seed", range(12))
def test_the_traffic_bound_lies_between_the_measured_correct_runs_and_the_mistakes(seed):
    for plan, ddp, mistake in zip(_item_plans(seed), (True, False), ("backward_only_step", "params_too_step")):
        g = traffic.gradient_bytes(plan)
        steps = problems.steps_per_epoch(plan) * plan["epochs"]
        start = MEASURED["setup_kib"][1] * 1024 + (MEASURED["ddp_start"] * g if ddp else 0)
        least, most = traffic.bounds(plan, ddp=ddp)
        assert g >= 16 * 1024
        assert least < start + steps * MEASURED["correct_step"][0] * g
        assert start + steps * MEASURED["correct_step"][1] * g < most
        assert start + steps * MEASURED[mistake] * g > most * 1.1


@pytest.mark.quick
def test_nothing_is_read_for_a_function_in_this_process():
    reading = traffic.Reading(lambda: None)
    with reading:
        pass
    assert reading.sent is None
    traffic.expect_traffic("check_x", _item_plans(0)[1], reading, ddp=False, what="f", case="c", hint="h")


SENDER = ("import socket, sys\nprint('ready', flush=True)\nsys.stdin.readline()\nserver = socket.create_server(('127.0.0.1', 0))\n"
          "client = socket.create_connection(server.getsockname())\npeer, _ = server.accept()\n"
          "client.sendall(b'x' * 100000)\ngot = 0\nwhile got < 100000:\n    got += len(peer.recv(65536))\n"
          "print('sent', flush=True)\nsys.stdin.readline()\n")


@pytest.mark.parametrize("sandboxed", [True, False])
def test_the_loopback_of_a_sandboxed_worker_is_read_from_outside(tmp_path, sandboxed):
    """The grader reads what a sandboxed process sent on its own ``lo``; a process without a network namespace of
    its own gives no reading (the grader's own traffic would be counted)."""
    if sandboxed:
        try:
            sandbox.probe()
        except sandbox.SandboxUnavailable as why:
            pytest.skip(f"no sandbox here: {why}")
    proc = sandbox.start([sys.executable, "-c", SENDER], scratch=str(tmp_path), sandboxed=sandboxed)
    try:
        assert proc.stdout.readline() == b"ready\n"      # the sandbox is up: its namespace exists
        before = loopback.sent(proc)
        proc.stdin.write(b"\n")
        assert proc.stdout.readline() == b"sent\n"
        after = loopback.sent(proc)
    finally:
        proc.stdin.write(b"\n")
        sandbox.stop(proc, grace_s=2)
    if not sandboxed:
        assert before is None and after is None
        return
    assert 100000 <= (after - before).bytes < 110000
    assert loopback.sent(proc) is None       # gone: nothing is read from a number that may be reused
