"""The schemathesis run of the test suite (tests/fuzz), longer: more examples per operation, still seeded.

    python bench/fuzz.py [--examples 200]

Needs what the tests need (PostgreSQL and Redis as in the README); prints pytest's report, and the answers by
status with -s.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200, help="examples per API operation (the suite uses 8)")
    args = parser.parse_args()
    env = dict(os.environ, FUZZ_EXAMPLES=str(args.examples))
    return subprocess.call([sys.executable, "-m", "pytest", "-q", "-s", "tests/fuzz"], cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
