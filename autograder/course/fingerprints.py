"""Fingerprints of Python code that survive renaming, reordering, comments and whitespace (statements; winnowing).

The code is read with Python's own ``tokenize``: comments, docstrings, blank lines, indentation and line breaks are
dropped; every name the code binds itself (variables, arguments, helper functions) becomes ``V``, while keywords,
attribute names after a dot (``.amax``, ``.sum``), builtins and imported modules (``torch``, ``F``) are kept, so two
independent solutions that call different library functions stay apart. Every run of :data:`K` normalised tokens is
hashed (a fixed hash: the same on every machine and run) and winnowing keeps the smallest hash of each window of
:data:`WINDOW` hashes (Schleimer, Wilkerson and Aiken, "Winnowing", SIGMOD 2003): any shared run of
``K + WINDOW - 1`` tokens is guaranteed to be found, whatever order the functions come in.

The same tokens grouped by statement (a logical line: a statement, or a compound statement's header) give the
statement score (:func:`statement_similarity`), which added statements (dead code) and reordering cannot lower.

Code that does not tokenize (a student's syntax error) is split by a plain pattern instead, so it is still compared.
"""

import ast
import builtins
import hashlib
import io
import keyword
import re
import tokenize
from dataclasses import dataclass, field

K = 12          # tokens per hashed run: a line such as `z = x - x.amax(dim=dim, keepdim=True)` is 15
WINDOW = 6      # hashes per winnowing window: every shared run of K + WINDOW - 1 = 17 tokens is found

_SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
            tokenize.ENDMARKER}
_KEPT_NAMES = set(dir(builtins)) | {"self", "cls", "torch", "nn", "F", "np", "numpy", "math", "functools", "os",
                                    "io", "json", "tarfile", "PIL", "cv2", "pathlib", "Path"}
_FALLBACK = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\S")


@dataclass
class Token:
    text: str       # the normalised token: "V" for a name the code binds, "S" for a string, else the token itself
    line: int       # the line it starts on, counted from 0 in the text given
    statement: int = 0   # the logical line (statement, or a compound statement's header) it belongs to


@dataclass
class Fingerprint:
    """A text's normalised tokens, the hash of every run of :data:`K` of them, and the winnowed selection."""

    tokens: list
    hashes: list                                     # hashes[i]: the run tokens[i:i + K]
    selected: set = field(default_factory=set)       # the winnowed hashes


def _hash(texts):
    return int.from_bytes(hashlib.blake2b("\x1f".join(texts).encode(), digest_size=8).digest(), "big")


def _imported(text):
    """The names an import binds (``import torch.nn.functional as F`` binds F): library names, kept as they are."""
    found = set()
    for match in re.finditer(r"^\s*(?:from\s+\S+\s+)?import\s+(.+)$", text, flags=re.M):
        for part in match.group(1).strip("() ").split(","):
            words = part.split()
            if words:
                found.add(words[-1] if "as" in words else words[0].split(".")[0])
    return found


def _bound(text):
    """The names ``text`` binds itself (arguments, assignments): variables, whatever they are called (``input``)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    return {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)} | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def normalised_tokens(text, keep_lines=None):
    """The tokens of ``text`` as compared, each with its line; ``keep_lines``: only tokens on those lines (0-based),
    for a cell whose handed-out starter lines are not the student's."""
    kept = (_KEPT_NAMES - _bound(text)) | _imported(text)
    out = []
    try:
        raw = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        raw = None
    if raw is None:     # not Python as written: a plain split, names still normalised
        for number, line in enumerate(text.splitlines()):
            code = line.split("#", 1)[0]
            for word in _FALLBACK.findall(code):
                is_name = word[0].isalpha() or word[0] == "_"
                out.append(Token("V" if is_name and not keyword.iskeyword(word) and word not in kept else word,
                                 number, number))
    else:
        previous, statement_start, statement = None, True, 0
        for index, tok in enumerate(raw):
            if tok.type in _SKIPPED:
                if tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                    statement_start = True
                    statement += tok.type == tokenize.NEWLINE
                continue
            if tok.type == tokenize.STRING:
                following = next((t for t in raw[index + 1:] if t.type not in (tokenize.COMMENT, tokenize.NL)), None)
                if statement_start and (following is None or following.type in (tokenize.NEWLINE,
                                                                                 tokenize.ENDMARKER)):
                    statement_start = False      # a docstring or a bare string: a comment by another name
                    continue
                text_ = "S"
            elif tok.type == tokenize.NAME:
                after_dot = previous is not None and previous.string == "."
                text_ = tok.string if (after_dot or keyword.iskeyword(tok.string) or tok.string in kept) else "V"
            else:
                text_ = tok.string
            statement_start = False
            previous = tok
            out.append(Token(text_, tok.start[0] - 1, statement))
    if keep_lines is not None:
        out = [t for t in out if t.line in keep_lines]
    return out


