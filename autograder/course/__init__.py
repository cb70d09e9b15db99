"""Course tools around nbgrader: build (release + solutions), batch grading, demo, export.

Everything here except :mod:`autograder.course.notebooks` needs nbgrader installed.
"""
