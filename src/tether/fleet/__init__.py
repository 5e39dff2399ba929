"""The fleet: many projects' loops on any number of workers, on DBOS Transact.

A *project* is a git repository with a board and a ``tether.toml``. Its loop
is a chain of durable DBOS workflows, one per unit, on one queue that holds
one unit per project at a time and hands them out oldest first: a project's
units run one after the other fleet-wide, any worker may take the next one,
no project waits behind younger units of others, and a worker that dies
mid-unit has its workflow recovered by another (the unit's step runs again:
at-least-once, made safe by the abandoned run's report and the loop's
follow-up).

DBOS and SQLAlchemy are imported only here and only when a fleet command runs,
never on the gate's path nor by ``tether --help``.
"""
