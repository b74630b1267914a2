"""The read side every floor above shares: the caller's own objects, order filters, instants, cursor pages, the network registry."""
