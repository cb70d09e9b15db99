"""The grader's side of the pipe (autograder.seam.remote), beyond what the proofs show."""

import pytest

from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, plain_launcher
from autograder.seam.remote import WorkerLost
from autograder.seam.student import CallTimeout, time_limit


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


@pytest.mark.quick
def test_a_module_the_notebook_writes_cannot_be_imported(tmp_path):
    """The worker's working directory is not on ``sys.path``: a file the student's code writes there is not
    importable, so an import the source analysis took for a missing module (the lesson's own optional
    ``import matplotlib`` under ``except ImportError``) can only raise."""
    cell = ("import os, sys\nopen('planted_plots.py', 'w').write('PLANTED = True')\n"
            "def planted():\n    try:\n        import planted_plots\n        return 'imported'\n"
            "    except ImportError:\n        return 'missing'\n"
            "def path():\n    return os.path.exists('planted_plots.py'), os.getcwd() in sys.path or '' in sys.path\n")
    worker = NotebookWorker([("cell", cell)], plain_launcher, str(tmp_path))
    try:
        names = RemoteNamespace(worker)
        assert names["planted"]() == "missing" and tuple(names["path"]()) == (True, False)
    finally:
        worker.close()
