"""The Pi wake extension: lets the watchdog start a turn in an idle Pi session.

Pi loads TypeScript extensions from ``.pi/extensions/`` (project) and
``~/.pi/agent/extensions/`` (user). This one, ``tether-watch.ts``, is separate
from the gate's extension (``tether hooks install --harness pi`` writes
``tether-gate.ts``); either works without the other.

It announces the Pi process as a wake endpoint (see ``endpoints``) with Pi's
own view of its activity — the time of its last agent, turn, message or tool
event, and ``ctx.isIdle()`` — and polls for a wake request once a second. A
request becomes ``pi.sendUserMessage(text)``, which always starts a turn (with
``deliverAs: "followUp"`` while Pi is streaming), plus a ``ctx.ui.notify``
for the human; then an acknowledgement file is written.

The extension finds tether's home like the gate does: ``$TETHER_HOME``, else
the home baked in when it was written (``tether watch pi-extension`` bakes in
the home tether resolves for the project; for ``--scope user`` only an
explicit ``$TETHER_HOME``, since one user-wide file serves every project),
else the top-level ``home = "…"`` of the nearest ``tether.toml`` above Pi's
working directory (relative to that file's folder), else ``.tether`` next to
that file, else ``.tether`` in the working directory.
"""

from __future__ import annotations

import json
from pathlib import Path

MARKER = "tether-watch extension"
FILE_NAME = "tether-watch.ts"
POLL_MS = 1000

