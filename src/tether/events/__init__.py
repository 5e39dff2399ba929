"""The harness-neutral event model and the pure accounting over it."""
