"""What the amp checks run where the student's code lives (their worker under trusted grading) and in the clean
worker: training runs from a plan, checkpoint saves and loads, and the timed speed runs. What comes back is plain data,
judged by the grader (docs/security.md)."""
