"""The ingest queue: quarantine, release, one entry per run, the fixed end lines."""
