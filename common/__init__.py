"""What every package shares, and no domain of its own. Value helpers (money, ids, clock, order_limits, backoff,
network_names) are pure and import nothing of the project; process plumbing (config, db, db_roles, secrets,
faults, logs, metrics, probes, clock_offset, mail, sweeps) imports only from this package, and lifecycle, how
every process opens, waits for and closes its resources, also from streams."""
