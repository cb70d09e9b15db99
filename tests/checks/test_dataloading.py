"""The dataloading checks pass correct solutions, catch each realistic mistake, and survive bad datasets.

DataLoader passes start real worker processes with "fork" (the default) or "spawn"; the spawn tests use
classes from importable modules (tests.alternatives, tests.mutants), since spawned workers import the class.
"""

import multiprocessing
import sys
import time
import types

import pytest
from torch.utils.data import IterableDataset, get_worker_info

from autograder import settings as settings_module
from autograder.checks import dataloading
from autograder.checks.dataloading import expect as dataloading_expect
from autograder.checks.dataloading import runs as dataloading_runs
from tests.alternatives import dataloading as alternative_module
from tests.mutants import dataloading as mutants
from tests.proving import failing_among, with_replacements

TOPIC = "dataloading"


def new_children():
    return {p.pid for p in multiprocessing.active_children()}


def test_each_configuration_gets_its_own_message():
    passes = dataloading.check_tar_dataset_workers
    passes(mutants.OneWorkerPerShard, grid=((2, (2,)),))          # as many workers as shards: right
    with pytest.raises(AssertionError) as excinfo:
        passes(mutants.OneWorkerPerShard, grid=((2, (2,)), (3, (2,))))
    message = str(excinfo.value)
    assert "with 3 shards, DataLoader(num_workers=2)" in message
    assert "worker process" in message and "use exactly one worker per shard" in message
    with pytest.raises(AssertionError) as excinfo:
        dataloading.check_tar_dataset_workers(mutants.DropsRemainder, grid=((7, (3,)),))
    assert "with 7 shards, DataLoader(num_workers=3)" in str(excinfo.value)
    assert "never came out" in str(excinfo.value)


def test_rank_message_names_the_ranks():
    with pytest.raises(AssertionError) as excinfo:
        dataloading.check_tar_dataset_ranks(mutants.IgnoresRank, grid=((3, 2),))
    message = str(excinfo.value)
    assert "world_size=2" in message and "came from rank 0, rank 1" in message


class HangsInOneWorker(IterableDataset):
    """Worker 1 never yields and never returns; the main process waits for it."""

    def __init__(self, paths, rank=0, world_size=1):
        self.inner = mutants.IgnoresRank(paths)

    def __iter__(self):
        info = get_worker_info()
        if info is not None and info.id == 1:
            while True:
                time.sleep(0.05)
        yield from self.inner


class HangsInMainProcess(HangsInOneWorker):
    def __iter__(self):
        while True:
            time.sleep(0.05)
        yield


@pytest.mark.parametrize("dataset, runs, expected", [
    (HangsInOneWorker, (2,), "sent no sample for 1.5 s"),
    (HangsInMainProcess, (0,), "a full pass did not finish within 1.5 s"),
])
def test_hanging_dataset_fails_in_time_and_leaves_no_worker(dataset, runs, expected):
    before = new_children()
    started = time.perf_counter()
    with settings_module.override({"dataloader_timeout_s": 1.5}), pytest.raises(AssertionError) as excinfo:
        dataloading.check_tar_dataset_workers(dataset, grid=((2, runs),))
    assert time.perf_counter() - started < 15
    assert expected in str(excinfo.value) and "num_workers=" in str(excinfo.value)
    assert new_children() - before == set()


def test_workers_of_a_failed_pass_are_reaped():
    before = new_children()
    with pytest.raises(AssertionError):
        dataloading.check_tar_dataset_workers(mutants.OneWorkerPerShard, grid=((3, (5,)),))
    assert new_children() - before == set()


def test_checks_run_with_spawn():
    with settings_module.override({"dataloading": {"start_method": "spawn"}}):
        assert dataloading_runs.start_method() == "spawn"
        dataloading.check_tar_dataset_workers(alternative_module.TarImageDataset, grid=((3, (2,)),))
        with pytest.raises(AssertionError) as excinfo:
            dataloading.check_tar_dataset_workers(mutants.NaiveTarDataset, grid=((2, (2,)),))
    assert "came out more than once" in str(excinfo.value)


def test_spawn_explains_a_notebook_class(monkeypatch):
    notebook_main = types.ModuleType("__main__")      # like a Jupyter kernel's: no __file__
    monkeypatch.setitem(sys.modules, "__main__", notebook_main)
    NotebookDataset = type("TarImageDataset", (mutants.IgnoresRank,), {"__module__": "__main__"})
    with settings_module.override({"dataloading": {"start_method": "spawn"}}), \
            pytest.raises(AssertionError) as excinfo:
        dataloading.check_tar_dataset_workers(NotebookDataset, grid=((2, (2,)),))
    assert "defined in the notebook" in str(excinfo.value) and "'fork'" in str(excinfo.value)


class OpensShardsInInit(mutants.IgnoresRank):
    def __init__(self, paths, rank=0, world_size=1):
        super().__init__(paths, rank, world_size)
        self.handles = [open(path, "rb") for path in self.paths]


def test_unpicklable_dataset_under_spawn_gets_a_hint():
    with settings_module.override({"dataloading": {"start_method": "spawn"}}), \
            pytest.raises(AssertionError) as excinfo:
        dataloading.check_tar_dataset_workers(OpensShardsInInit, grid=((2, (2,)),))
    assert "pickle" in str(excinfo.value) and "open files inside __iter__" in str(excinfo.value)


def test_wrong_item_types_get_clear_messages():
    class YieldsImagesOnly(mutants.IgnoresRank):
        def __iter__(self):
            for _, image in super().__iter__():
                yield image

    failed = failing_among(TOPIC, with_replacements(TOPIC, {"TarImageDataset": YieldsImagesOnly}),
                           {"check_tar_dataset_decoding"})
    assert "not a (name, image) pair" in failed["check_tar_dataset_decoding"]


def test_jpeg_from_another_decoder_is_accepted():
    sample = dataloading.synthetic.make_samples(1, formats=("jpg",))[0]
    nudged = sample.expected.astype(int)
    nudged[::2] += 2                                  # another IDCT: small differences everywhere
    dataloading_expect.expect_image("demo", nudged.clip(0, 255).astype("uint8"), sample, where="a test")
    with pytest.raises(AssertionError):
        dataloading_expect.expect_image("demo", sample.expected[..., ::-1].copy(), sample, where="a test")


def test_undecoded_images_get_a_message_not_an_internal_error():
    class YieldsBytes(mutants.IgnoresRank):
        def __iter__(self):
            for name, _ in super().__iter__():
                yield name, None

    failed = failing_among(TOPIC, with_replacements(TOPIC, {"TarImageDataset": YieldsBytes}),
                           {"check_tar_dataset_workers", "check_tar_dataset_decoding"})
    assert "not an HxWx3 image" in failed["check_tar_dataset_workers"]
    assert "NoneType" in failed["check_tar_dataset_decoding"] and "internal error" not in str(failed)
