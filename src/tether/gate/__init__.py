"""The call-budget gate: counts every tool call of an agent session and refuses
calls once the session's budget is spent.

This package runs on every tool call of every agent, so it imports only the
standard library and ``tether.gate.*`` (a test enforces it). Keep this file
import-free.
"""
