"""No solution cell's code is in the student kit: for every ``### BEGIN SOLUTION ... ### END SOLUTION`` block in
``source/``, with comments and spaces removed, neither the whole block (when it says something specific: 25
characters or more; ``return x`` says nothing) nor any run of RUN consecutive statements of it appears in any file of
the built wheel, comments and spaces removed there too (so a hint that quoted a whole block would be found).

Why a run of 5 and not single lines: the kit's own code legitimately shares idioms with the answers. The grader's
float16 loop (``checks/amp/speed.py``, the host-sync count on CUDA) ends with the four lines every GradScaler loop
ends with (``scaler.step``, ``scaler.update``, ``zero_grad``, the losses read back once), which the lesson teaches;
``checks/modules``' list of expected layer names loops over ``zip(sizes[:-1], sizes[1:])`` as ``make_mlp`` does; hints
quote single lines (``scaler.unscale_(optimizer)``). None of them is an answer (tests/kit/test_theft.py).
"""

import io
import re
import tokenize
import zipfile
from pathlib import Path

from autograder.engine import notebooks

ROOT = Path(__file__).resolve().parents[2]
SPECIFIC = 25   # characters of a whole block, spaces and comments removed
RUN = 5         # consecutive statements


def solution_blocks():
    """``[(notebook, cell id, block text)]`` of every solution block in ``source/``."""
    blocks = []
    for path in sorted((ROOT / "source").glob("*/*.ipynb")):
        for cell in notebooks.read(path)["cells"]:
            text = notebooks.source_text(cell)
            for block in re.findall(rf"{notebooks.BEGIN_SOLUTION}\n(.*?){notebooks.END_SOLUTION}", text, re.S):
                blocks.append((path.name, notebooks.grade_id(cell), block))
    return blocks


def code_text(data):
    """Python source as bytes with comments and every space removed (what ``statements`` makes of a block, joined)."""
    kinds = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
             tokenize.ENDMARKER)
    tokens = tokenize.generate_tokens(io.StringIO(data.decode("utf-8")).readline)
    return "".join(re.sub(r"\s+", "", t.string) for t in tokens if t.type not in kinds).encode()


def normalised(name, data):
    """A file of the wheel as searched: Python without comments or spaces, anything else without spaces."""
    return code_text(data) if name.endswith(".py") else re.sub(rb"\s+", b"", data)


def statements(block):
    """The logical lines of ``block`` (dedented), each without comments or spaces."""
    lines = [line for line in block.splitlines() if line.strip()]
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    source = "\n".join(line[indent:] for line in lines) + "\n"
    found, current = [], []
    kinds = (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NEWLINE or token.type == tokenize.ENDMARKER:
            if current:
                found.append("".join(current))
            current = []
        elif token.type not in kinds:
            current.append(re.sub(r"\s+", "", token.string))
    return found


def test_solution_blocks_are_found_and_split():
    blocks = solution_blocks()
    assert {name for name, _, _ in blocks} == {f"{t}.ipynb" for t in notebooks_topics()}
    masked = next(block for name, cell, block in blocks if cell == "masked_mean")
    assert statements(masked) == ["inside=(x>=low)&(x<=high)",
                                  "total=torch.where(inside,x,torch.zeros_like(x)).sum(dim=0)",
                                  "count=inside.sum(dim=0)", "returntotal/count.clamp(min=1)"]


def notebooks_topics():
    return [p.name for p in (ROOT / "source").iterdir() if (p / f"{p.name}.ipynb").exists()]


def leaks(statements_, text):
    """The pieces of a block (statements, spaces removed) that ``text`` (spaces removed, bytes) holds."""
    pieces = ["".join(statements_[k:k + RUN]) for k in range(len(statements_) - RUN + 1)]
    whole = "".join(statements_)
    if len(whole) >= SPECIFIC:
        pieces.append(whole)
    return [piece for piece in pieces if piece.encode() in text]


def test_the_rule_finds_the_solutions_module():
    """The search finds every specific block in ``solutions/`` (what a kit that packed it would hold)."""
    for name, cell, block in solution_blocks():
        topic = name.removesuffix(".ipynb")
        text = code_text((ROOT / "solutions" / f"{topic}.py").read_bytes())
        found = statements(block)
        if len("".join(found)) >= SPECIFIC:
            assert leaks(found, text), (name, cell)


def test_no_solution_block_is_in_the_kit(kit_wheel):
    with zipfile.ZipFile(kit_wheel) as wheel:
        files = {name: normalised(name, wheel.read(name)) for name in wheel.namelist()}
    assert len(files) > 60
    blocks = [(name, cell, statements(block)) for name, cell, block in solution_blocks()]
    assert sum(len("".join(found)) >= SPECIFIC for _, _, found in blocks) > 20
    found = [(name, cell, file, leaks(statements_, content)) for name, cell, statements_ in blocks
             for file, content in files.items() if leaks(statements_, content)]
    assert found == []
