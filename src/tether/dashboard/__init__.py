"""``tether dashboard``: a local, read-only web view of the same state as ``tether status``."""
