"""What a group of tests needs from the machine (a sandbox, Chromium, JupyterHub): without it they skip with the
reason, except in CI (``CI`` set), where a missing prerequisite must fail rather than hide the tests."""

import os

import pytest


def missing(reason, tests):
    """Skip with ``reason``; in CI, fail: ``tests`` (e.g. "the browser tests") must run there."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: {tests} must run here, not skip)", pytrace=False)
    pytest.skip(reason)
