"""The foundation every layer imports, the gate included: standard library only.

The project's root and tether home, which processes are agents and which
session they work in, the session stamp, process ancestry, schema
migrations, exit codes and the error tree. Nothing here imports another
tether package (a contract in pyproject.toml says so).
"""
