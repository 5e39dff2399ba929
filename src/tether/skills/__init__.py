"""tether's skills (``<name>/SKILL.md`` folders) and putting them where each harness loads them.

The folders beside this module are package data: one skill per workflow an agent
runs from inside its session (ingest, work-loop, room, watch).
"""

from __future__ import annotations

from tether.skills.install import (
    HARNESSES,
    SCOPES,
    SkillAction,
    SkillPlan,
    SkillsRefusedError,
    apply_plan,
    shipped_skills,
    skills_dirs,
)
from tether.skills.plan import plan_install, plan_uninstall

__all__ = [
    "HARNESSES",
    "SCOPES",
    "SkillAction",
    "SkillPlan",
    "SkillsRefusedError",
    "apply_plan",
    "plan_install",
    "plan_uninstall",
    "shipped_skills",
    "skills_dirs",
]
