"""The student kit answers the visible test cells as the instructor's package does: for the topics whose oracles
are grader-only, every failing visible test of the reference, the second solution, the stub and every mutant
gives the same message through the kit alone (its expected outputs recorded at build time) as through the full
package, and none is the kit's "no expected output" message."""

import json
import re
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.commands.kit import oracle_topics

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

pytestmark = pytest.mark.e2e


def _start(package_parent, items, topics, cwd):
    return subprocess.Popen([sys.executable, "-I", "-S", str(HERE / "visible_messages.py"), str(package_parent),
                             str(REPO), *site.getsitepackages(), "--", json.dumps(items), *topics],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)


def _messages(proc):
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-4000:]
    out = re.sub(r" at 0x[0-9a-f]+", " at 0x...", out)                    # object addresses differ by process,
    return json.loads(re.sub(r"(-|/tmp)[a-z0-9_]{8}(?=/)", r"\1XXXXXXXX", out))   # and temporary directories


def test_visible_messages_through_the_kit_equal_the_full_packages(kit_wheel, tmp_path):
    unpacked = tmp_path / "kit"
    with zipfile.ZipFile(kit_wheel) as wheel:
        wheel.extractall(unpacked)
    topics = oracle_topics()
    assert {"operators", "dataloading"} <= set(topics)
    full = _messages(_start(REPO, None, topics, tmp_path))   # it says which items ask an oracle
    assert all(full["items"][topic] for topic in topics), full["items"]
    kit = _messages(_start(unpacked, full["items"], topics, tmp_path))
    assert kit["autograder"] == str(unpacked / "autograder" / "__init__.py") and kit["oracles"] is False
    assert full["autograder"] == str(REPO / "autograder" / "__init__.py") and full["oracles"] is True
    for topic in topics:
        assert kit["topics"][topic].keys() == full["topics"][topic].keys()
        for label, messages in full["topics"][topic].items():
            assert kit["topics"][topic][label] == messages, (topic, label)
            assert not any("has no expected output" in m for m in messages.values()), (topic, label)
        assert full["topics"][topic]["reference"] == full["topics"][topic]["alternative"] == {}
        assert len(full["topics"][topic]["stub"]) == len(full["items"][topic])
        caught = [label for label, messages in full["topics"][topic].items() if label.startswith("mutant") and messages]
        assert caught, topic   # mistakes in the exercises these items grade, with their messages compared
