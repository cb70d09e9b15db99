"""What the vectorization checks run where the student's code lives: the worker's facts (op counts, host syncs, a model
built there) and torch.compile sessions. Reported by the student's process: they explain or cost points, never earn
them (docs/security.md)."""
