#!/usr/bin/python3
"""Counts one meson test run's results for scripts/test.sh.

Reads meson-logs/testlog.json (one JSON object per test) and prints
"PASSED FAILED SKIPPED".  Lives here rather than in a bash heredoc so it can
be linted and run on its own:  scripts/testlog-count.py build/meson-logs/testlog.json
"""
import json
import sys


def count(path):
    passed = failed = skipped = 0
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            result = json.loads(line).get("result")
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
    return passed, failed, skipped


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: testlog-count.py TESTLOG.json")
    print(*count(sys.argv[1]))
