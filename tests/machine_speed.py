"""How fast this machine runs Python right now, printed at the head of `.ci/run`'s log.

    python tests/machine_speed.py

The suite's wall time moves with the machine as much as with the code: on this shared 2-core
machine the same commit's run has taken a third longer on one day than on the day before. A
fixed pure-Python loop, timed in CPU seconds (best of five, so one preempted try does not count),
and the load average beside it are a rough gauge for comparing two CI logs. `.ci/run` prints it
before each part. Measured 2026-12-06 05:16 UTC, four times in a minute on an idle machine (load
0.8): 0.197, 0.286, 0.298, 0.294 s. Over four CI runs that day it did not track the suite's time
well (0.175–0.253 s beside 20:55, 0.183–0.202 s beside 22:28): a few seconds' probe sees the CPU's
speed at that moment, not the neighbours' pressure over twenty minutes.
"""

import os
import time


def loop_seconds(iterations: int = 3_000_000) -> float:
    started = time.process_time()
    total = 0
    for number in range(iterations):
        total += number * number
    return time.process_time() - started


if __name__ == "__main__":
    best = min(loop_seconds() for _ in range(5))
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"machine speed: a three-million-step Python loop in {best:.3f} s of CPU (best of 5); "
          f"load average {load}")
