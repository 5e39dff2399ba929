"""The ingest skill ships with the package and teaches the hard end."""

from __future__ import annotations

from importlib.resources import files

import yaml

from tether.ingest.lines import BUNDLES, ENTRIES, end_line


def _skill() -> str:
    return (files("tether") / "skills" / "ingest" / "SKILL.md").read_text(encoding="utf-8")


def test_skill_has_claude_code_front_matter() -> None:
    text = _skill()
    assert text.startswith("---\n")
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["name"] == "ingest"
    assert "One run is one source" in front["description"]


def test_skill_names_the_fixed_lines_and_the_hard_end() -> None:
    text = " ".join(_skill().split())
    line = end_line(ENTRIES, 4)
    assert line is not None and line in text
    assert "N more bundles changed. Next: /clear, then update the captured repositories" in text
    assert end_line(BUNDLES, 2) == (
        "2 more bundles changed. Next: /clear, then update the captured repositories"
    )
    assert "Do not start the next entry yourself" in text
    assert "tether ingest continue-here" in text
    assert "Never guess them" in text
