"""The fixed end lines of an ingest run (docs/reference/wiki.md#the-end-lines).

When a run ends and more units wait, it ends with the fixed line for what
waits and starts nothing itself: the entries line when sources wait, the
bundles line when bundles wait (both, entries first, when both wait), nothing
when nothing waits. The English lines are the model; a wiki in another
language may speak them in its language (``[wiki] language``), or set its own
templates (``[wiki] entries_line`` / ``bundles_line``, with ``{n}``). ``/clear``
is the context reset in every harness, so the lines name no harness.

The settings are checked when the configuration is read
(``tether.config.schema.WikiSettings``); ``templates`` checks them again, so
``ingest end`` can refuse a bad setting before it moves anything.
"""

from __future__ import annotations

from collections.abc import Mapping

from tether.core.errors import ConfigError

ENTRIES = "entries"
BUNDLES = "bundles"
KINDS = (ENTRIES, BUNDLES)  # the order the lines are printed in

TEMPLATES: dict[str, dict[str, str]] = {
    "en": {
        ENTRIES: "{n} more entries wait in incoming/. Next: /clear, then ingest.",
        BUNDLES: "{n} more bundles changed. Next: /clear, then update the captured repositories",
    },
    "de": {
        ENTRIES: "{n} weitere Einträge warten in incoming/. Weiter: /clear, dann ingest.",
        BUNDLES: "{n} weitere Bundles geändert. Weiter: /clear, dann die erfassten Repositories "
        "aktualisieren",
    },
    "vi": {
        ENTRIES: "Còn {n} mục chờ trong incoming/. Tiếp: /clear, rồi ingest.",
        BUNDLES: "{n} bundle nữa đã thay đổi. Tiếp: /clear, rồi cập nhật các repository đã capture",
    },
}
# tether.config.schema.END_LINE_LANGUAGES names these languages (a test keeps them equal)


def templates(
    language: str = "en",
    entries_line: str | None = None,
    bundles_line: str | None = None,
) -> dict[str, str]:
    """Both templates by kind: the given ones, else the language's; ConfigError naming the key."""
    given = {ENTRIES: entries_line, BUNDLES: bundles_line}
    out: dict[str, str] = {}
    for kind in KINDS:
        template = given[kind]
        if template is None:
            try:
                template = TEMPLATES[language][kind]
            except KeyError:
                known = ", ".join(sorted(TEMPLATES))
                raise ConfigError(
                    f"`wiki.language` = {language!r} has no built-in end lines (known: "
                    f"{known}); set `wiki.entries_line` and `wiki.bundles_line` (with {{n}}) "
                    f"for another language.",
                    key="wiki.language",
                ) from None
        if "{n}" not in template:
            raise ConfigError(
                f"`wiki.{kind}_line` = {template!r} has no {{n}} (where the number of waiting "
                f"units goes).",
                key=f"wiki.{kind}_line",
            )
        out[kind] = template
    return out


def end_lines(waiting: Mapping[str, int], chosen: Mapping[str, str]) -> list[str]:
    """The lines to print for ``waiting`` units by kind (entries first); none when none wait."""
    counts = {kind: waiting.get(kind, 0) for kind in KINDS}
    return [chosen[kind].replace("{n}", str(n)) for kind, n in counts.items() if n > 0]


def end_line(
    kind: str, waiting: int, *, language: str = "en", template: str | None = None
) -> str | None:
    """The one line for ``waiting`` units of ``kind``; None when none wait."""
    chosen = templates(language, **({f"{kind}_line": template} if template is not None else {}))
    lines = end_lines({kind: waiting}, chosen)
    return lines[0] if lines else None
