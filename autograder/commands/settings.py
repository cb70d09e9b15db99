"""``python -m autograder settings``: every number that decides a grade, in one listing.

The settings in force (``autograder/settings.py`` with the ``AUTOGRADER_SETTINGS`` overrides), the shared
comparison tolerances per dtype (``autograder/measuring/compare.py``), then for each
topic its graded items (points, hidden variants, device) and the tolerances and limits its check package
declares as module constants.
"""

import importlib
import json

import torch

from autograder.checks import TOPICS, items_of
from autograder.measuring.compare import TOLERANCES
from autograder.settings import as_dict


def _plain(value):
    if isinstance(value, dict):
        return {str(k).removeprefix("torch."): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return value


def _is_number_table(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_is_number_table(v) for v in value)
    if isinstance(value, dict):
        return bool(value) and all(_is_number_table(v) for v in value.values())
    return False


def declared_constants(topic):
    """The topic package's numeric module constants (tolerances, sizes, limits), by name."""
    module = importlib.import_module(f"autograder.checks.{topic}")
    return {name: _plain(value) for name, value in vars(module).items()
            if name.isupper() and _is_number_table(value)}


def settings_text(topics=None):
    topics = topics or TOPICS
    data = {"settings": _plain(as_dict()), "comparison_tolerances": _plain(TOLERANCES), "topics": {}}
    for topic in topics:
        data["topics"][topic] = {
            "items": [{"id": i.id, "points": i.points, "visible": _plain(i.visible), "hidden": _plain(i.hidden),
                       "needs": i.needs} for i in items_of(topic)],
            "constants": declared_constants(topic),
        }
    return json.dumps(data, indent=1, default=str)


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    parser.add_argument("topics", nargs="*", help="only these topics' declarations (default: all)")


def from_command_line(args, parser):
    """``python -m autograder settings``: what the command prints, and its exit status."""
    print(settings_text(args.topics or None))
    return 0
