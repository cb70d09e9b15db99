"""Course tools around nbgrader: build (release + solutions), batch grading, demo, export.

Everything here needs nbgrader installed, except :mod:`autograder.course.notebooks` and what a grading worker runs
(:mod:`autograder.course.jobs` and :mod:`autograder.course.trusted_runner`, which a GPU worker with only torch,
numpy, OpenCV and Dask imports).
"""
