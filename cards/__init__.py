"""Card payments through the merchant's own provider account: accounts, the provider adapter, the refund sender."""
