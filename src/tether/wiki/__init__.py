"""The wiki: Markdown pages with provenance, an FTS5 index, link resolution and checks."""
