"""The buyers' pages on the checkout origin: the checkout page and its JSON endpoints, the refund pages, the payment
link's page, the receipt, and the SDK builds."""
