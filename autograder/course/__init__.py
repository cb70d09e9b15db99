"""The instructor's tools around nbgrader that drive the grading engine (:mod:`autograder.engine`): one module per
command (``build``, ``grade``, ``export``, ``report``/``pending``, ``demo``, ``kit``, ``collect-zip``, ``check``),
nbgrader's steps (``trusted_execute``, ``late``, ``exchange``, ``lms``), the batch on Dask (``batch``) and the grades
in force (``current_grades``). Everything here but ``cli`` and ``selfcheck`` (the student kit's ``check``) needs
nbgrader installed.
"""
