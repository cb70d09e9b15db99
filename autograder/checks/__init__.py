"""One module per topic; each public ``check_<exercise>(student_object, ...)`` is one graded test cell.

A check returns ``None`` when every property holds and raises
:class:`autograder.errors.CheckFailure` (an ``AssertionError``) otherwise.
"""
