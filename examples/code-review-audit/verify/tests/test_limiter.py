"""Hidden tests of the fixed `out/limiter.py` (BRIEF.md): each scenario runs in a child process
(`harness.py`) with a timeout; nothing of the participant's code is imported here. The child runs
through `$MULTICOOKER_LAUNCH` (README, "Hidden verification"): as another user, which cannot read
these tests or write /work/results, and whose every process ends with the call; it is handed a
copy of the harness, which holds no expected answer."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

HIDDEN_HARNESS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "harness.py"
)
# Empty without a launcher (an older multicooker): the child then runs with pytest's powers.
LAUNCH = os.environ.get("MULTICOOKER_LAUNCH", "").split()


def harness():
    """A copy of the harness the launched child may read (the hidden folder is the runner's)."""
    folder = tempfile.mkdtemp()
    os.chmod(folder, 0o755)
    copy = os.path.join(folder, "harness.py")
    shutil.copyfile(HIDDEN_HARNESS, copy)
    os.chmod(copy, 0o644)
    return copy


def scenario(name):
    result = subprocess.run(
        [*LAUNCH, sys.executable, harness(), name],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tempfile.gettempdir(),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_request_costing_exactly_the_tokens_left_is_allowed():
    assert scenario("exact_cost") is True


def test_concurrent_requests_never_exceed_the_capacity():
    assert scenario("concurrent") == 10


def test_a_wall_clock_jump_backwards_does_not_break_the_bucket():
    assert scenario("clock_back") == [True, True, False]
