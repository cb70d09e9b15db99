"""Run as ``python -I -S visible_messages.py PACKAGE_PARENT REPO SITE_PACKAGES... -- TOPIC...``: print, as JSON, the
message of every visible test that fails for the reference, the second solution, the stub and every mutant of each
topic, graded with the ``autograder`` found in PACKAGE_PARENT (the student kit, or the instructor's package) and
the tests' submissions from REPO. Items with a clock (their messages carry measured times) are left out."""

import json
import sys


def main(argv):
    split = argv.index("--")
    package_parent, repo, *site_packages = argv[:split]
    sys.path[:0] = [package_parent, repo, *site_packages]
    import importlib.util

    import torch

    import autograder
    from autograder.checks import items_of
    from autograder.engine.results import FAILED, GRADER_ERROR, grade_item
    from tests import proving

    report = {"autograder": autograder.__file__,
              "oracles": importlib.util.find_spec("autograder.oracles") is not None, "topics": {}}
    for topic in argv[split + 1:]:
        mutants = importlib.import_module(f"tests.mutants.{topic}").MUTANTS
        submissions = {"reference": (proving.reference(topic), None), "alternative": (proving.alternative(topic), None),
                       "stub": (proving.stub(topic), None)}
        for name, (replacements, _) in mutants.items():
            submissions[f"mutant: {name}"] = (proving.with_replacements(topic, replacements), set(replacements))
        seen = {}
        for label, (namespace, replaced) in submissions.items():
            failed = {}
            for item in items_of(topic):
                if "speed" in item.id or (replaced is not None and not replaced & set(item.targets)):
                    continue
                torch.manual_seed(0)
                result = grade_item(item, namespace, seed=0, hidden=False)
                if result.status in (FAILED, GRADER_ERROR):
                    failed[item.name] = result.message
            seen[label] = failed
        report["topics"][topic] = seen
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
