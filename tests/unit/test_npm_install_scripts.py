"""`npm ci` (npm 11) skips the install scripts of dependencies that package.json's `allowScripts` does not name, and
warns about each one: `npm ci` in clients/node warned about esbuild's. Every package whose lockfile entry has an
install script is decided in allowScripts: esbuild's postinstall is denied (its platform package carries the
binary it would only check), and the build and tests run without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("folder", ["clients/node", "web/sdk"])
def test_every_install_script_is_decided_in_allow_scripts(folder):
    lock = json.loads((ROOT / folder / "package-lock.json").read_text())
    with_scripts = {path.rsplit("node_modules/", 1)[1] for path, entry in lock["packages"].items()
                    if entry.get("hasInstallScript")}
    decided = {name.rsplit("@", 1)[0] if name.rfind("@") > 0 else name
               for name in json.loads((ROOT / folder / "package.json").read_text()).get("allowScripts", {})}
    assert with_scripts and with_scripts - decided == set()
