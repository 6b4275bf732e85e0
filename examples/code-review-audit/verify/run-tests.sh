#!/bin/sh
# Runs the hidden tests from the hidden folder, never from the output under test: pytest looks
# for conftest.py only below /work/verify (--rootdir, --confcutdir), and the participant's
# program runs as a subprocess of each test, never inside pytest. The report goes to
# /work/results/junit.xml last, after every test ran.
set -eu
exec python -m pytest -q -p no:cacheprovider \
    --rootdir=/work/verify --confcutdir=/work/verify \
    --junitxml=/work/results/junit.xml \
    /work/verify/tests
