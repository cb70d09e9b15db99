"""Tests marked ``gpu`` need CUDA: without a device they are skipped, with the reason, in one place."""

import pytest
import torch

from tests.prerequisites import missing
from tests.student_kit import kit_home, kit_venv, kit_wheel  # noqa: F401 - one kit and venv per session


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (marked gpu)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def ready():
    """The sandbox this machine gives (``sandbox.probe()``'s description); without one the tests that need it skip
    with the reason, and fail in CI."""
    from autograder.trusted import sandbox

    try:
        return sandbox.probe()
    except sandbox.SandboxUnavailable as error:
        missing(f"no sandbox on this machine: {error}", "the sandbox tests")
