"""The grading engine: what a grading process imports, and nothing of nbgrader, Dask or the command line.

``results`` (a verdict per item, as data), ``notebooks`` (reading a notebook, and the one function that picks the
code cells a worker runs), ``trusted_runner`` (a notebook's code in a sandboxed worker, every check here), ``jobs`` (one
submission as a unit of work: bytes in, plain data out) and ``records`` (the verdict records and their history). The
instructor's tools that drive it (nbgrader's steps, the batch on Dask, the command line) are in ``autograder.course``.
"""
