"""The Pi extension that puts the gate in front of every Pi tool call.

Pi has no command hooks; it loads TypeScript extensions from
``.pi/extensions/`` (project) and ``~/.pi/agent/extensions/`` (user). This one
asks ``tether-gate hook --harness pi`` on each ``tool_call`` event and blocks the
call when the gate refuses it; it reports each ``turn_end`` with tool results as
one iteration, asks before every model request whether the iteration budget is
used (and aborts the agent if so), and records the other lifecycle events for
the watchdog.
"""

from __future__ import annotations

import json

from tether.gate.runstop import STOPPING_FILE

MARKER = "tether-gate extension"

_TEMPLATE = """\
// __MARKER__: written by `tether hooks install --harness pi`.
// Every tool call asks tether's call-budget gate first; a refused call is blocked.
// Remove with `tether hooks uninstall --harness pi`.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

const GATE: string[] = __ARGV__;
const TIMEOUT_MS = 30000;

type Answer = { block?: boolean; stop?: boolean; reason?: string; warning?: string };

// Under `tether run`: true once the supervisor has begun to stop the run. A gate
// that gave no answer then is no reason to let a call through.
function stopping(): boolean {
  const home = process.env.TETHER_HOME;
  const run = process.env.TETHER_RUN_ID;
  if (!home || !run || run.includes("/")) return false;
  try {
    return existsSync(join(home, "runs", run, "__STOPPING__"));
  } catch {
    return false;
  }
}

function ask(payload: Record<string, unknown>): Promise<Answer> {
  return new Promise((resolve) => {
    const child = execFile(
      GATE[0],
      [...GATE.slice(1), "hook", "--harness", "pi"],
      { timeout: TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 },
      (error, stdout) => {
        const text = String(stdout ?? "").trim();
        if (text) {
          try {
            resolve(JSON.parse(text) as Answer);
            return;
          } catch {
            // fall through: an unreadable answer is a broken gate
          }
        }
        // A gate killed by a signal, or any failure while the run is being
        // stopped, refuses: a stop in progress never turns into an allow.
        if ((error && (error as any).signal) || stopping()) {
          resolve({ block: true, stop: true, reason: "tether: call refused; the run is stopping" });
          return;
        }
        if (error && !text) {
          process.stderr.write(
            `tether-gate: warning: the gate did not answer (${error.message}); not counted\\n`,
          );
        }
        resolve({});
      },
    );
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(JSON.stringify(payload));
  });
}

// A ctx can be stale (after a session switch or at shutdown): read it defensively.
function where(ctx: any): { session_id?: string; cwd?: string; transcript_path?: string } {
  const out: { session_id?: string; cwd?: string; transcript_path?: string } = {};
  try {
    out.session_id = ctx?.sessionManager?.getSessionId?.() ?? undefined;
  } catch {
    // no session id: the gate falls back to the agent process
  }
  try {
    out.transcript_path = ctx?.sessionManager?.getSessionFile?.() ?? undefined;
  } catch {
    // an in-memory session has no file
  }
  try {
    out.cwd = ctx?.cwd;
  } catch {
    // no cwd
  }
  return out;
}

function warn(answer: Answer): void {
  if (answer.warning) process.stderr.write(`${answer.warning}\\n`);
}

export default function (pi: any) {
  pi.on("tool_call", async (event: any, ctx: any) => {
    const answer = await ask({
      hook_event_name: "tool_call",
      ...where(ctx),
      tool_name: event?.toolName,
      tool_use_id: event?.toolCallId,
      tool_input: event?.input,
    });
    warn(answer);
    if (answer.block) return { block: true, reason: answer.reason ?? "tether: call refused" };
    return undefined;
  });

  pi.on("turn_end", async (event: any, ctx: any) => {
    const results: any[] = Array.isArray(event?.toolResults) ? event.toolResults : [];
    const ids = results.map((r) => r?.toolCallId).filter((id) => typeof id === "string");
    const answer = await ask({
      hook_event_name: results.length > 0 ? "turn_end" : "turn_end_text",
      ...where(ctx),
      turn_key: ids.length > 0 ? `turn:${ids.join(",")}` : undefined,
    });
    warn(answer);
  });

  // Asked before every model request, so a spent iteration budget stops Pi
  // before its next model call rather than after it.
  pi.on("before_provider_request", async (_event: any, ctx: any) => {
    const answer = await ask({ hook_event_name: "model_request", ...where(ctx) });
    warn(answer);
    if (answer.stop) {
      process.stderr.write(`${answer.reason ?? "tether: iteration limit reached"}\\n`);
      try {
        ctx?.abort?.();
      } catch {
        // the session is already gone
      }
    }
    return undefined;
  });

  for (const name of ["session_start", "agent_start", "agent_end", "session_shutdown"]) {
    pi.on(name, async (_event: any, ctx: any) => {
      warn(await ask({ hook_event_name: name, ...where(ctx) }));
    });
  }
}
"""


def render(gate_argv: list[str]) -> str:
    """The extension source, calling the gate through ``gate_argv``."""
    return (
        _TEMPLATE.replace("__MARKER__", MARKER)
        .replace("__ARGV__", json.dumps(gate_argv))
        .replace("__STOPPING__", STOPPING_FILE)
    )
