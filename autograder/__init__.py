"""Effective PyTorch Lab: the autograder's checks and the course's grading tools.

``autograder.checks`` needs only torch, numpy and OpenCV; ``autograder.course``
(release, demo, batch grading, export) needs nbgrader as well.
"""

__version__ = "0.1.0"
