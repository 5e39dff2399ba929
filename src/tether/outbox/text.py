"""A proposal as a person reads it before deciding (``tether outbox show``)."""

from __future__ import annotations

import shlex

from tether.outbox.model import Proposal


def describe(proposal: Proposal) -> str:
    lines = [
        f"{proposal.id}  {proposal.kind}  {proposal.state}",
        f"  what:      {proposal.headline}",
        f"  runs:      {shlex.join(proposal.argv)}",
        f"  in:        {proposal.cwd}",
        f"  run:       {proposal.run_id or '-'}",
        f"  unit:      {proposal.unit or '-'}",
        f"  proposed:  {proposal.proposed_at}",
    ]
    if proposal.message:
        lines.append(f"  message:   {proposal.message}")
    pinned = proposal.pinned or {}
    if pinned:
        lines.append(f"  pinned:    {pinned.get('commit')} ({pinned.get('src')})")
        lines.append(f"  remote:    {pinned.get('remote')} = {pinned.get('remote_url')}")
    if proposal.decided_by:
        verb = "rejected" if proposal.state == "rejected" else "approved"
        lines.append(
            f"  {verb}:  {' ' * (8 - len(verb))}by {proposal.decided_by} at {proposal.decided_at}"
        )
    if proposal.note:
        label = "reason" if proposal.state == "rejected" else "note"
        lines.append(f"  {label}:{' ' * (10 - len(label))}{proposal.note}")
    if proposal.exit_code is not None:
        lines.append(f"  exit:      {proposal.exit_code} at {proposal.finished_at}")
    for title, body in (
        ("diff summary", proposal.summary),
        ("report", proposal.report),
        ("output", proposal.output),
    ):
        if body:
            lines += ["", f"{title}:", *(f"  {line}" for line in body.rstrip().splitlines())]
    return "\n".join(lines)
