"""Run inside ``outer.DockerLike`` by ``tests/adversarial/test_attacks.py``'s fallback run: grade the course's
submissions with the fallback sandbox forced (a user with no entry in /etc/passwd, uid given), as the main run does,
and write ``{"records", "crashes", "seconds"}`` as JSON.

``python -m tests.gradescope.adversarial_fallback COURSE OUT UID CLEAN_UID SEED TOPIC,... STUDENT,...``
"""

import json
import sys
import time

from autograder.engine.trusted_runner import use_fallback
from autograder.gradescope.fallback import launcher_as
from autograder.settings import override
from tests.adversarial.test_attacks import LIMITS, grade_once_going_on_after_crashes


def main(course, out, uid, clean_uid, seed, topics, students):
    use_fallback(launcher_as(int(uid), int(uid), "epl-fallback", int(clean_uid)), forced=True)
    started = time.perf_counter()
    with override(LIMITS):
        records, crashes = grade_once_going_on_after_crashes(course, topics.split(","), students.split(","), int(seed))
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"records": records, "crashes": crashes, "seconds": time.perf_counter() - started}, handle)


if __name__ == "__main__":
    main(*sys.argv[1:])
