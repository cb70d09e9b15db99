"""nbgrader's gradebook schema version, read in this process instead of by an ``alembic`` subprocess.

nbgrader writes a new gradebook's (SQLite or PostgreSQL) ``alembic_version`` row from ``nbgrader.api
.get_alembic_version``, which runs ``alembic -c <a temporary alembic.ini> heads`` in a subprocess: 2.2 to 2.9 s on the
2-core machine here, for every new gradebook (every course's first nbgrader command or API: the demo, each test's
course, a first ``grade``). That command reads nbgrader's migration scripts (``nbgrader/alembic/versions``) with
alembic's ``ScriptDirectory`` and prints their heads; :func:`schema_head` reads the same scripts with the same class
in this process (about 0.1 s), once per process. :func:`read_in_process` puts it in nbgrader's place; the course's
``nbgrader_config.py`` imports ``trusted_execute``, which calls it, so every nbgrader command and every API this
package builds on the course uses it. tests/course/test_build.py compares it with ``alembic heads`` itself.
"""

import functools


@functools.cache
def schema_head():
    """The head revision of nbgrader's gradebook migrations (what ``alembic heads`` prints first)."""
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    heads = ScriptDirectory(ALEMBIC_DIR).get_heads()
    if len(heads) != 1:      # nbgrader's own reading takes the first line; more than one head is no schema to write
        raise RuntimeError(f"nbgrader's gradebook migrations have {len(heads)} heads ({heads}), not one")
    return heads[0]


nbgraders_own = None   # nbgrader's get_alembic_version, once replaced (the test compares the two)


def read_in_process():
    """nbgrader's new gradebooks get :func:`schema_head` (in this process), not an ``alembic heads`` subprocess."""
    global nbgraders_own
    import nbgrader.api

    if nbgrader.api.get_alembic_version is not schema_head:
        nbgraders_own = nbgrader.api.get_alembic_version
        nbgrader.api.get_alembic_version = schema_head
