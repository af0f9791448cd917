"""A build's renders on `jobs` threads, longest first.

Each task runs one manim process (a figure, or a part of one), so `jobs`
threads keep at most `jobs` processes busy. A thread that finds nothing
queued while others still run asks `idle` for work (the build hands it the
rest of a running figure), once each time a task ends or is queued. The
first task to fail stops the queue: running tasks finish, queued ones
never start, and ``run`` raises that failure.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable


class WorkQueue:
    def __init__(self, jobs: int, idle: Callable[[], Callable[[], None] | None] = lambda: None):
        self.jobs = max(1, jobs)
        self._idle = idle
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()  # equal estimates run in the order queued
        self._changed = threading.Condition()
        self._running = 0
        self._failure: BaseException | None = None

    def add(self, seconds: float, task: Callable[[], None]) -> None:
        """Queue `task`, expected to take `seconds`: the longest waiting task runs next."""
        with self._changed:
            heapq.heappush(self._heap, (-seconds, next(self._order), task))
            self._changed.notify()

    def run(self) -> None:
        """Run every task queued, and every task they queue; raise the first failure."""
        workers = [threading.Thread(target=self._work, daemon=True) for _ in range(self.jobs)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        if self._failure is not None:
            raise self._failure

    def _work(self) -> None:
        while True:
            with self._changed:
                task = None
                while task is None:
                    if self._failure is not None or not (self._heap or self._running):
                        self._changed.notify_all()
                        return
                    if self._heap:
                        task = heapq.heappop(self._heap)[2]
                    elif (task := self._idle()) is None:
                        self._changed.wait()
                self._running += 1
            try:
                task()
            except BaseException as failure:
                with self._changed:
                    self._failure = self._failure or failure
            finally:
                with self._changed:
                    self._running -= 1
                    self._changed.notify_all()
