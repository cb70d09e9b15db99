"""Grader-only oracles: functions that compute an exercise's answer (model answers), one module per topic.

Nothing here goes into the student kit (``autograder.kit_contents``) or into the grading sandbox. Checks never
import these modules: they call ``autograder.measuring.expected_outputs.oracle("<topic>.<name>", *args)``, which runs the
function here where the grader has it, and in the kit looks up the value recorded at kit-build time for the
visible test cells' inputs.
"""
