"""A follow-up run's prompt: the new instruction plus the previous report, verbatim."""

from __future__ import annotations

BEGIN = "<!-- tether:previous-report:begin -->"
END = "<!-- tether:previous-report:end -->"


def compose_prompt(prompt: str, previous_run_id: str, previous_report_md: str) -> str:
    return (
        f"{prompt.rstrip()}\n\n"
        f"## Progress report of the previous run ({previous_run_id})\n\n"
        f"This is a fresh session. The previous run on this unit was stopped by a limit; "
        f"its report follows verbatim. Continue from its open points.\n\n"
        f"{BEGIN}\n{previous_report_md.rstrip()}\n{END}\n"
    )


def embedded_report(prompt: str) -> str | None:
    """The previous report inside a follow-up prompt, if there is one."""
    start = prompt.find(BEGIN)
    end = prompt.find(END)
    if start < 0 or end < start:
        return None
    return prompt[start + len(BEGIN) : end].strip("\n")
