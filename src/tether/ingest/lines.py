"""The fixed end lines of an ingest run (SPEC B1).

When a run ends and more units wait, it ends with exactly one of these lines
and starts nothing itself. The English lines are the model; a wiki in another
language may speak them in its language (``[wiki] language``), or set its own
templates (``[wiki] entries_line`` / ``bundles_line``, with ``{n}``). ``/clear``
is the context reset in every harness, so the line names no harness.
"""

from __future__ import annotations

from tether.errors import ConfigError

ENTRIES = "entries"
BUNDLES = "bundles"

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


def end_line(
    kind: str, waiting: int, *, language: str = "en", template: str | None = None
) -> str | None:
    """The one line to print when ``waiting`` units of ``kind`` wait; None when none wait."""
    if waiting <= 0:
        return None
    if template is None:
        try:
            template = TEMPLATES[language][kind]
        except KeyError:
            known = ", ".join(sorted(TEMPLATES))
            raise ConfigError(
                f"no end line for language {language!r}; known: {known}. Set "
                f"[wiki] entries_line and bundles_line (with {{n}}) for another language.",
                key="wiki.language",
            ) from None
    if "{n}" not in template:
        raise ConfigError(
            f"the end-line template {template!r} needs {{n}} (the count)", key=f"wiki.{kind}_line"
        )
    return template.replace("{n}", str(waiting))
