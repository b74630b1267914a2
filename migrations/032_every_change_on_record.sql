-- Everything a staff member, an API key or an operator changes is on record: webhook endpoints, payment links,
-- exports taken, invitations revoked, keys created and rolled, refund retries and transfers, PIN and notification
-- choices (docs/dashboard.md, The audit log). The list of actions is common/audit.py's ACTIONS; an operator is a
-- `service` command run on the server (keys created or rolled there).
ALTER TABLE audit_events DROP CONSTRAINT audit_events_action_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_action_check CHECK (action IN (
        'staff.signed_in', 'staff.sign_in_failed', 'staff.invited', 'staff.role_changed', 'staff.removed',
        'refund.issued', 'refund.approved', 'refund.rejected', 'refund.canceled', 'refund_link.created',
        'settings.changed', 'api_key.rolled', 'card_account.changed', 'pin.locked_out', 'sale.created',
        'staff.invitation_revoked', 'pin.set', 'notifications.changed', 'api_key.created', 'refund.retried',
        'refund.transaction_submitted', 'webhook_endpoint.created', 'webhook_endpoint.updated',
        'webhook_endpoint.enabled', 'webhook_endpoint.disabled', 'webhook_endpoint.secret_rolled',
        'webhook_endpoint.deleted', 'webhook_endpoint.test_sent', 'webhook_endpoint.redelivered',
        'payment_link.created', 'payment_link.updated', 'payment_link.archived', 'payment_link.activated',
        'export.downloaded'));
ALTER TABLE audit_events DROP CONSTRAINT audit_events_actor_type_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_actor_type_check CHECK (actor_type IN ('staff', 'api_key', 'operator'));
