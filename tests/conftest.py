"""Tests marked ``gpu`` need CUDA: without a device they are skipped, with the reason, in one place."""

import pytest
import torch

from tests.student_kit import kit_home, kit_venv, kit_wheel  # noqa: F401 - one kit and venv per session


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (marked gpu)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
