"""``tether doctor``: is the leash attached, harness by harness, on this machine?

For each agent CLI found (on PATH, and by each configured profile's PATH) it
reads where the gate hook is installed and what the CLI must trust before it
runs it, then proves it live: the CLI headless against the scripted model
server, gate budget 1, two tool calls that each create a file. The verdict is
``enforced`` only when the first call ran and the second was refused and did
not run. See docs/how-to/check-the-leash-with-doctor.md.
"""
