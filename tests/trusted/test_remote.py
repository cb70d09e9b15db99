"""The grader's side of the pipe (autograder.trusted.remote), beyond what the proofs show."""

import pytest

from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, plain_launcher
from autograder.student import CallTimeout, time_limit
from autograder.trusted.remote import WorkerLost


def test_a_request_interrupted_here_stops_the_worker(tmp_path):
    """The grader's own time limit (call_student's) can interrupt a request: the worker's late answer must never be
    read as the answer to the next request. The worker is stopped, and a runner starts a fresh one."""
    cell = "import time\ndef slow():\n    time.sleep(3)\n    return 'slow'\ndef fast():\n    return 'fast'\n"
    worker = NotebookWorker([("cell", cell)], plain_launcher, str(tmp_path))
    try:
        names = RemoteNamespace(worker)
        slow, fast = names["slow"], names["fast"]
        with pytest.raises(CallTimeout), time_limit(0.3):
            slow()
        with pytest.raises(WorkerLost):
            fast()
        assert names["fast"]() == "fast" and worker.starts == 2
    finally:
        worker.close()
