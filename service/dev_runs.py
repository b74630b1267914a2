"""Which `service dev` runs, and on what data: each one announces itself in the user's runtime directory while it
runs, so that an operator command run in another folder (`service merchants create` from the home directory) finds
the service it belongs to instead of starting a second embedded database of its own."""

from __future__ import annotations

from pathlib import Path

import msgspec
import psutil

from service.embedded import runtime_dir


class DevRun(msgspec.Struct, kw_only=True):
    pid: int
    port: int
    data_dir: str
    database_url: str
    redis_url: str

    def described(self) -> str:
        return f"`service dev` on port {self.port} (pid {self.pid}, data in {self.data_dir})"


def _folder() -> Path:
    return runtime_dir() / "service-dev"


def announce(run: DevRun) -> Path:
    folder = _folder()
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / f"{run.pid}.json"
    path.write_bytes(msgspec.json.encode(run))
    return path


def withdraw(path: Path) -> None:
    path.unlink(missing_ok=True)


def running() -> list[DevRun]:
    """The runs announced whose process lives; an announcement a killed run left behind is removed."""
    found = []
    for path in sorted(_folder().glob("*.json")):
        try:
            run = msgspec.json.decode(path.read_bytes(), type=DevRun)
        except (OSError, msgspec.DecodeError):
            continue
        if psutil.pid_exists(run.pid):
            found.append(run)
        else:
            withdraw(path)
    return found