_TEMPLATE = """\
// __MARKER__: written by `tether watch pi-extension --install`.
// Lets tether's watchdog wake this Pi session while a subagent runs: a wake
// request becomes pi.sendUserMessage(), which starts a turn.
// Remove this file to turn it off.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const POLL_MS = __POLL_MS__;
const BAKED_HOME: string | null = __HOME__;

// The top-level `home = "..."` of a tether.toml (before its first [table]):
// a small reading of that one key, not a TOML parser.
function configuredHome(root: string): string | null {
  let text: string;
  try {
    text = fs.readFileSync(path.join(root, "tether.toml"), "utf8");
  } catch {
    return null;
  }
  const top = text.split(/^\\s*\\[/m)[0];
  const found = top.match(/^\\s*home\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|'([^']*)')\\s*(?:#.*)?$/m);
  if (!found) return null;
  let value = found[2] ?? found[1];
  if (found[1] !== undefined) {
    try {
      value = JSON.parse(`"${found[1]}"`);
    } catch {
      // an escape JSON does not know: take it as written
    }
  }
  if (!value) return null;
  if (value === "~" || value.startsWith("~/")) value = path.join(os.homedir(), value.slice(1));
  return path.resolve(root, value);
}

// The project root as tether finds it (tether.core.project.find_project_root): the
// nearest folder at or above cwd holding a tether.toml file.
function tetherHome(cwd: string): string {
  if (process.env.TETHER_HOME) return path.resolve(cwd, process.env.TETHER_HOME);
  if (BAKED_HOME) return BAKED_HOME;
  let dir = path.resolve(cwd);
  for (let i = 0; i < 64; i++) {
    if (fs.statSync(path.join(dir, "tether.toml"), { throwIfNoEntry: false })?.isFile()) {
      return configuredHome(dir) ?? path.join(dir, ".tether");
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return path.join(path.resolve(cwd), ".tether");
}

function writeJson(file: string, data: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(data));
  fs.renameSync(tmp, file);
}

export default function (pi: any) {
  const home = tetherHome(process.cwd());
  const key = `pi-${process.pid}`;
  const endpointFile = path.join(home, "watch", "endpoints", `${key}.json`);
  const requestFile = path.join(home, "watch", "requests", `${key}.json`);
  const registered = Date.now() / 1000;
  let ctxRef: any = undefined;
  let sessionId: string | null = null;
  let lastActivity = registered;
  let idle = true;
  let lastWrite = 0;

  function announce(force: boolean): void {
    const now = Date.now();
    if (!force && now - lastWrite < 1000) return;
    lastWrite = now;
    let cwd = process.cwd();
    try {
      cwd = ctxRef?.cwd ?? cwd;
    } catch {
      // a stale ctx
    }
    try {
      writeJson(endpointFile, {
        kind: "pi",
        pid: process.pid,
        agent_pid: process.pid,
        session_id: sessionId,
        cwd,
        tmux_pane: process.env.TMUX_PANE ?? null,
        registered,
        updated: now / 1000,
        last_activity: lastActivity,
        idle,
      });
    } catch {
      // the watchdog is optional: never disturb Pi
    }
  }

  function seen(ctx: any, busy: boolean | undefined): void {
    if (ctx) ctxRef = ctx;
    try {
      sessionId = ctxRef?.sessionManager?.getSessionId?.() ?? sessionId;
    } catch {
      // no session id yet
    }
    lastActivity = Date.now() / 1000;
    if (busy !== undefined) {
      idle = !busy;
    } else {
      try {
        idle = ctxRef?.isIdle?.() ?? idle;
      } catch {
        // keep the last known state
      }
    }
    announce(busy !== undefined);
  }

  pi.on("session_start", async (_event: any, ctx: any) => seen(ctx, false));
  pi.on("agent_start", async (_event: any, ctx: any) => seen(ctx, true));
  pi.on("agent_end", async (_event: any, ctx: any) => seen(ctx, false));
  for (const name of [
    "turn_start",
    "turn_end",
    "message_start",
    "message_end",
    "tool_execution_start",
    "tool_execution_end",
    "input",
  ]) {
    pi.on(name, async (_event: any, ctx: any) => seen(ctx, undefined));
  }
  pi.on("session_shutdown", async () => {
    clearInterval(timer);
    try {
      fs.unlinkSync(endpointFile);
    } catch {
      // already gone
    }
  });

  const timer = setInterval(() => {
    const taken = `${requestFile}.taken-${process.pid}`;
    try {
      fs.renameSync(requestFile, taken);
    } catch {
      return; // no request
    }
    let text: unknown;
    let id: unknown;
    try {
      const data = JSON.parse(fs.readFileSync(taken, "utf8"));
      text = data?.text;
      id = data?.id;
    } catch {
      // unreadable request: dropped
    }
    try {
      fs.unlinkSync(taken);
    } catch {
      // already gone
    }
    if (typeof text !== "string" || !text) return;
    let streaming = !idle;
    try {
      if (ctxRef) streaming = !ctxRef.isIdle();
    } catch {
      // a stale ctx: keep the last known state
    }
    try {
      if (streaming) pi.sendUserMessage(text, { deliverAs: "followUp" });
      else pi.sendUserMessage(text);
      try {
        ctxRef?.ui?.notify?.("tether watch: a subagent needs attention", "warning");
      } catch {
        // no UI
      }
      if (typeof id === "string") {
        writeJson(path.join(home, "watch", "acks", `${id}.json`), {
          id,
          delivered_at: Date.now() / 1000,
          how: streaming ? "sendUserMessage (followUp)" : "sendUserMessage",
        });
      }
    } catch (err) {
      process.stderr.write(`tether watch: could not wake this session: ${err}\\n`);
    }
  }, POLL_MS);
  timer.unref?.();
  announce(true);
}
"""


def render(home: Path | None = None, poll_ms: int = POLL_MS) -> str:
    """The extension source; ``home`` (absolute) is baked in as the fallback tether home."""
    return (
        _TEMPLATE.replace("__MARKER__", MARKER)
        .replace("__POLL_MS__", str(int(poll_ms)))
        .replace("__HOME__", json.dumps(None if home is None else str(home)))
    )


def baked_home(scope: str, config_home: Path, explicit: str | None) -> Path | None:
    """The home to bake in: the project's for ``--scope project``; for ``user`` only an
    explicit ``$TETHER_HOME`` (one user-wide file serves every project)."""
    if scope == "project" or explicit:
        return Path(config_home).expanduser().resolve()
    return None


def install_path(scope: str, project_dir: Path, env_home: str | None, pi_dir: str | None) -> Path:
    """Where the extension goes: beside the gate's ``tether-gate.ts``."""
    if scope == "project":
        return project_dir / ".pi" / "extensions" / FILE_NAME
    base = Path(pi_dir) if pi_dir else Path(env_home or Path.home()) / ".pi" / "agent"
    return base / "extensions" / FILE_NAME
