"""Supervised runs: one agent process under its budgets, its record and its report."""
