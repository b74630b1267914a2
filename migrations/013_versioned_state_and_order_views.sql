-- Stored events and snapshots name the schema they were written in (actors/schema.py reads older ones
-- through its upcasters); every row so far was written in schema 1. Readers read `orders.view`, the read
-- view the order actor writes in the same commit as the state (readmodel/order.py); a schema-1 state has
-- exactly the view's shape, so it is the view of every order stored so far.

ALTER TABLE events ADD COLUMN schema smallint NOT NULL DEFAULT 1;
ALTER TABLE orders ADD COLUMN state_schema smallint NOT NULL DEFAULT 1, ADD COLUMN view jsonb;
UPDATE orders SET view = state;
ALTER TABLE orders ALTER COLUMN view SET NOT NULL;
