"""Reading metrics as Prometheus does: a scrape's text parsed into samples."""

from __future__ import annotations

import asyncio
import time

import aiohttp
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families


def value(text: str, name: str, **labels: str) -> float:
    """The sample `name` whose labels include these (0 when there is none)."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return 0.0


def labelled(text: str, name: str, label: str) -> dict[str, float]:
    return {s.labels[label]: s.value for family in text_string_to_metric_families(text) for s in family.samples
            if s.name == name}


def here() -> str:
    """This process's registry: the in-process worker, dispatchers and watchers count into it."""
    return generate_latest().decode()


async def scrape(http: aiohttp.ClientSession, url: str) -> str:
    async with http.get(url) as resp:
        assert resp.status == 200 and resp.content_type == "text/plain", resp.status
        return await resp.text()


async def probe(http: aiohttp.ClientSession, url: str, timeout: float = 30) -> tuple[int, dict]:
    """The answer of a process that may still be starting."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            async with http.get(url) as resp:
                return resp.status, await resp.json()
        except aiohttp.ClientConnectionError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
