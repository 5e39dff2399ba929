"""Public test helpers: the scripted model server, transcripts, conformance checks.

Submodules are imported on demand (``from tether.testing.model_server import
ModelServer``) so importing ``tether.testing`` stays cheap.
"""
