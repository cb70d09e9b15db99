"""Trusted grading: student code runs in a sandboxed worker; checks run here and judge plain data."""
