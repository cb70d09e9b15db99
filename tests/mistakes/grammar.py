"""Slips in a student-facing message that a machine can see: ``slips(message)`` lists them.

What is checked, on the grader's own words (not on what the message quotes of the student's: the values of a
tensor, what their code printed, their line of code, the text of their exception, each cut off where it is long):

* a doubled word ("the the");
* "a" before a vowel sound, "an" before a consonant, in the common cases (a lower-case word: "a error", "an
  tensor"; "a uint8", "a one", "an hour", "an nn.Module" are right);
* unbalanced brackets or backticks;
* spaces at the end of a line;
* a hint or a "This looks like" line that does not end with a full stop, as every hint the checks write does;
* a message longer than :data:`MAX_CHARS`;
* the name of one of the grader's internal types (:data:`INTERNAL_TYPES`: the worker's proxies and handles), where
  a message should name the student's own object ("got Remote" for a returned profiler row).
"""

import re

MAX_CHARS = 6000        # the longest the proofs produce is about 3,000 (a gradcheck's report with the call)

_QUOTED = [
    re.compile(r"values \[[^\n]*?\](?=[,;)\n]|$)"),                   # a tensor's values
    re.compile(r"\(at line \d+: [^\n]*\)"),                          # the student's line of code
    re.compile(r"It printed:\n.*", re.S),                            # what the student's code printed (to the end)
    re.compile(r"\braised \w+(Error|Exception|Warning)?: [^\n]*"),   # the text of the student's exception
    re.compile(r"(To reproduce, run|The call|To try it): [^\n]*"),   # the call, written out as code
    re.compile(r"read from your source: [^\n]*"),                    # the student's constructs, as written
    re.compile(r"`[^`\n]*`"),                                        # code in backticks
    re.compile(r"(?<!\w)'[^'\n]*'(?!\w)|\"[^\"\n]*\""),               # quoted strings, not an apostrophe
    re.compile(r"[^\s()\[\]{}]+\.\.\.(?=[\s,;\]]|$)"),                # a repr cut off with "..."
]
INTERNAL_TYPES = ("Remote", "RemoteError", "RemoteNamespace", "_RemoteGraph", "Handle object", "Session",
                  "_Callback", "Callback", "_Named", "_Link", "WireError", "NotebookWorker", "StateLeftChanged")
_INTERNAL = re.compile(r"(?<![\w.])(" + "|".join(re.escape(name) for name in INTERNAL_TYPES) + r")\b")
_DOUBLED = re.compile(r"\b([A-Za-z]+)\s+\1\b", re.I)
_A_VOWEL = re.compile(r"\b[Aa] ([aeiou][a-z]*)\b")
_AN_CONSONANT = re.compile(r"\b[Aa]n ([b-df-hj-np-tv-z][a-z]*)\b")
_SOUNDS_LIKE_YOU = ("u", "use", "usual", "unit", "uni", "uint", "user", "utf", "one", "once", "eu")
_NOT_AN_ARTICLE = {"and", "or", "is", "in", "as", "at", "if", "of", "on", "it"}   # "a and b": the variable a
_SILENT_H = ("hour", "honest", "honour")


def _spelled_with_a_vowel_sound(word):
    """A word read letter by letter (no vowel: ``nn``, ``fp``) whose first letter's name starts with a vowel sound
    ("an nn.Module", "an fp16 value")."""
    return not any(c in "aeiouy" for c in word) and word[0] in "fhlmnrsx"


def _grader_words(message):
    """``message`` without what it quotes of the student's (see the module's docstring)."""
    for pattern in _QUOTED:
        message = pattern.sub(" QUOTED ", message)
    return message


def slips(message):
    """The slips in ``message``, each a short description; ``[]`` when it reads well."""
    found = []
    if len(message) > MAX_CHARS:
        found.append(f"{len(message)} characters, over {MAX_CHARS}")
    for number, line in enumerate(message.splitlines(), 1):
        if line != line.rstrip():
            found.append(f"spaces at the end of line {number}")
        if line.startswith(("Hint: ", "This looks like: ")) and not line.rstrip().endswith((".", "?", "!", ")")):
            found.append(f"line {number} does not end with a full stop: {line!r}")
    words = _grader_words(message)
    found += [f"doubled word {m.group(0)!r}" for m in _DOUBLED.finditer(words) if m.group(1).lower() != "quoted"]
    found += [f"'a' before a vowel: {m.group(0)!r}" for m in _A_VOWEL.finditer(words)
              if not m.group(1).startswith(_SOUNDS_LIKE_YOU) and m.group(1) not in _NOT_AN_ARTICLE]
    found += [f"'an' before a consonant: {m.group(0)!r}" for m in _AN_CONSONANT.finditer(words)
              if not m.group(1).startswith(_SILENT_H) and not _spelled_with_a_vowel_sound(m.group(1))]
    for opening, closing in ("()", "[]", "{}"):
        if words.count(opening) != words.count(closing):
            found.append(f"unbalanced {opening}{closing}: {words.count(opening)} against {words.count(closing)}")
    if message.count("`") % 2:
        found.append("an odd number of backticks")
    found += [f"an internal type named: {name!r}" for name in internal_types(message)]
    return found


def internal_types(message):
    """The grader's internal type names in ``message``'s own words (:data:`INTERNAL_TYPES`)."""
    return [m.group(0) for m in _INTERNAL.finditer(_grader_words(message))]
