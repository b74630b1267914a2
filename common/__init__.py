"""What every package shares. money, ids, clock and bounds are pure and import nothing of the project;
config, db, secrets, merchants and users are the shared I/O helpers and import only from this package."""
