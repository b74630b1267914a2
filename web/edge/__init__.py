"""The HTTP edge: the app's state, errors, request ids, signatures, keys, sessions, limits, idempotency, bodies and
forms, probes and metrics."""
