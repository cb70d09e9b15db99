"""One module per command of ``python -m autograder``, named after it (``collect-zip``: ``collect_zip.py``).

``autograder/cli.py`` is the table of commands; each module here does one."""
