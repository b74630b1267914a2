"""Process entry points, configuration and shared plumbing of the service."""
