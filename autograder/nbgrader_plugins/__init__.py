"""Every extension of nbgrader, one concern a module: the preprocessors that grade in the trusted runner, late
submission, zip collect, the exchange's submit and collect, the gradebook's schema and the feedback page.
Set by ``nbgrader_config.py``."""
