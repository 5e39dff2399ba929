"""``tether-gate``'s command line: its usage text, exit codes and options.

Parsed by hand: argparse alone costs more than the whole count. Standard
library only (``gate/hook.py`` and ``gate/hook_status.py`` share it).
"""

from __future__ import annotations

from tether.gate import contracts

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_REFUSED = 30


USAGE = """\
usage: tether-gate hook --harness {claude-code,codex,copilot,pi,vibe} [--event NAME]
       tether-gate tick [--session ID] [--tool NAME] [--harness NAME]
       tether-gate status [--session ID] [--json]

Counts every tool call of an agent session and refuses calls once the
session's call budget is spent (see docs/reference/tether-gate.md).

  hook     read one hook payload on stdin, answer in the harness's contract
  tick     count one call for a tool wrapper: exit 0 allowed, 30 refused
  status   show calls used / budget / locked for a session
"""


class UsageError(Exception):
    pass


def parse_options(
    args: list[str], valued: tuple[str, ...], flags: tuple[str, ...] = ()
) -> dict[str, str]:
    options: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-h", "--help"):
            options["help"] = "1"
            index += 1
            continue
        name, eq, value = arg.partition("=")
        if name in valued:
            if not eq:
                index += 1
                if index >= len(args):
                    raise UsageError(f"{name} needs a value")
                value = args[index]
            if not value:
                raise UsageError(f"{name} needs a non-empty value")
            options[name[2:]] = value
        elif arg in flags:
            options[arg[2:]] = "1"
        else:
            raise UsageError(f"unknown argument {arg!r}")
        index += 1
    return options


def check_harness(name: str | None, required: bool) -> str | None:
    if name is None:
        if required:
            raise UsageError("--harness is required (" + ", ".join(contracts.HARNESSES) + ")")
        return None
    if name not in contracts.HARNESSES:
        raise UsageError(f"unknown harness {name!r}; known: " + ", ".join(contracts.HARNESSES))
    return name
