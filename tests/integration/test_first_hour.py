"""A new merchant developer's first hour, as the README leads it: what they run prints nothing they must puzzle
over, and the README's own first-payment steps work from a merchant created to a verified webhook."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _stop_embedded_postgres(data_dir: Path) -> None:
    if (data_dir / "postgres" / "postmaster.pid").exists():
        subprocess.run([sys.executable, "-c", "import sys, pgserver; from service.embedded import stop_postgres;"
                        " stop_postgres(pgserver.get_server(sys.argv[1], cleanup_mode=None))",
                        str(data_dir / "postgres")], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                       capture_output=True, timeout=60)


def test_a_cli_call_on_the_embedded_defaults_prints_no_warning(tmp_path):
    """A shell with no XDG_RUNTIME_DIR (a container, ssh, CI) got a RuntimeDirWarning and a source line on every
    call; the embedded PostgreSQL's runtime directory is now named before it is imported."""
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "DATABASE_URL")}
    env |= {"SERVICE_DATA_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    try:
        out = subprocess.run([sys.executable, "-m", "service", "merchants", "list"], env=env, cwd=ROOT,
                             capture_output=True, timeout=120)
        assert out.returncode == 0, out.stderr.decode()[-2000:]
        assert out.stderr.decode() == ""
    finally:
        _stop_embedded_postgres(tmp_path)
