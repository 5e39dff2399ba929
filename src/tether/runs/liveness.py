"""Whether a run's supervisor still lives (its pid, with the start time it recorded).

Apart from ``recovery`` so that a reader (``tether status``) can ask without
loading the harnesses and the event parser that recovery needs.
"""

from __future__ import annotations

import psutil

from tether.store.runs import RunRow


def supervisor_alive(row: RunRow) -> bool:
    if row.supervisor_pid is None:
        return False
    try:
        proc = psutil.Process(row.supervisor_pid)
        if row.supervisor_start_time is not None:
            return abs(proc.create_time() - row.supervisor_start_time) < 1.0
        return proc.is_running()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
