"""The dataloading checks through a trusted worker that shares no directory with the grader.

The worker gets a private /tmp (bubblewrap, where it can be used; else the plain worker), and the grader's own
temporary directory is made unusable, so every shard, image folder and output directory a check uses must be made
by the worker in its own temporary directory, and everything the grader judges must come back as data. A hanging
DataLoader pass is ended by the worker's own limits (its message names it), not by the grader killing the worker.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from autograder import settings as settings_module
from autograder.checks import dataloading
from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, plain_launcher
from autograder.sandbox import bubblewrap as sandbox
from tests.proving import ROOT


def _bwrap_usable():
    if shutil.which("bwrap") is None:
        return False
    trial = subprocess.run(["bwrap", "--bind", "/", "/", "--tmpfs", "/tmp", "true"], capture_output=True)
    return trial.returncode == 0


def private_tmp_launcher(argv, scratch):
    """The worker with a /tmp of its own (and /dev/shm for DataLoader workers): no path is shared with the grader."""
    # a checkout (and its venv) under /tmp stays visible: the worker runs its Python and imports its tests
    kept = sorted({os.path.realpath(p) for p in (str(ROOT), sys.prefix, sys.base_prefix) if p.startswith("/tmp/")})
    command = ["bwrap", "--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--tmpfs", "/tmp",
               *[arg for path in kept for arg in ("--ro-bind", path, path)], "--dir", "/tmp/worker",
               "--tmpfs", "/dev/shm", "--setenv", "TMPDIR", "/tmp/worker", "--chdir", "/tmp/worker",
               "--die-with-parent", "--", *argv]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            start_new_session=True, close_fds=True)
    return proc, sandbox.stop


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    launcher = private_tmp_launcher if _bwrap_usable() else plain_launcher
    worker = NotebookWorker([], launcher, str(tmp_path_factory.mktemp("worker")))
    for code in (f"import sys; sys.path.insert(0, {str(ROOT)!r})",
                 (ROOT / "solutions" / "dataloading.py").read_text(encoding="utf-8"),
                 "from tests.checks.test_dataloading import HangsInMainProcess, HangsInOneWorker\n"
                 "import multiprocessing, os, tempfile"):
        answer = worker.live().request("cell", code, timeout=120)
        assert not answer["ok"]["error"], answer["ok"]["error"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(tmp_path_factory.getbasetemp() / "the-grader-writes-nothing"))
        yield worker, RemoteNamespace(worker)
    worker.close()


def _printed(worker, code):
    return worker.live().request("cell", code, timeout=60)["ok"]["output"]


def test_reference_passes_with_every_file_in_the_worker(student):
    worker, names = student
    dataloading.check_image_directory_dataset(names["ImageDirectoryDataset"])
    dataloading.check_write_shards(names["write_shards"])
    dataloading.check_tar_dataset_decoding(names["TarImageDataset"])
    dataloading.check_tar_dataset_errors(names["TarImageDataset"])
    dataloading.check_tar_dataset_workers(names["TarImageDataset"], grid=((3, (0, 2)), (2, (5,))))
    dataloading.check_tar_dataset_ranks(names["TarImageDataset"], grid=((2, 3),))
    dataloading.check_tar_dataset_resources(names["TarImageDataset"])
    dataloading.check_collate_images_copies(names["collate_images"])
    dataloading.check_collate_images_loader(names["collate_images"])
    assert worker.starts == 1
    assert "grader-" not in _printed(worker, "print(os.listdir(tempfile.gettempdir()))")   # scratch removed


def test_a_hanging_pass_is_named_by_the_worker_and_the_worker_survives(student):
    worker, names = student
    with settings_module.override({"dataloader_timeout_s": 1.5}), pytest.raises(AssertionError) as excinfo:
        dataloading.check_tar_dataset_workers(names["HangsInOneWorker"], grid=((2, (2,)),))
    assert "with 2 shards, DataLoader(num_workers=2): a worker sent no sample for 1.5 s" in str(excinfo.value)
    assert worker.starts == 1
    assert _printed(worker, "print(multiprocessing.active_children())").strip() == "[]"


def test_a_pass_may_take_longer_than_one_call(student):
    """The grader waits for a pass as long as the pass's own limits in the worker (``remote.beside_within``), so a
    main-process hang is named by the worker's alarm even when one call's limit is shorter."""
    worker, names = student
    with settings_module.override({"call_timeout_s": 3, "dataloader_timeout_s": 4}), \
            pytest.raises(AssertionError) as excinfo:
        dataloading.check_tar_dataset_workers(names["HangsInMainProcess"], grid=((2, (0,)),))
    assert "DataLoader(num_workers=0): a full pass did not finish within 4 s" in str(excinfo.value)
    assert worker.starts == 1
