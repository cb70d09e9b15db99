"""The submitted source as the grader parses it: names and scopes, the rules a check reads from the source,
and the constructs that only serve to evade grading."""
