"""Hidden tests of `wordfreq` (BRIEF.md). The participant's program runs as a subprocess with a
timeout, from the read-only copy of its output; nothing of it is imported here. It runs through
`$MULTICOOKER_LAUNCH` (README, "Hidden verification"): as another user, which cannot read these
tests or write /work/results, and whose every process ends with the call. Each test hands it
what it needs: an input file it may read."""

import os
import subprocess
import sys
import tempfile

OUTPUT = os.environ.get("MULTICOOKER_OUTPUT", "/work/output")
PROGRAM = os.path.join(OUTPUT, "wordfreq.py")
# Empty without a launcher (an older multicooker): the program then runs with pytest's powers.
LAUNCH = os.environ.get("MULTICOOKER_LAUNCH", "").split()


def run(text, *args):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write(text)
        path = f.name
    os.chmod(path, 0o644)  # the launched program runs as another user
    try:
        return wordfreq(path, *args)
    finally:
        os.unlink(path)


def wordfreq(*args):
    return subprocess.run(
        [*LAUNCH, sys.executable, PROGRAM, *args],
        capture_output=True,
        text=True,
        timeout=20,
        cwd=tempfile.gettempdir(),
    )


def lines(result):
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_counts_are_sorted_most_frequent_first():
    assert lines(run("b a b c b a", "--top", "2")) == ["3 b", "2 a"]


def test_ties_are_in_alphabetical_order():
    assert lines(run("pear apple fig apple pear fig", "--top", "3")) == ["2 apple", "2 fig", "2 pear"]


def test_words_are_compared_case_insensitively():
    assert lines(run("Sea sea SEA shore", "--top", "1")) == ["3 sea"]


def test_words_are_runs_of_letters_including_unicode():
    assert lines(run("naïve, naïve; café-café 42 x2y", "--top", "4")) == ["2 café", "2 naïve", "1 x", "1 y"]


def test_the_default_is_the_top_ten():
    words = " ".join(f"w{chr(97 + i)}" * 1 for i in range(12))
    assert len(lines(run(words))) == 10


def test_a_missing_file_names_it_and_exits_2():
    result = wordfreq("/nonexistent/missing-input.txt")
    assert result.returncode == 2
    assert "missing-input.txt" in result.stderr + result.stdout
