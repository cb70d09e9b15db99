"""Start-up: importing nbformat after autograder does not compile jsonschema's IRI parsers, and IRIs are still
validated (autograder/__init__.py, ``_defer_rfc3987_syntax``)."""

import subprocess
import sys

import pytest

PROBE = r'''
import sys
import autograder, nbformat
from jsonschema import Draft7Validator
loaded_at_import = "lark" in sys.modules
validator = Draft7Validator({"type": "string", "format": "iri"}, format_checker=Draft7Validator.FORMAT_CHECKER)
print(loaded_at_import, validator.is_valid("http://example.com/ä"), validator.is_valid("http://a b"))
'''


@pytest.mark.quick
def test_nbformat_imports_without_the_iri_parsers_and_iris_are_still_checked():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "False"], done.stdout + done.stderr
