"""The dataloading checks pass correct solutions, catch each realistic mistake, and survive bad datasets.

DataLoader passes start real worker processes with "fork" (the default), "spawn" or "forkserver"; those tests use
classes and functions from importable modules (tests.alternatives, tests.mutants), since such workers import them.
"""

import multiprocessing
import sys
import time
import types
import warnings

import numpy as np
import pytest
import torch
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
    assert "NoneType" in failed["check_tar_dataset_decoding"] and "GRADER ERROR" not in str(failed)


# ------------------------------------------------------------------ collate_images

def _collate_failure(collate, check=dataloading.check_collate_images_values):
    with pytest.raises(AssertionError) as excinfo:
        check(collate)
    return str(excinfo.value)


def test_collate_messages_name_the_mistake():
    assert "channels last" in _collate_failure(mutants.collate_channels_last)
    assert "sizes holds (W, H)" in _collate_failure(mutants.collate_sizes_wh)
    assert "not in the top-left corner" in _collate_failure(mutants.collate_centred)
    assert "holds 114 everywhere" in _collate_failure(mutants.collate_grey_padding)
    message = _collate_failure(mutants.collate_stack_when_equal)
    assert "collate_images(<3 NumPy images (H x W: 1x1, 6x4, 3x9)>) raised RuntimeError" in message
    assert "array(" not in message and "To try it: collate_images([" in message
    shared = _collate_failure(mutants.collate_view_of_single, dataloading.check_collate_images_copies)
    assert "shares memory" in shared and "1 NumPy image" in shared


def test_collate_repro_call_runs_in_the_notebook():
    message = _collate_failure(mutants.collate_centred)
    call = message.split("To try it: ", 1)[1].split("\n", 1)[0]
    names, images, sizes = eval(call, {"np": np, "torch": torch, "collate_images": alternative_module.collate_images})
    assert list(images.shape[:2]) == [3, 3] and sizes.dtype == torch.int64


def collate_writes_into_its_input(batch):
    for _, image in batch:
        image[0, 0] = 0                                  # "clears" a corner in place
    return alternative_module.collate_images(batch)


def test_collate_that_writes_into_its_input_is_named():
    message = _collate_failure(collate_writes_into_its_input, dataloading.check_collate_images_copies)
    assert "changed input image 0" in message and "in place" in message


def test_pin_memory_on_a_cpu_machine_passes_without_warning_the_student():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dataloading.check_collate_images_loader(alternative_module.collate_images)
    assert not [w for w in caught if "pin_memory" in str(w.message)]


def test_collate_loader_runs_with_forkserver():
    """Python 3.14's default on Linux: with it configured, an importable collate_fn and the grader's dataset
    reach the workers pickled (spawn works the same way; test_checks_run_with_spawn covers it)."""
    before = new_children()
    with settings_module.override({"dataloading": {"start_method": "forkserver"}}):
        assert dataloading_runs.start_method() == "forkserver"
        dataloading.check_collate_images_loader(alternative_module.collate_images, tensors=True)
    assert new_children() - before == set()


def test_spawn_explains_a_notebook_collate_fn(monkeypatch):
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))   # a kernel's: no __file__

    def collate_images(batch):
        return alternative_module.collate_images(batch)
    collate_images.__module__ = "__main__"
    with settings_module.override({"dataloading": {"start_method": "spawn"}}), \
            pytest.raises(AssertionError) as excinfo:
        dataloading.check_collate_images_loader(collate_images)
    assert "cannot import collate_images because it is defined in the notebook" in str(excinfo.value)


@pytest.mark.gpu
def test_collated_batches_come_out_pinned_on_cuda():
    dataset = dataloading.SyntheticImageDataset(dataloading.synthetic.make_samples(7, formats=("png",)))
    batches = dataloading_runs.load_all("demo", dataset, 2, where="a test", batch_size=3, pin_memory=True,
                                        collate_fn=alternative_module.collate_images)
    assert len(batches) == 3 and all(images.is_pinned() and sizes.is_pinned() for _, images, sizes in batches)
    dataloading.check_collate_images_loader(alternative_module.collate_images)
