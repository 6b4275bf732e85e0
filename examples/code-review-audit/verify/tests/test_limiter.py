"""Hidden tests of the fixed `out/limiter.py` (BRIEF.md): each scenario runs in a child process
(`harness.py`) with a timeout; nothing of the participant's code is imported here."""

import json
import os
import subprocess
import sys

HARNESS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "harness.py")


def scenario(name):
    result = subprocess.run(
        [sys.executable, HARNESS, name], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_request_costing_exactly_the_tokens_left_is_allowed():
    assert scenario("exact_cost") is True


def test_concurrent_requests_never_exceed_the_capacity():
    assert scenario("concurrent") == 10


def test_a_wall_clock_jump_backwards_does_not_break_the_bucket():
    assert scenario("clock_back") == [True, True, False]
