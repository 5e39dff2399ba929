"""The doctor's policy: which CLIs to look at, what to read, and the verdict.

Each harness ends ``enforced`` (the probe proved it), ``not enforced: <why> —
fix: <command>``, or ``not installed`` (no executable found). The why comes
from the probe first (what actually ran) and is explained by what was read
(no hook file, a hook the CLI does not trust, a folder it does not trust, a
hook that runs another tether-gate).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from tether.doctor.mirror import COPILOT_TRUST_KEYS, mirror, user_dir
from tether.doctor.model import DoctorReport, HarnessCheck, HookFile, Probe, Trust, Verdict
from tether.doctor.probe import ProbeOptions, run_probe, stop_all, timeout_for
from tether.gate import hook_inspect, hook_install

HARNESSES = hook_install.HARNESSES
VERSION_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Target:
    """One CLI to check: the harness, its executable, how it was found, its environment."""

    harness: str
    executable: str | None
    found_by: str
    environ: Mapping[str, str]


def _executable_name(harness: str) -> str:
    from tether.harnesses import get_harness

    return get_harness(harness).executable


def targets(
    harnesses: Sequence[str], environ: Mapping[str, str], project: str
) -> tuple[list[Target], list[str]]:
    """The CLIs on PATH, then those only a configured profile's PATH finds."""
    found: list[Target] = []
    notes: list[str] = []
    seen: set[tuple[str, str]] = set()
    for harness in harnesses:
        exe = shutil.which(_executable_name(harness), path=environ.get("PATH", os.defpath))
        found.append(Target(harness, exe, "PATH", environ))
        if exe:
            seen.add((harness, os.path.realpath(exe)))
    try:
        from tether.config import load_config

        profiles = list(load_config(env=environ, cwd=Path(project)).profiles.values())
    except Exception as exc:  # the doctor still checks what PATH finds
        notes.append(f"profiles not read: {exc}")
        profiles = []
    for profile in profiles:
        if profile.builtin or profile.harness not in harnesses:
            continue
        env = {**environ, **profile.env}
        exe = shutil.which(_executable_name(profile.harness), path=env.get("PATH", os.defpath))
        if exe is None or (profile.harness, os.path.realpath(exe)) in seen:
            continue
        seen.add((profile.harness, os.path.realpath(exe)))
        found.append(Target(profile.harness, exe, f"profile {profile.name}", env))
    return found, notes


