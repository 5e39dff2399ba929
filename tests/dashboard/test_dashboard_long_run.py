"""A long run's page over HTTP: the latest events, a downsampled series, only new lines parsed.

The run's ``events.jsonl`` holds Claude Code stream lines (what the real CLI
prints, see tests/transcripts/): a text and a tool call per step and the
call's result. The page must show the *latest* timeline entries with the
total, at most ``SERIES_POINTS`` points per series whose last point is exact,
and after the run appends lines, the new totals.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.dashboard.support import Dashboard
from tests.status.world import World, add_run, at

from tether.dashboard.runview import SERIES_POINTS, TIMELINE_MAX
from tether.runs.record import RunPaths

RUN = "r-20260302-092500-long00"


def steps(first: int, last: int) -> str:
    lines = []
    for n in range(first, last + 1):
        lines.append(
            {
                "type": "assistant",
                "message": {
                    "id": f"m{n}",
                    "content": [
                        {"type": "text", "text": f"step {n}"},
                        {"type": "tool_use", "id": f"c{n}", "name": "Bash", "input": {"n": n}},
                    ],
                    "usage": {"input_tokens": 10, "output_tokens": 2},
                },
            }
        )
        lines.append(
            {
                "type": "user",
                "message": {
                    "content": [{"type": "tool_result", "tool_use_id": f"c{n}", "content": "ok"}]
                },
            }
        )
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_a_long_run_shows_its_latest_events_and_grows_by_its_new_lines(
    world: World, dashboard: Dashboard
) -> None:
    row = add_run(world.home, RUN, harness="claude-code", argv=[], started_at=at(2))
    events = RunPaths(Path(row.run_dir)).events
    events.write_text(steps(1, 1500), encoding="utf-8")

    code, body = dashboard.get(f"/api/runs/{RUN}")
    page = json.loads(body)
    assert code == 200
    total = page["timeline_total"]
    assert total > TIMELINE_MAX and len(page["timeline"]) == TIMELINE_MAX
    last = page["timeline"][-1]
    assert last["kind"] == "tool_result" and last["n"] == page["series"]["event"][-1]
    assert page["timeline"][0]["n"] > 1  # the first events gave way to the latest
    series = page["series"]
    assert len(series["event"]) <= SERIES_POINTS < series["total_events"]
    assert series["tool_calls"][-1] == 1500 and series["iterations"][-1] == 1500
    assert page["budget"]["tokens"] == series["tokens"][-1] > 0  # the stream's, no record yet

    with events.open("a", encoding="utf-8") as f:
        f.write(steps(1501, 1510))
        f.write('{"type": "assistant", "message": {"id": "m-half')  # still being written
    page = json.loads(dashboard.get(f"/api/runs/{RUN}")[1])
    assert page["series"]["tool_calls"][-1] == 1510
    assert page["timeline_total"] == total + 30  # ten steps: start, call, result each
    assert page["timeline"][-1]["n"] == page["series"]["event"][-1]
