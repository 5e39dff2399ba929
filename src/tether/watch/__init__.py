"""The orchestrator watchdog: while a subagent runs, the orchestrator is not idle.

``proctree`` decides who runs (process trees), ``subagents`` finds them (tmux
panes under the subagents folders, ``tether run`` runs), ``transcript`` and
``confirm`` tell what they wait on, ``activity`` when the orchestrator last did
something, ``wake`` how to wake it, ``daemon`` ties one cycle and the loop
together. ``registry`` is the store side, ``endpoints`` the files through which
harness extensions take wake requests, ``pi_wake_extension`` and ``rewake`` the two
such endpoints. See docs/explanation/the-wake-invariant.md.
"""