def fingerprint(tokens):
    """The :class:`Fingerprint` of normalised ``tokens``."""
    texts = [t.text for t in tokens]
    hashes = [_hash(texts[i:i + K]) for i in range(len(texts) - K + 1)]
    selected = set()
    if hashes:
        for start in range(max(1, len(hashes) - WINDOW + 1)):
            window = hashes[start:start + WINDOW]
            selected.add(min(window))
    return Fingerprint(tokens, hashes, selected)


def covered(mine, shared):
    """Which of ``mine``'s tokens lie in a run whose hash is in ``shared``: a list of booleans."""
    marks = [False] * len(mine.tokens)
    for i, h in enumerate(mine.hashes):
        if h in shared:
            for j in range(i, i + K):
                marks[j] = True
    return marks


def similarity(a, b, min_tokens=1):
    """``(score, a's covered tokens, b's covered tokens)``: the larger of the two sides' shares of tokens that lie in
    runs found in the other, over the winnowed hashes both hold (0 when either has no run of :data:`K` tokens); a
    side with fewer than ``min_tokens`` tokens counts as that many.

    The larger share is the smaller side's: a copy padded with dead code or extra functions still shows the whole of
    what it copied."""
    shared = a.selected & b.selected
    if not shared:
        return 0.0, [False] * len(a.tokens), [False] * len(b.tokens)
    # a winnowed hash both hold marks every run with that hash on both sides: what the page highlights
    in_a, in_b = covered(a, shared), covered(b, shared)
    share_a = sum(in_a) / max(len(in_a), min_tokens)
    share_b = sum(in_b) / max(len(in_b), min_tokens)
    return max(share_a, share_b), in_a, in_b


def statements(tokens):
    """``{normalised statement: [its tokens]}`` over ``tokens``, one entry per distinct statement."""
    grouped = {}
    for token in tokens:
        grouped.setdefault(token.statement, []).append(token)
    found = {}
    for group in grouped.values():
        found.setdefault(" ".join(t.text for t in group), []).extend(group)
    return found


def statement_index(tokens, ignored=frozenset(), shortest=4):
    """``{normalised statement: [its tokens]}`` of the statements that count: not in ``ignored`` (the handed-out
    code), not an import, and at least ``shortest`` tokens long (``return V`` counts for nobody)."""
    return {text: group for text, group in statements(tokens).items()
            if text not in ignored and len(text.split()) >= shortest and not text.startswith(("import ", "from "))}


def statement_shares(mine, theirs, min_tokens=1):
    """``(mine's share, theirs' share)`` of two :func:`statement_index` es: of each side's tokens, the share in
    statements the other side also has; a side with fewer than ``min_tokens`` tokens counts as that many. A copy
    with code added around it has a share of 1.0 on the copied side and less on the side with the additions."""
    shared = mine.keys() & theirs.keys()
    in_a = sum(len(mine[text]) for text in shared)
    in_b = sum(len(theirs[text]) for text in shared)
    total_a = sum(len(g) for g in mine.values())
    total_b = sum(len(g) for g in theirs.values())
    return in_a / max(total_a, min_tokens, 1), in_b / max(total_b, min_tokens, 1)


def statement_similarity(mine, theirs, min_tokens=1):
    """``(score, mine's matching lines, theirs' matching lines)`` over whole statements (two
    :func:`statement_index` es): the larger of the two sides' shares (:func:`statement_shares`).

    Insensitive to the order of functions and to statements added around the copied ones (dead code)."""
    shared = mine.keys() & theirs.keys()
    if not shared:
        return 0.0, set(), set()
    score = max(statement_shares(mine, theirs, min_tokens))
    return score, {t.line for text in shared for t in mine[text]}, {t.line for text in shared for t in theirs[text]}
