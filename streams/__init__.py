"""Redis stream plumbing: key names, the command producer with its reply waiter, consumer helpers."""
