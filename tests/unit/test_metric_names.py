"""The Grafana dashboard and the operations guide name the metrics common/metrics.py defines: no panel reads
a series that no process exports, and no metric goes undocumented."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client.metrics import MetricWrapperBase

from common import metrics

DOCS = Path(__file__).resolve().parents[2] / "docs"
_SUFFIXES = {"counter": ("_total",), "gauge": ("",), "histogram": ("_bucket", "_sum", "_count")}
# What a PromQL expression holds besides metric names: functions, keywords and the labels it groups by.
_NOT_NAMES = re.compile(r"\{[^}]*\}|\[[^\]]*\]|\b(?:by|without)\s*\([^)]*\)|\b[a-z_]+\s*\(|\b(?:or|and|unless|sum|min|max|avg|count)\b|[\d.]+")


def _defined() -> dict[str, tuple[str, ...]]:
    """Family name -> the sample names Prometheus stores for it."""
    found = {}
    for metric in vars(metrics).values():
        if isinstance(metric, MetricWrapperBase):
            [family] = metric.describe()
            found[family.name] = tuple(family.name + suffix for suffix in _SUFFIXES[family.type])
    return found


def _expressions() -> list[str]:
    dashboard = json.loads((DOCS / "grafana-dashboard.json").read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


def test_the_dashboard_reads_only_exported_series_and_shows_every_metric():
    samples = {name for names in _defined().values() for name in names}
    read = {name for expr in _expressions() for name in re.findall(r"[a-z_][a-z0-9_]*", _NOT_NAMES.sub(" ", expr))}
    assert read - samples == set()
    assert {family for family, names in _defined().items() if not set(names) & read} == set()


def test_the_operations_guide_lists_every_metric():
    guide = (DOCS / "operations.md").read_text()
    assert [name for names in _defined().values() for name in names[:1] if f"`{name.removesuffix('_bucket')}`"
            not in guide] == []


def test_the_dashboard_imports_with_a_datasource_input():
    dashboard = json.loads((DOCS / "grafana-dashboard.json").read_text())
    assert [i["name"] for i in dashboard["__inputs"]] == ["DS_PROMETHEUS"] and dashboard["schemaVersion"] >= 36
    assert all(panel["datasource"]["uid"] == "${DS_PROMETHEUS}" for panel in dashboard["panels"] if panel["type"] != "row")
