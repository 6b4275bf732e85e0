"""Runs one scenario against the participant's fixed `limiter.py` and prints the outcome as JSON.
The tests start this in a child process, so the code under test never runs inside pytest."""

import importlib.util
import json
import os
import sys
import threading
import time


def load():
    path = os.path.join(os.environ.get("MULTICOOKER_OUTPUT", "/work/output"), "limiter.py")
    spec = importlib.util.spec_from_file_location("limiter", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def exact_cost(limiter):
    return limiter.TokenBucket(rate=0.0, capacity=1).allow(1)


def concurrent(limiter):
    bucket = limiter.TokenBucket(rate=0.0, capacity=10)
    allowed = []
    barrier = threading.Barrier(50)

    def worker():
        barrier.wait()
        allowed.append(bucket.allow())

    threads = [threading.Thread(target=worker) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(allowed)


def clock_back(limiter):
    # Wall-clock time jumps back an hour between two calls: a limiter on a monotonic clock is
    # unaffected; one on time.time() may grant nothing, or a negative refill.
    bucket = limiter.TokenBucket(rate=1.0, capacity=2)
    real = time.time
    start = real()
    time.time = lambda: start - 3600.0
    try:
        return [bucket.allow() for _ in range(3)]
    finally:
        time.time = real


SCENARIOS = {"exact_cost": exact_cost, "concurrent": concurrent, "clock_back": clock_back}

if __name__ == "__main__":
    print(json.dumps(SCENARIOS[sys.argv[1]](load())))