def version(executable: str, environ: Mapping[str, str]) -> str | None:
    """The first line ``<cli> --version`` prints, None when it does not answer."""
    try:
        done = subprocess.run(
            [executable, "--version"],
            env=dict(environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=VERSION_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (done.stdout or done.stderr).decode("utf-8", "replace").strip()
    return text.splitlines()[0].strip() if text else None


def hook_files(harness: str, project: str, environ: Mapping[str, str]) -> list[HookFile]:
    """Where ``harness`` reads hooks (project, then user), as ``hook_install`` finds them."""
    files: list[HookFile] = []
    for scope in ("project", "user"):
        place = hook_inspect.placement(harness, scope, project, environ)
        files.append(HookFile(scope, place.path, place.present, place.current, place.error))
    return files


# --- trust ---------------------------------------------------------------------


def _under(folder: str, candidates: object) -> str | None:
    """The entry of ``candidates`` that is ``folder`` or one of its parents."""
    if not isinstance(candidates, list):
        return None
    real = os.path.realpath(folder)
    for entry in candidates:
        if isinstance(entry, str) and entry:
            base = str(Path(entry).expanduser().resolve())
            if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
                return entry
    return None


def _codex_trust(
    executable: str, project: str, environ: Mapping[str, str]
) -> tuple[list[Trust], list[str]]:
    import tomllib

    from tether.gate.codex_trust import CodexTrustError, list_hooks

    trust: list[Trust] = []
    notes: list[str] = []
    config = user_dir("codex", environ, project) / "config.toml"
    try:
        with config.open("rb") as handle:
            projects = tomllib.load(handle).get("projects", {})
    except (OSError, tomllib.TOMLDecodeError):
        projects = {}
    level = "untrusted"
    if isinstance(projects, dict):
        entry = _under(project, [k for k, v in projects.items() if isinstance(v, dict)])
        if entry is not None:
            level = str(projects[entry].get("trust_level", "untrusted"))
    trust.append(Trust("codex project", project, level))
    # Ask Codex itself, in a throwaway CODEX_HOME that holds a copy of the user's trust.
    with tempfile.TemporaryDirectory(prefix="tether-doctor-codex-trust-") as tmp:
        codex_home = Path(tmp) / ".codex"
        codex_home.mkdir()
        probe_env = {
            "PATH": environ.get("PATH", os.defpath),
            "HOME": tmp,
            "CODEX_HOME": str(codex_home),
        }
        mirror(environ, probe_env, project)
        try:
            hooks = list_hooks(executable, project, probe_env)
        except CodexTrustError as exc:
            return trust, [f"Codex's hook trust not read: {exc}"]
    for hook in hooks:
        if hook.ours:
            trust.append(Trust(f"codex {hook.source} hook", hook.key, hook.trust))
    others = sorted({h.source_path for h in hooks if not h.ours and h.source == "project"})
    for path in others:
        notes.append(
            f"{path} holds hooks other than tether's: under `tether run`, Codex runs them "
            "without trust (--dangerously-bypass-hook-trust); read them before a run"
        )
    return trust, notes


def _folder_trust(harness: str, project: str, environ: Mapping[str, str]) -> list[Trust]:
    import json
    import tomllib

    folder = user_dir(harness, environ, project)
    try:
        if harness == "copilot":
            with (folder / "config.json").open(encoding="utf-8") as handle:
                data = json.load(handle)
            listed = [f for k in COPILOT_TRUST_KEYS for f in (data.get(k) or [])]
            untrusted: list[str] = []
        else:
            with (folder / "trusted_folders.toml").open("rb") as handle:
                data = tomllib.load(handle)
            listed, untrusted = list(data.get("trusted", [])), list(data.get("untrusted", []))
    except (OSError, ValueError, AttributeError, TypeError):
        listed, untrusted = [], []
    state = "trusted" if _under(project, listed) else "untrusted"
    if harness == "vibe" and _under(project, untrusted) and state == "untrusted":
        state = "declined"
    return [Trust(f"{harness} folder", project, state)]


PI_0_NOTE = (
    "Pi 0.x (@mariozechner/pi-coding-agent): loads the project's extensions without asking; "
    "no MCP client (tether's skills reach the same operations)"
)
PI_1_NOTE = (
    "Pi 1.x (@earendil-works/pi-coding-agent): loads the project's .pi/extensions and "
    ".pi/mcp.json only in a trusted project; `tether mcp install --harness pi` registers "
    "tether's MCP server"
)


PI_PACKAGES = ("@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent")


def _pi_major(executable: str, environ: Mapping[str, str]) -> int | None:
    """Pi's major version from the package the executable belongs to (no start of Node, which
    takes seconds on a busy machine), else from ``pi --version``."""
    import json

    folder = Path(os.path.realpath(executable)).parent
    for place in (folder, *folder.parents):
        candidates = [place / "package.json"]
        candidates += [place / "node_modules" / name / "package.json" for name in PI_PACKAGES]
        for manifest in candidates:
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and data.get("name") in PI_PACKAGES:
                head = str(data.get("version", "")).split(".")[0]
                return int(head) if head.isdigit() else None
    head = (version(executable, environ) or "").strip().split(".")[0]
    return int(head) if head.isdigit() else None


def _pi_trust(
    executable: str, project: str, environ: Mapping[str, str]
) -> tuple[list[Trust], list[str]]:
    """Pi 1.x asks before it loads a project's extensions (its trust.json); Pi 0.x never."""
    import json

    major = _pi_major(executable, environ)
    if major is None or major < 1:
        return [], [PI_0_NOTE]
    folder = user_dir("pi", environ, project)
    try:
        settings = json.loads((folder / "settings.json").read_text(encoding="utf-8"))
        always = isinstance(settings, dict) and settings.get("defaultProjectTrust") == "always"
    except (OSError, ValueError):
        always = False
    try:
        saved = json.loads((folder / "trust.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        saved = {}
    state = "trusted" if always else "untrusted"
    if isinstance(saved, dict):
        # the nearest saved decision at or above the project wins, as in Pi
        here = Path(os.path.realpath(project))
        for place in (here, *here.parents):
            decision = saved.get(str(place))
            if isinstance(decision, bool):
                state = "trusted" if decision else "declined"
                break
    return [Trust("pi folder", project, state)], [PI_1_NOTE]


def trust_state(
    harness: str, executable: str, project: str, environ: Mapping[str, str]
) -> tuple[list[Trust], list[str]]:
    if harness == "codex":
        return _codex_trust(executable, project, environ)
    if harness in ("copilot", "vibe"):
        return _folder_trust(harness, project, environ), []
    if harness == "pi":
        return _pi_trust(executable, project, environ)
    return [], []


# --- the verdict ---------------------------------------------------------------


def _q(path: str) -> str:
    return shlex.quote(path)


def _install(harness: str, scope: str, project: str) -> str:
    where = "--scope user" if scope == "user" else f"--project-dir {_q(project)}"
    command = f"tether hooks install --harness {harness} {where}"
    if harness == "codex":
        command += f" && tether hooks trust --harness codex {where}"
    return command


def _explain_second_call(
    harness: str, project: str, hooks: list[HookFile], trust: list[Trust], probe: Probe
) -> tuple[str, str]:
    """Why the second call ran, from what was read; and the command that fixes it."""
    present = [h for h in hooks if h.present]
    broken = [h for h in hooks if h.error]
    if broken and not present:
        return f"{broken[0].error}", f"tether hooks install --harness {harness} --dry-run"
    states = {t.what: t for t in trust}
    if not present:
        why = "no gate hook is installed, so the second call ran"
        folder = states.get(f"{harness} folder")
        if folder is not None and folder.state != "trusted":
            # project hooks would not load in an untrusted folder: the user's scope will
            return why, _install(harness, "user", project)
        fix = _install(harness, "project", project)
        codex_project = states.get("codex project")
        if codex_project is not None and codex_project.state != "trusted":
            fix += " --trust-project"
        return why, fix
    by_scope = {h.scope: h for h in present}
    if harness == "codex":
        for hook in trust:
            if hook.what.endswith(" hook") and hook.state in ("untrusted", "modified"):
                scope = "user" if hook.what == "codex user hook" else "project"
                where = "--scope user" if scope == "user" else f"--project-dir {_q(project)}"
                path = by_scope.get(scope, present[0]).path
                return (
                    f"Codex has not trusted the gate hooks in {path} ({hook.state}), "
                    "so it skips them without a word",
                    f"tether hooks trust --harness codex {where}",
                )
        project_trust = states.get("codex project")
        if "user" not in by_scope and project_trust and project_trust.state != "trusted":
            return (
                f"Codex does not trust the project {project}, so it skips .codex/hooks.json",
                f"tether hooks trust --harness codex --project-dir {_q(project)} --trust-project",
            )
    if harness in ("copilot", "vibe", "pi") and "user" not in by_scope:
        folder = states.get(f"{harness} folder")
        if folder and folder.state != "trusted":
            name = {"copilot": "Copilot", "vibe": "Vibe", "pi": "Pi 1.x"}[harness]
            return (
                f"{name} does not trust the folder {project}, so it skips the project's hooks",
                _install(harness, "user", project),
            )
    stale = [h for h in present if not h.current]
    if stale:
        return (
            f"the hook in {stale[0].path} runs another tether-gate than this one",
            _install(harness, stale[0].scope, project),
        )
    if probe.gate_refused:
        return (
            "the gate refused the second call but the CLI ran it anyway",
            "use `tether run`, whose per-run hook holds the limit",
        )
    return (
        "the installed hook never reached the gate, so the second call ran",
        _install(harness, present[0].scope, project),
    )


def verdict(
    harness: str,
    project: str,
    hooks: list[HookFile],
    trust: list[Trust],
    probe: Probe,
    timeout: float,
) -> tuple[Verdict, str | None, str | None]:
    if probe.holds:
        return "enforced", None, None
    keep = f"tether doctor --harness {harness} --keep (keeps the probe's logs)"
    if probe.error:
        return "not enforced", f"the probe could not start the CLI: {probe.error}", keep
    if probe.timed_out:
        return (
            "not enforced",
            f"probe timed out after {timeout:g} s",
            f"tether doctor --harness {harness} --timeout {timeout * 2:g}",
        )
    if probe.model_calls == 0:
        tail = probe.stderr_tail.splitlines()[-1] if probe.stderr_tail else "no output"
        return (
            "not enforced",
            f"the CLI never reached the scripted model (exit {probe.exit_code}: {tail})",
            keep,
        )
    if probe.second_ran:
        why, fix = _explain_second_call(harness, project, hooks, trust, probe)
        return "not enforced", why, fix
    if not probe.first_ran:
        return "not enforced", "the first call did not run either", keep
    return "not enforced", "the CLI stopped before it asked for the second call", keep


def check(
    target: Target, project: str, *, timeout: float | None = None, keep: bool = False
) -> HarnessCheck:
    """One CLI, read and probed."""
    if target.executable is None:
        return HarnessCheck(target.harness, "not installed", found_by=target.found_by)
    harness, exe, env = target.harness, target.executable, target.environ
    with ThreadPoolExecutor(max_workers=2) as side:
        asked = side.submit(version, exe, env)  # some CLIs take seconds to say it
        hooks = hook_files(harness, project, env)
        trust, notes = trust_state(harness, exe, project, env)
        limit = timeout_for(harness) if timeout is None else timeout
        # the sandboxed probe runs beside the first one: a slow CLI (Vibe) costs its time once
        boxed = side.submit(sandboxed_check, harness, exe, project, env, limit, keep)
        probe = run_probe(harness, exe, project, env, ProbeOptions(limit, keep))
        outcome, why, fix = verdict(harness, project, hooks, trust, probe, limit)
        inside, line = boxed.result()
        notes = [*notes, line]
        found_version = asked.result()
    return HarnessCheck(
        harness,
        outcome,
        why,
        fix,
        executable=exe,
        found_by=target.found_by,
        version=found_version,
        hooks=hooks,
        trust=trust,
        probe=probe,
        notes=notes,
        sandboxed_probe=inside,
    )


def sandboxed_check(
    harness: str, exe: str, project: str, env: Mapping[str, str], limit: float, keep: bool
) -> tuple[Probe | None, str]:
    """The probe inside tether's sandbox, and the line that says whether runs work there."""
    from tether.doctor.sandboxed import unavailable

    why = unavailable()
    if why is not None:
        return None, f"sandboxed probe: no sandbox can start here: {why}"
    inside = run_probe(harness, exe, project, env, ProbeOptions(limit, keep, sandbox=True))
    if inside.holds:
        return inside, "sandboxed probe: works (call 2 refused through the run's gate socket)"
    found, reason, fix = verdict(harness, project, [], [], inside, limit)
    text = f"sandboxed probe: fails: {reason or found}"
    return inside, f"{text} — fix: {fix}" if fix else text


def _ignore(_: object) -> None:
    return None


@dataclass(frozen=True)
class Progress:
    """Who hears how far a doctor run is: the probes take seconds each, and a person
    waiting is told what will be checked and each check as it ends."""

    started: Callable[[list[Target]], None] = _ignore
    done: Callable[[HarnessCheck], None] = _ignore  # in the order the checks end


def run_doctor(
    project: str,
    environ: Mapping[str, str],
    harnesses: Sequence[str] = HARNESSES,
    *,
    timeout: float | None = None,
    keep: bool = False,
    progress: Progress = Progress(),
) -> DoctorReport:
    """Every CLI found, checked side by side (each probe in its own folders)."""
    found, notes = targets(harnesses, environ, project)
    progress.started(found)
    with ThreadPoolExecutor(max_workers=max(1, len(found))) as pool:
        try:
            futures = [
                pool.submit(check, target, project, timeout=timeout, keep=keep) for target in found
            ]
            for done in as_completed(futures):
                progress.done(done.result())
            checks = [future.result() for future in futures]
        except BaseException:
            stop_all()  # Ctrl-C: no probe's CLI is left running until its timeout
            raise
    return DoctorReport(project, checks, notes)
