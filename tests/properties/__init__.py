"""Property-based search for gaps in the proofs (issue 23): the reference, every alternative and every mutant, run
on inputs Hypothesis draws from each exercise's contract (docs/authoring.md, "Property search")."""
