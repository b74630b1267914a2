-- A payment link's uses are its orders that were paid, and those whose checkout session is still open: an unpaid
-- order holds its use only while a buyer can still pay it, and gives it back when its session expires or the order
-- is canceled, so a script making unpaid orders cannot use a link up. The count is read under the link's row lock
-- when a buyer takes a use (web/links/store.py), so concurrent buyers never pass `max_uses`. `held_until` is the
-- expiry of the session the link made: it holds the use in the moment before the order core has written the order.
ALTER TABLE payment_links DROP COLUMN uses;
ALTER TABLE payment_link_orders ADD COLUMN held_until timestamptz;

CREATE FUNCTION payment_link_uses(link text, at timestamptz) RETURNS integer LANGUAGE sql STABLE AS $$
    SELECT count(*)::integer FROM payment_link_orders h LEFT JOIN orders o USING (order_id)
    WHERE h.payment_link_id = link AND (
        o.paid_at IS NOT NULL OR o.status = 'PARTIAL_PAID'
        OR (coalesce(o.status, 'PENDING') = 'PENDING' AND (h.held_until > at OR EXISTS (
            SELECT 1 FROM checkout_sessions s
            WHERE s.order_id = h.order_id AND s.status = 'OPEN' AND s.expires_at > at))))
$$;
