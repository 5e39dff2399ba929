"""tether: keep coding agents on a short, visible leash.

The package root stays import-free so that the gate hook (``tether.gate``) starts
with the standard library alone.
"""

__version__ = "0.1.0"
