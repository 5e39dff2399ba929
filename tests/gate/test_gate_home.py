"""Where the gate's state lives and which budget a new session gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.core.project import default_call_budget, resolve_home


def test_home_from_the_variable_the_project_or_the_working_folder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src" / "deep").mkdir(parents=True)
    deep = str(project / "src" / "deep")
    assert resolve_home({}, deep) == str(project / "src" / "deep" / ".tether")  # no project
    (project / "tether.toml").write_text("iteration_limit = 5\n")
    assert resolve_home({}, deep) == str(project / ".tether")
    (project / "tether.toml").write_text('home = "state/tether"\n')
    assert resolve_home({}, deep) == str(project / "state" / "tether")
    assert resolve_home({"TETHER_HOME": "/abs/home"}, deep) == "/abs/home"
    assert resolve_home({"TETHER_HOME": "rel"}, deep) == str(project / "src" / "deep" / "rel")


def test_budget_order_variable_then_file_then_60(tmp_path: Path) -> None:
    assert default_call_budget({}, str(tmp_path)) == (60, "default")
    config = tmp_path / "tether.toml"
    config.write_text("[gate]\nbudget = 9\n")
    assert default_call_budget({}, str(tmp_path)) == (9, f"config:{config}")
    config.write_text("gate_budget = 12\n")
    assert default_call_budget({}, str(tmp_path)) == (12, f"config:{config}")
    env = {"TETHER_GATE_BUDGET": "30"}
    assert default_call_budget(env, str(tmp_path)) == (30, "env:TETHER_GATE_BUDGET")


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        ("gate_budget = 0\n", "must be >= 1"),
        ('gate_budget = "lots"\n', "must be a whole number"),
        ("gate_budget = true\n", "must be a whole number"),
        ("gate_budget = [\n", "cannot read"),
    ],
)
def test_a_bad_budget_in_the_file_warns_and_falls_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, warning: str
) -> None:
    (tmp_path / "tether.toml").write_text(text)
    assert default_call_budget({}, str(tmp_path)) == (60, "default")
    assert warning in capsys.readouterr().err
