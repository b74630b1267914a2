"""Re-record the pinned OpenAPI document, only for a deliberate change of the public contract:

    python -m tests.contract.record
"""

from __future__ import annotations

import json
from pathlib import Path

from web.api.openapi import document

SNAPSHOT = Path(__file__).with_name("openapi.json")


def main() -> None:
    SNAPSHOT.write_text(json.dumps(document(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {SNAPSHOT}")


if __name__ == "__main__":
    main()
