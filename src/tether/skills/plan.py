"""Which copies of tether's skills an install or uninstall creates, keeps or removes.

One copy per skill per harness, whatever the order of the commands: a harness
that already loads tether's copy of a skill from a folder other harnesses load
too (``.agents/skills``, ``.claude/skills``) is ``covered`` by it; a copy in a
folder only that harness loads (``.pi/skills``) is removed once a shared copy
serves it, so Pi never finds a skill twice (it reports that as a name
collision). Copilot is the exception no layout avoids: it loads both
``.claude/skills`` (Claude Code's only folder) and ``.agents/skills`` (Codex's
only folder), and takes the first copy of a name.

Each copy's marker lists the harnesses it serves. Uninstalling for one harness
takes that harness off the list and removes the copy only when no harness is
left on it: ``tether skills uninstall --harness copilot`` never removes what
Claude Code or Codex load. A copy an older tether wrote (no list) serves the
harness whose first folder it is in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from tether.skills.install import (
    ABSENT,
    COVERED,
    CREATE,
    HARNESSES,
    KEEP,
    REFUSE,
    REMOVE,
    UNCHANGED,
    UPDATE,
    Skill,
    SkillAction,
    SkillPlan,
    current,
    install_action,
    marker_users,
    ownership,
    shipped_skills,
    skills_dirs,
)

Loads = dict[str, list[Path]]


def _loads(scope: str, project_dir: Path, env: Mapping[str, str] | None) -> Loads:
    return {h: skills_dirs(h, scope, project_dir, env) for h in HARNESSES}


def _exclusive(folder: Path, harness: str, loads: Loads) -> bool:
    return not any(folder in dirs for other, dirs in loads.items() if other != harness)


def _users(copy: Path, loads: Loads) -> set[str]:
    recorded = marker_users(copy)
    if recorded is not None:
        return set(recorded)
    return {h for h, dirs in loads.items() if dirs[0] / copy.name == copy}


def _on_disk(names: Iterable[str], loads: Loads) -> tuple[dict[Path, set[str]], dict[Path, str]]:
    """tether's untouched copies (with the harnesses they serve) and the folders in the way."""
    ours: dict[Path, set[str]] = {}
    strangers: dict[Path, str] = {}
    folders = dict.fromkeys(d for dirs in loads.values() for d in dirs)
    for folder in folders:
        for name in names:
            copy = folder / name
            if not copy.exists() and not copy.is_symlink():
                continue
            mine, why = ownership(copy)
            if mine:
                ours[copy] = _users(copy, loads)
            else:
                strangers[copy] = why
    return ours, strangers


def _dedupe(after: dict[Path, set[str]], names: Iterable[str], loads: Loads) -> None:
    """Remove a harness's own-folder copy of a skill it also loads from a shared folder."""
    for harness, dirs in loads.items():
        for name in names:
            holders = [d / name for d in dirs if d / name in after]
            shared = [c for c in holders if not _exclusive(c.parent, harness, loads)]
            if not shared:
                continue
            for copy in holders:
                if _exclusive(copy.parent, harness, loads) and after[copy] <= {harness}:
                    del after[copy]
                    after[shared[0]].add(harness)


def plan_install(
    harnesses: Iterable[str],
    scope: str,
    project_dir: Path,
    env: Mapping[str, str] | None = None,
) -> SkillPlan:
    """What installing every shipped skill for ``harnesses`` would do."""
    skills = {s.name: s for s in shipped_skills()}
    plan = SkillPlan(install=True, skills=skills)
    loads = _loads(scope, project_dir, env)
    before, strangers = _on_disk(skills, loads)
    after = {copy: set(users) for copy, users in before.items()}
    shown: dict[Path, str] = {}  # a harness's own folder: the harness whose line shows it
    for harness in harnesses:
        for name in skills:
            target = loads[harness][0] / name
            cover = next(
                (
                    d / name
                    for d in loads[harness]
                    if d / name in after and not _exclusive(d, harness, loads)
                ),
                None,
            )
            chosen = target if target in after or cover is None else cover
            if chosen in strangers:
                plan.actions.append(SkillAction(harness, name, chosen, REFUSE, strangers[chosen]))
                continue
            after.setdefault(chosen, set()).add(harness)
            if chosen == target:
                shown.setdefault(chosen, harness)
            else:
                plan.actions.append(
                    SkillAction(harness, name, chosen, COVERED, "loaded from there")
                )
    _dedupe(after, skills, loads)
    for copy, users in after.items():
        action = install_action(shown.get(copy, "-"), skills[copy.name], copy, tuple(sorted(users)))
        if copy in shown or action.action != UNCHANGED:
            plan.actions.append(action)
    for copy in before.keys() - after.keys():
        owner = next(h for h, dirs in loads.items() if copy.parent in dirs)
        reason = f"{owner} loads a shared copy instead"
        plan.actions.append(SkillAction(owner, copy.name, copy, REMOVE, reason))
    plan.actions.sort(key=_order)
    return plan


def plan_uninstall(
    harnesses: Iterable[str],
    scope: str,
    project_dir: Path,
    env: Mapping[str, str] | None = None,
) -> SkillPlan:
    """What taking tether's skills away from ``harnesses`` would do: each copy loses those
    harnesses, and goes when it serves none."""
    names = [s.name for s in shipped_skills()]
    plan = SkillPlan(install=False)
    loads = _loads(scope, project_dir, env)
    ours, strangers = _on_disk(names, loads)
    leaving = set(harnesses)
    for copy, why in strangers.items():
        # tether's copy, changed by hand since: neither removed nor left as if it were gone
        if why.startswith("changed") and leaving & _users(copy, loads):
            who = _first(leaving, copy, loads)
            plan.actions.append(SkillAction(who, copy.name, copy, REFUSE, why))
    for copy, users in ours.items():
        gone = users & leaving
        if not gone:
            continue
        rest = tuple(sorted(users - leaving))
        who = sorted(gone)[0]
        if rest:
            reason = f"still loaded by {', '.join(rest)}"
            plan.actions.append(SkillAction(who, copy.name, copy, KEEP, reason, rest))
        else:
            plan.actions.append(SkillAction(who, copy.name, copy, REMOVE))
    plan.actions.sort(key=_order)
    return plan


def _first(leaving: set[str], copy: Path, loads: Loads) -> str:
    return next((h for h in sorted(leaving) if copy.parent in loads[h]), sorted(leaving)[0])


_RANK = {REFUSE: 0, CREATE: 1, UPDATE: 1, UNCHANGED: 1, KEEP: 2, COVERED: 3, REMOVE: 4, ABSENT: 5}


def _order(action: SkillAction) -> tuple[int, str, str]:
    return (_RANK.get(action.action, 9), str(action.folder.parent), action.skill)


__all__ = ["Skill", "current", "plan_install", "plan_uninstall"]
