"""Whether a run's supervisor still lives (its pid, with the start time it recorded).

Apart from ``recovery`` so that a reader (``tether status``) can ask without
loading the harnesses and the event parser that recovery needs. On Linux the
answer comes from ``/proc`` (``gate.proc``), which a fresh ``tether status``
reads faster than it could import psutil (bench/status.py); psutil elsewhere.
"""

from __future__ import annotations

from tether.core.process_tree import has_proc, start_time
from tether.store.runs import RunRow


def supervisor_alive(row: RunRow) -> bool:
    if row.supervisor_pid is None:
        return False
    if has_proc():  # Linux: without loading psutil
        started = start_time(row.supervisor_pid)
        recorded = row.supervisor_start_time
        return started is not None and (recorded is None or abs(started - recorded) < 1.0)
    import psutil

    try:
        proc = psutil.Process(row.supervisor_pid)
        if row.supervisor_start_time is not None:
            return abs(proc.create_time() - row.supervisor_start_time) < 1.0
        return proc.is_running()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
