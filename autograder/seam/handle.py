"""The one seam between a check and the student's code: a handle on the student's object.

A check is written once, for both places the student's code can live:

* **in this process** (the student's own notebook, ``python -m autograder check``, the in-process proofs): the
  handle holds the object itself;
* **in a worker** (the trusted grader): the handle holds a :class:`~autograder.seam.remote.Remote` proxy, and
  everything it does goes over the pipe as plain data.

It offers what a check needs of the student's object and nothing else::

    fn = handle(per_sample_grads)
    model = fn.beside(worker_facts.model_for, sizes, decoy)   # a registered probe run where fn lives, fn first
    fn(model, params, x, y)                              # the call (plain data back under trusted grading)
    loader = handle(load_checkpoint).in_fresh_process()  # a process that never ran the checks' earlier calls
    fn.in_worker                                         # whether it lives in a worker (for messages only)

``beside`` runs a probe declared ``@probe`` (``autograder.seam.probes``) with the student's object as its first
argument, in the student's process: in their worker, the one the worker froze before any student code ran. What
a probe reports is the student's process's word: it can cost points and explain, never earn them alone
(docs/security.md). A check never branches on where the object lives.
"""

from autograder.seam import remote


class Handle:
    """The student's object as a check reaches it (see the module's docstring)."""

    __slots__ = ("target",)
    holds_target = True      # what ``call_student`` unwraps (it cannot import this module)

    def __init__(self, target):
        self.target = target

    @property
    def in_worker(self):
        """Whether the object lives in a worker (under trusted grading)."""
        return remote.is_remote(self.target)

    @property
    def type_name(self):
        """The name of the object's class, as the process it lives in has it (for messages)."""
        return self.target.__name__ if self.in_worker else type(self.target).__name__

    def __call__(self, *args, **kwargs):
        return self.target(*args, **kwargs)

    def beside(self, probe, *args, **kwargs):
        """``probe(target, *args, **kwargs)`` where the object lives; plain data back from a worker."""
        return remote.beside(probe, self.target, *_texts(args), **dict(zip(kwargs, _texts(kwargs.values()))))

    def beside_within(self, seconds, probe, *args, **kwargs):
        """:meth:`beside`, giving a worker ``seconds`` to answer (a probe with its own time limits inside)."""
        return remote.beside_within(seconds, probe, self.target, *_texts(args),
                                    **dict(zip(kwargs, _texts(kwargs.values()))))

    def in_fresh_process(self):
        """The same object as a process that never ran the checks' calls has it (``remote.in_fresh_process``)."""
        return Handle(remote.in_fresh_process(self.target))

    def __repr__(self):
        return f"handle({self.target!r})"


def _texts(values):
    """``values`` with every ``str`` of a subclass as its plain text: a check's seam (``student_calls.Seam``, the
    check's name) crosses to the student's process as the name alone."""
    return tuple(str.__str__(v) if isinstance(v, str) and type(v) is not str else v for v in values)


def handle(target):
    """A :class:`Handle` on ``target`` (a handle stays itself)."""
    return target if isinstance(target, Handle) else Handle(target)


def unwrapped(value):
    """The object a handle holds (anything else as it is): what goes to ``call_student`` and the timer."""
    return value.target if isinstance(value, Handle) else value
