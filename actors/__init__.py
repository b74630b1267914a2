"""Order actors: pure transitions, their persistence and the worker runtime."""
