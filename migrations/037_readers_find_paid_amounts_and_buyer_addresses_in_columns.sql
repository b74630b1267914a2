-- What readers outside the order actor select or sum orders by, as columns beside the state, so that none of them
-- reads the state's JSON (docs/architecture.md): the amount paid (a payment link's takings) and the buyer's
-- address the API was given (whether a receipt is mailed). Written by the order actor's commit; orders written
-- before this migration take them from their state.
ALTER TABLE orders ADD COLUMN amount_paid bigint NOT NULL DEFAULT 0, ADD COLUMN customer_email text;
UPDATE orders SET amount_paid = coalesce((state->>'amount_paid')::bigint, 0), customer_email = state->>'customer_email';
