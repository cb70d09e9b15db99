"""Grading inside Gradescope: ``python -m autograder gradescope [assignment ...]`` builds ``autograder.zip``
(``bundle``), and Gradescope's container runs the same trusted grader on each submission (``run``), writing
``results.json`` (``results``). Where bubblewrap cannot make a namespace, the worker runs as an unprivileged user with a
seccomp filter (``fallback``, ``seccomp``). docs/gradescope.md says how to use it and what the fallback does not stop.
"""
