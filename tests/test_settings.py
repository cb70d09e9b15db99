"""One home for settings: overridable by JSON file or in Python, restored after."""

import json
import subprocess
import sys

import pytest

from autograder.settings import override, settings

pytestmark = pytest.mark.quick


def test_override_restores():
    before = settings.call_timeout_s
    with override({"call_timeout_s": 1.5, "speed": {"thresholds": {"row_sum": {"cpu": 99.0}}}}):
        assert settings.call_timeout_s == 1.5
        assert settings.speed.thresholds["row_sum"].cpu == 99.0
    assert settings.call_timeout_s == before
    assert settings.speed.thresholds["row_sum"].cpu != 99.0


def test_unknown_setting_is_an_error():
    with pytest.raises(KeyError) as excinfo:
        with override({"speed": {"repeatz": 3}}):
            pass
    assert "speed.repeatz" in str(excinfo.value)


def test_json_file_from_environment(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"grading": {"memory_limit_gb": 2, "gpu_items": "fail"}}))
    code = "from autograder.settings import settings as s; print(s.grading.memory_limit_gb, s.grading.gpu_items)"
    out = subprocess.run([sys.executable, "-c", code], env={"AUTOGRADER_SETTINGS": str(path), "PATH": ""},
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == ["2", "fail"]


def test_every_speed_threshold_carries_its_calibration():
    for name, spec in settings.speed.thresholds.items():
        assert spec.calibration and spec.calibration != "placeholder", name
