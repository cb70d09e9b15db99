"""The record files on disk (autograder/engine/records.py): a write that a killed run left unfinished is a hidden
temporary file beside the record; it is never read as a record, and the next write of that record removes it."""

import pytest

from autograder.engine.records import KeptResults, RecordStore, new_record

pytestmark = pytest.mark.quick


def test_a_killed_writes_leftover_is_not_a_record_and_goes_with_the_next_write(tmp_path):
    store = RecordStore(tmp_path)
    store.append(new_record("ada", "stability", seed=1))
    leftover = store.path("ada", "stability").parent / ".stability-41h7wyec.json"
    leftover.write_text('{"history": [{"student": "ada", "assignment": "half-written"}]}', encoding="utf-8")
    assert list(store.all_latest()) == ["ada/stability"]
    store.append(new_record("ada", "stability", seed=2))
    assert not leftover.exists()
    assert [r["seed"] for r in store.history("ada", "stability")] == [1, 2]


def test_a_kept_result_rewritten_after_a_kill_leaves_one_file(tmp_path):
    kept = KeptResults(tmp_path)
    kept.put("ada", "amp", "digest-1", {"points": 1})
    leftover = kept.path("ada", "amp").parent / ".amp-x0x0x0x0.json"
    leftover.write_text("{", encoding="utf-8")
    kept.put("ada", "amp", "digest-2", {"points": 2})
    assert sorted(p.name for p in kept.path("ada", "amp").parent.iterdir()) == ["amp.json"]
    assert kept.get("ada", "amp", "digest-2") == {"points": 2}
