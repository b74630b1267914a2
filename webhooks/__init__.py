"""Webhook delivery: endpoints, signed and retried deliveries, the attempt log, and the dispatcher process."""
