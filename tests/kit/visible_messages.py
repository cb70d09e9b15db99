"""Run as ``python -I -S visible_messages.py PACKAGE_PARENT REPO SITE_PACKAGES... -- ITEMS_JSON TOPIC...``: print, as
JSON, the message of every visible test that fails for the reference, the second solution, the stub and every
mutant of each topic, graded with the ``autograder`` found in PACKAGE_PARENT (the student kit, or the instructor's
package) and the tests' submissions from REPO. Only the items named in ``ITEMS_JSON`` (``{topic: [item id]}``) are
graded; ``null`` there: with the instructor's package, the items whose checks ask an oracle for the reference (the
only ones whose answers differ between the kit and the package), which the report lists."""

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
    from autograder.measuring import expected_outputs
    from tests import proving

    chosen = json.loads(argv[split + 1])
    report = {"autograder": autograder.__file__,
              "oracles": importlib.util.find_spec("autograder.oracles") is not None, "topics": {}, "items": {}}
    for topic in argv[split + 2:]:
        if chosen is None:
            reference, asking = proving.reference(topic), []
            for item in items_of(topic):
                with expected_outputs.recording() as recorded:
                    grade_item(item, reference, seed=0, hidden=False)
                if recorded:
                    asking.append(item.id)
            report["items"][topic] = asking
        else:
            asking = chosen[topic]
        mutants = importlib.import_module(f"tests.mutants.{topic}").MUTANTS
        submissions = {"reference": (proving.reference(topic), None), "alternative": (proving.alternative(topic), None),
                       "stub": (proving.stub(topic), None)}
        for name, (replacements, _) in mutants.items():
            submissions[f"mutant: {name}"] = (proving.with_replacements(topic, replacements), set(replacements))
        seen = {}
        for label, (namespace, replaced) in submissions.items():
            failed = {}
            for item in items_of(topic):
                if item.id not in asking or (replaced is not None and not replaced & set(item.targets)):
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
