"""Disguised copies of Python source, as a student hides a copy: names renamed, functions reordered, comments and
dead code added, whitespace changed. Deterministic: the same source, level and seed give the same copy.

Levels: 1 renames the names the code binds and changes whitespace; 2 also reorders the top-level functions and
classes and adds comments; 3 also adds dead code (an unused helper function and unused statements in bodies).
"""

import ast
import io
import random
import re
import tokenize

WORDS = ("value", "tmp", "acc", "out", "res", "data", "buf", "item", "thing", "cur", "part", "total", "vec", "arr")
COMMENTS = ("# compute the result", "# TODO: tidy this up", "# careful with shapes here", "# this is the main step",
            "# works on my machine", "# see the lecture notes", "# handle the general case")


def bound_names(source):
    """Names the code binds itself (arguments, assigned names), without its functions, methods and classes (the
    exercise's names and ``forward``, which a copier must keep)."""
    tree = ast.parse(source)
    top = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))}
    found = set()
    class_level = {id(target) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for stmt in node.body
                   if isinstance(stmt, (ast.Assign, ast.AnnAssign))
                   for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])}
    for node in ast.walk(tree):
        if id(node) in class_level:      # a class attribute: its name is the class's interface
            continue
        if isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
    return {n for n in found - top if n not in ("self", "cls", "ctx") and not n.startswith("__")}


def rename(source, rng):
    """Every bound name replaced by a fresh one, except keyword arguments of calls (``dim=`` of ``x.sum``)."""
    names = sorted(bound_names(source))
    fresh = {}
    for name in names:
        while True:
            candidate = f"{rng.choice(WORDS)}_{rng.randrange(100)}"
            if candidate not in fresh.values() and candidate not in names:
                fresh[name] = candidate
                break
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    out, parens = [], []      # parens: for each open bracket, whether it is a def's parameter list
    for i, tok in enumerate(tokens):
        string = tok.string
        if tok.type == tokenize.OP and string in "([{":
            before = [t for t in tokens[max(0, i - 2):i]]
            parens.append(len(before) == 2 and before[0].string in ("def", "class"))
        elif tok.type == tokenize.OP and string in ")]}" and parens:
            parens.pop()
        if tok.type == tokenize.NAME and string in fresh:
            after_dot = i and tokens[i - 1].string == "."
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            keyword_arg = parens and not parens[-1] and nxt is not None and nxt.string == "="
            if not after_dot and not keyword_arg:
                string = fresh[string]
        out.append(tok._replace(string=string))
    return tokenize.untokenize(out)


def chunks(source):
    """The top-level statements as text, each with its decorators and the comments just above it."""
    tree = ast.parse(source)
    lines = source.splitlines()
    starts = [min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) - 1 for n in tree.body]
    ends = starts[1:] + [len(lines)]
    return [(node, "\n".join(lines[s:e]).strip("\n")) for node, s, e in zip(tree.body, starts, ends)]


def reorder(source, rng):
    """The functions and classes shuffled; imports and other statements stay first, in their order."""
    parts = chunks(source)
    fixed = [text for node, text in parts if not isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    moved = [text for node, text in parts if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    rng.shuffle(moved)
    return "\n\n\n".join(fixed + moved) + "\n"


def add_comments(source, rng, every=3):
    """A comment above about one statement in ``every``, at its indentation."""
    lines = source.splitlines()
    starts = {(min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1, node.col_offset)
              for node in ast.walk(ast.parse(source)) if isinstance(node, ast.stmt)}
    for index, column in sorted(starts, reverse=True):
        if rng.randrange(every) == 0:
            lines.insert(index, " " * column + rng.choice(COMMENTS))
    return "\n".join(lines) + "\n"


def add_dead_code(source, rng):
    """An unused helper function at the end, and an unused assignment at the top of every function body."""
    tree = ast.parse(source)
    lines = source.splitlines()
    inserts = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) \
                    and len(node.body) > 1:
                first = node.body[1]
            indent = lines[first.lineno - 1][:first.col_offset]
            inserts.append((first.lineno - 1, f"{indent}unused_{rng.randrange(1000)} = {rng.randrange(2, 99)}"))
    for index, text in sorted(inserts, reverse=True):
        lines.insert(index, text)
    helper = rng.choice(WORDS)
    lines += ["", "", f"def debug_{helper}(x, n={rng.randrange(2, 9)}):",
              "    history = []",
              "    for step in range(n):",
              f"        history.append(step * {rng.randrange(2, 9)})",
              "    print('debug', x, history)",
              "    return history"]
    return "\n".join(lines) + "\n"


def change_whitespace(source, rng):
    """Spacing around commas and ``=`` changed, blank lines doubled, outside strings and comments."""
    out = []
    for line in source.splitlines():
        if "'" in line or '"' in line or "#" in line:
            out.append(line)
            continue
        if rng.randrange(2):
            line = re.sub(r",\s*", ",", line)
        line = re.sub(r"(?<=[\w)\]]) = (?=\S)", "=", line) if rng.randrange(2) else line
        out.append(line.rstrip() + ("  " if rng.randrange(3) == 0 else ""))
        if not line.strip():
            out.append("")
    return "\n".join(out) + "\n"


def disguise(source, level=3, seed=0):
    """A disguised copy of ``source`` (see the module's docstring for the levels); still valid Python."""
    rng = random.Random(f"{seed}-{level}")
    text = rename(source, rng)
    if level >= 2:
        text = add_comments(reorder(text, rng), rng)
    if level >= 3:
        text = add_dead_code(text, rng)
    text = change_whitespace(text, rng)
    ast.parse(text)   # a disguise that breaks the code would not be a student's copy
    return text

