"""The machine a bench ran on, in one line: how fast it runs plain Python, and how loaded it was.

The goals of the page and search benches are times "on this machine", and the machines these
benches run on differ by half again in speed. Each bench prints this line beside its figures, so a
figure can be read against the machine's own pace (a ratio to the loop's time) when two runs were
made on different machines.
"""

from __future__ import annotations

import os
import time

LOOP = 10_000_000


def machine_line() -> str:
    """'machine: a Python loop of 10,000,000 additions takes X s (best of 3); load average L'."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for number in range(LOOP):
            total += number
        best = min(best, time.perf_counter() - started)
    return f"machine: a Python loop of {LOOP:,} additions takes {best:.2f} s (best of 3); load average {os.getloadavg()[0]:.2f}"
