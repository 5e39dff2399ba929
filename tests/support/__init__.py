"""Helpers of the tests and the benchmarks (not shipped in the wheel): a real
PostgreSQL, fleet projects, a real CLI under limits, an MCP client, what a command imports."""
