"""Chrome trace-event JSON (what Perfetto and chrome://tracing open): the pieces every simulated timeline
is written in, so the pipeline schedules and the serving simulator publish one format."""

from __future__ import annotations


def process(pid: int, name: str, threads: tuple[str, ...] = ("compute",)) -> list[dict]:
    """A process's metadata: its name, its place in the list (its pid) and its threads' names, tid 0 up."""
    return [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}},
        {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}},
        *(
            {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": thread}}
            for tid, thread in enumerate(threads)
        ),
    ]


def span(name: str, cat: str, pid: int, tid: int, ts: float, dur: float, args: dict) -> dict:
    """One complete event ("ph": "X"): a block of work or of waiting, `ts` and `dur` in microseconds."""
    return {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def document(events: list[dict], about: dict) -> dict:
    """The whole trace: its events, shown in milliseconds, and what it is a trace of."""
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": about}
