"""The gate's entries in Vibe's hooks.toml: one block between marker comments.

The user's text is kept byte for byte (comments included); tether's block is
cut out and written again. A file that is not valid TOML, or whose ``hooks``
is not an array of tables, is refused untouched.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable

from tether.gate.hook_command import HOOK_TIMEOUT_S, hook_argv
from tether.gate.hook_file import Change, InstallError, read_text

# Vibe: pre_tool decides; post_tool and post_agent are recorded for the watchdog.
VIBE_EVENTS = ("pre_tool", "post_tool", "post_agent")
VIBE_BEGIN = (
    "# >>> tether-gate: written by `tether hooks install`; `tether hooks uninstall` removes it"
)
VIBE_END = "# <<< tether-gate"


def vibe_block(gate: list[str], events: Iterable[str] = VIBE_EVENTS) -> str:
    """tether's ``[[hooks]]`` entries for Vibe's hooks.toml, between marker comments."""
    lines = [VIBE_BEGIN]
    for event in events:
        command = shlex.join(hook_argv(gate, "vibe"))
        lines += [
            "[[hooks]]",
            f"name = {json.dumps('tether-gate-' + event.replace('_', '-'))}",
            f'type = "{event}"',
            f"command = {json.dumps(command)}",
            f"timeout = {float(HOOK_TIMEOUT_S)}",
        ]
    lines.append(VIBE_END)
    return "\n".join(lines) + "\n"


def _strip_ours_vibe(text: str) -> str:
    """The file without tether's marked block(s)."""
    kept: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped == VIBE_BEGIN:
            inside = True
        elif inside and stripped == VIBE_END:
            inside = False
        elif not inside:
            kept.append(line)
    return "".join(kept)


def _check_vibe_toml(path: str, text: str, what: str) -> None:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(
            f"{path}: {what} is not valid TOML ({exc}); fix or move it, then install again. "
            f"Nothing was written."
        ) from None
    hooks = data.get("hooks", [])
    if not isinstance(hooks, list) or not all(isinstance(h, dict) for h in hooks):
        raise InstallError(
            f'{path}: "hooks" is not a list of [[hooks]] tables; fix it by hand, then install '
            f"again. Nothing was written."
        )


def merge_vibe_hooks(path: str, before: str | None, block: str | None) -> str | None:
    """Vibe's hooks.toml with tether's block replaced (``None`` block: removed).

    The user's text is kept byte for byte (comments included). A file that is
    not valid TOML, or whose ``hooks`` is not an array of tables (an inline
    ``hooks = [...]`` cannot be appended to), is refused untouched.
    """
    if before is not None:
        _check_vibe_toml(path, before, "the file")
    # The blank line tether puts before its block goes with it.
    rest = _strip_ours_vibe(before or "").rstrip("\n")
    if not rest.strip():
        rest = ""
    if block is None:
        return rest + "\n" if rest else None
    after = (rest + "\n\n" if rest else "") + block
    _check_vibe_toml(path, after, "the file with the gate added")
    return after


def vibe_change(path: str, gate: list[str] | None) -> Change:
    """Vibe's hooks.toml with tether's block replaced (``None`` gate: removed)."""
    before = read_text(path)
    block = vibe_block(gate) if gate is not None else None
    return Change(path, before, merge_vibe_hooks(path, before, block))
