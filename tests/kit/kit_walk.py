"""Run with only the student kit on ``sys.path`` (``python -I -S kit_walk.py KIT_TREE SITE_PACKAGES...``): print, as
JSON, every callable the kit's modules define (functions and classes, private ones too) with the positional
arguments it takes, and the modules the kit cannot import."""

import importlib
import inspect
import json
import pkgutil
import sys


def arity(obj):
    """``[fewest, most]`` positional arguments (``most`` None: any number), or None without a signature."""
    try:
        parameters = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return None
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in parameters)
    return [len(required), None if varargs else len(positional)]


def main(kit, *site_packages):
    sys.path[:0] = [kit, *site_packages]
    import autograder
    found, failed = [], {}
    names = ["autograder"] + [m.name for m in pkgutil.walk_packages(autograder.__path__, "autograder.")]
    for name in sorted(names):
        try:
            module = importlib.import_module(name)
        except Exception as error:  # noqa: BLE001 - reported, and the test fails on it
            failed[name] = f"{type(error).__name__}: {error}"
            continue
        for attribute, obj in sorted(vars(module).items()):
            if attribute.startswith("__") or not callable(obj) or getattr(obj, "__module__", None) != name:
                continue
            found.append({"module": name, "name": attribute, "class": inspect.isclass(obj), "arity": arity(obj),
                          "file": getattr(module, "__file__", None)})
    print(json.dumps({"callables": found, "unimportable": failed}))


if __name__ == "__main__":
    main(*sys.argv[1:])
