"""The one seam between a check and the student's code: calls with guards (``student``), handles and proxies
on the grader's side (``handle``, ``remote``), the wire and the worker on the student's side, and the probes
that run beside the student's objects."""
