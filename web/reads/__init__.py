"""What the floors above read: the caller's own objects, order filters, instants, cursor pages, the network
registry."""
