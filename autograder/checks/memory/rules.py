"""Source rules of the ``memory`` topic: what an answer must call, read from the submitted source.

``autograder.source_rules`` has rules for what an answer must *not* contain; checkpointing and ``no_grad`` are
things an answer must *use*, which no data the grader gets back can show (the same gradients come out of a plain
forward; a result that needs no gradient comes out of ``.detach()`` too). The grader reads them from the cells
(or, in process, the objects' own files), so the student's process has no say in them.
"""

import ast
from dataclasses import dataclass

from ...source_rules import Finding, SourceRule
from ...submitted_source import resolve_dotted


@dataclass(frozen=True)
class CallsWith(SourceRule):
    """``target`` (or a definition it reaches) calls ``name`` with each keyword of ``keywords`` set to its constant
    (``checkpoint(block, h, use_reentrant=False)``)."""

    name: str = ""
    keywords: tuple = ()      # ((keyword, constant), ...)
    kind = "calls"

    @property
    def hint(self):
        short = self.name.rsplit(".", 1)[-1]
        given = "".join(f", {k}={v!r}" for k, v in self.keywords)
        return f"Call `{short}(...{given})` from `{self.name.rsplit('.', 1)[0]}` in `{self.target}`."

    def describe(self):
        given = "".join(f", {k}={v!r}" for k, v in self.keywords)
        return f"`{self.target}` calls `{self.name}(...{given})`"

    def findings(self, answer):
        aliases = answer.aliases()
        for _, node in answer.nodes():
            if isinstance(node, ast.Call) and resolve_dotted(node.func, aliases) == self.name:
                given = {k.arg: k.value for k in node.keywords}
                if all(isinstance(given.get(k), ast.Constant) and given[k].value is v for k, v in self.keywords):
                    return []
        given = "".join(f", {k}={v!r}" for k, v in self.keywords)
        return [Finding(f"`{self.target}` never calls `{self.name}(...{given})`",
                        answer.definition.part.where(answer.definition.node))]



def calls_with(target, name, **keywords):
    return CallsWith(target, name, tuple(keywords.items()))

