"""Source rule of the ``distributed`` topic: gradient accumulation enters ``no_sync()``, read from the submitted source.

No data shows it: with or without ``no_sync`` the same parameters come out (the all-reduce of a sum is the sum of
the all-reduces), and the count of all-reduces is measured in the student's process. The grader reads the cells
(or, in process, the function's own file), so the student's process has no say in it.
"""

import ast
from dataclasses import dataclass

from autograder.source_evidence.source_rules import Finding, SourceRule


@dataclass(frozen=True)
class UsesMethod(SourceRule):
    """``target`` (or a definition it reaches) names the method ``method`` of some object (``model.no_sync()``,
    ``ctx = ddp.no_sync``): the object is the student's own variable, so no dotted name resolves it."""

    method: str = ""
    kind = "uses method"

    @property
    def hint(self):
        return (f"Enter `model.{self.method}()` (`with model.{self.method}():`) around the backward passes that must "
                f"not all-reduce, in `{self.target}`.")

    def describe(self):
        return f"`{self.target}` uses the method `.{self.method}`"

    def findings(self, answer):
        for _, node in answer.nodes():
            if isinstance(node, ast.Attribute) and node.attr == self.method:
                return []
        return [Finding(f"`{self.target}` never uses `.{self.method}()`",
                        answer.definition.part.where(answer.definition.node))]


def uses_method(target, method):
    return UsesMethod(target, method)
