// Every operation of the B2B API, one row each: the client's methods are made from this table, and a test fails
// when the service's OpenAPI document has an operation missing here. Adding an operation is adding a row. A file
// download (`streams`) answers an ExportFile of rows of its model instead of one JSON object.

const P = '/b2b/v1';
const M = `${P}/merchants/{merchant_id}`;
const WE = `${M}/webhook-endpoints/{webhook_endpoint_id}`;
/** Path parameters by an earlier name, still taken for one version: `endpoint_id` is `webhook_endpoint_id`. */
export const RENAMED_PARAMS: Readonly<Record<string, string>> = { endpoint_id: 'webhook_endpoint_id' };
const STAFF = `${M}/staff`;
const PL = `${M}/payment-links`;
const PL_ONE = `${PL}/{payment_link_id}`;

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface Operation {
  readonly resource: string;
  readonly name: string;
  readonly method: HttpMethod;
  /** Path parameters in braces; {merchant_id} defaults to the client's merchant. */
  readonly path: string;
  /** The model of the answer (or of each item of a list). */
  readonly returns: ModelName;
  /** A list: the method walks every page lazily. */
  readonly pages?: boolean;
  /** Other HTTP methods the service accepts for the same operation. */
  readonly aliases?: readonly HttpMethod[];
  /** A CSV or JSON Lines file of `returns` rows, streamed to the caller (exports.ts). */
  readonly streams?: boolean;
}

export type ModelName =
  | 'ApiObject' | 'Order' | 'QuickSession' | 'Refund' | 'RefundRequest' | 'Merchant' | 'MerchantSettings'
  | 'Event' | 'WebhookEndpoint' | 'WebhookDelivery' | 'Redelivery' | 'StaffMember' | 'StaffMemberRemoved'
  | 'InvitationCreated' | 'InvitationRevoked' | 'AuditActor' | 'AuditEvent' | 'PaymentLink' | 'OrderExportRow'
  | 'PaymentExportRow' | 'RefundExportRow';

export const OPERATIONS = [
  { resource: 'checkoutSessions', name: 'createQuick', method: 'POST',
    path: `${P}/checkout-sessions/quick`, returns: 'QuickSession' },
  { resource: 'checkoutSessions', name: 'create', method: 'POST',
    path: `${P}/checkout-sessions`, returns: 'QuickSession' },
  { resource: 'orders', name: 'create', method: 'POST', path: `${P}/orders`, returns: 'Order' },
  { resource: 'orders', name: 'list', method: 'GET', path: `${P}/orders`, returns: 'Order', pages: true },
  { resource: 'orders', name: 'retrieve', method: 'GET', path: `${P}/orders/{order_id}`, returns: 'Order' },
  { resource: 'orders', name: 'cancel', method: 'PATCH',
    path: `${P}/orders/{order_id}/cancel`, returns: 'Order', aliases: ['POST'] },
  { resource: 'orders', name: 'reopen', method: 'PATCH',
    path: `${P}/orders/{order_id}/reopen`, returns: 'Order', aliases: ['POST'] },
  { resource: 'orders', name: 'listRefunds', method: 'GET',
    path: `${P}/orders/{order_id}/refunds`, returns: 'Refund', pages: true },
  { resource: 'refunds', name: 'create', method: 'POST', path: `${M}/refunds`, returns: 'Refund' },
  { resource: 'refunds', name: 'retrieve', method: 'GET', path: `${P}/refunds/{refund_id}`, returns: 'Refund' },
  { resource: 'refunds', name: 'approve', method: 'POST',
    path: `${P}/refunds/{refund_id}/approve`, returns: 'Refund', aliases: ['PATCH'] },
  { resource: 'refunds', name: 'reject', method: 'POST',
    path: `${P}/refunds/{refund_id}/reject`, returns: 'Refund', aliases: ['PATCH'] },
  { resource: 'refunds', name: 'cancel', method: 'POST',
    path: `${P}/refunds/{refund_id}/cancel`, returns: 'Refund', aliases: ['PATCH'] },
  { resource: 'refunds', name: 'retry', method: 'POST', path: `${P}/refunds/{refund_id}/retry`, returns: 'Refund' },
  { resource: 'refunds', name: 'submitTx', method: 'POST',
    path: `${P}/refunds/{refund_id}/submit-tx`, returns: 'Refund' },
  { resource: 'customerRefunds', name: 'create', method: 'POST', path: `${M}/customer-refunds`, returns: 'Refund' },
  { resource: 'refundRequests', name: 'create', method: 'POST',
    path: `${M}/refund-requests`, returns: 'RefundRequest' },
  { resource: 'refundRequests', name: 'retrieve', method: 'GET',
    path: `${P}/refund-requests/{token}`, returns: 'RefundRequest' },
  { resource: 'refundRequests', name: 'cancel', method: 'POST',
    path: `${P}/refund-requests/{token}/cancel`, returns: 'RefundRequest', aliases: ['PATCH'] },
  { resource: 'refundRequests', name: 'approveRenewal', method: 'POST',
    path: `${P}/refund-requests/{token}/renewal/approve`, returns: 'RefundRequest', aliases: ['PATCH'] },
  { resource: 'merchants', name: 'retrieve', method: 'GET', path: M, returns: 'Merchant' },
  { resource: 'settings', name: 'retrieve', method: 'GET', path: `${M}/settings`, returns: 'MerchantSettings' },
  { resource: 'settings', name: 'update', method: 'PATCH', path: `${M}/settings`, returns: 'MerchantSettings' },
  { resource: 'webhookEndpoints', name: 'create', method: 'POST',
    path: `${M}/webhook-endpoints`, returns: 'WebhookEndpoint' },
  { resource: 'webhookEndpoints', name: 'list', method: 'GET',
    path: `${M}/webhook-endpoints`, returns: 'WebhookEndpoint', pages: true },
  { resource: 'webhookEndpoints', name: 'retrieve', method: 'GET', path: WE, returns: 'WebhookEndpoint' },
  { resource: 'webhookEndpoints', name: 'update', method: 'PATCH', path: WE, returns: 'WebhookEndpoint' },
  { resource: 'webhookEndpoints', name: 'delete', method: 'DELETE', path: WE, returns: 'ApiObject' },
  { resource: 'webhookEndpoints', name: 'rollSecret', method: 'POST',
    path: `${WE}/roll-secret`, returns: 'WebhookEndpoint' },
  { resource: 'webhookEndpoints', name: 'redeliver', method: 'POST', path: `${WE}/redeliver`, returns: 'Redelivery' },
  { resource: 'webhookDeliveries', name: 'list', method: 'GET',
    path: `${M}/webhook-deliveries`, returns: 'WebhookDelivery', pages: true },
  { resource: 'webhookDeliveries', name: 'retrieve', method: 'GET',
    path: `${M}/webhook-deliveries/{delivery_id}`, returns: 'WebhookDelivery' },
  { resource: 'events', name: 'list', method: 'GET', path: `${P}/events`, returns: 'Event', pages: true },
  { resource: 'events', name: 'retrieve', method: 'GET', path: `${P}/events/{event_id}`, returns: 'Event' },
  { resource: 'staff', name: 'list', method: 'GET', path: STAFF, returns: 'StaffMember', pages: true },
  { resource: 'staff', name: 'createInvitation', method: 'POST',
    path: `${STAFF}/invitations`, returns: 'InvitationCreated' },
  { resource: 'staff', name: 'revokeInvitation', method: 'DELETE',
    path: `${STAFF}/invitations/{invitation_id}`, returns: 'InvitationRevoked' },
  { resource: 'staff', name: 'update', method: 'PATCH', path: `${STAFF}/{user_id}`, returns: 'StaffMember' },
  { resource: 'staff', name: 'remove', method: 'DELETE', path: `${STAFF}/{user_id}`, returns: 'StaffMemberRemoved' },
  { resource: 'auditEvents', name: 'list', method: 'GET',
    path: `${M}/audit-events`, returns: 'AuditEvent', pages: true },
  { resource: 'paymentLinks', name: 'create', method: 'POST', path: PL, returns: 'PaymentLink' },
  { resource: 'paymentLinks', name: 'list', method: 'GET', path: PL, returns: 'PaymentLink', pages: true },
  { resource: 'paymentLinks', name: 'retrieve', method: 'GET', path: PL_ONE, returns: 'PaymentLink' },
  { resource: 'paymentLinks', name: 'update', method: 'PATCH', path: PL_ONE, returns: 'PaymentLink' },
  { resource: 'exports', name: 'orders', method: 'GET',
    path: `${M}/exports/orders`, returns: 'OrderExportRow', streams: true },
  { resource: 'exports', name: 'payments', method: 'GET',
    path: `${M}/exports/payments`, returns: 'PaymentExportRow', streams: true },
  { resource: 'exports', name: 'refunds', method: 'GET',
    path: `${M}/exports/refunds`, returns: 'RefundExportRow', streams: true },
  // Test mode only: what a buyer's payment and a refund's confirmations would do.
  { resource: 'testHelpers', name: 'simulatePayment', method: 'POST',
    path: `${P}/test-helpers/orders/{order_id}/payments`, returns: 'Order' },
  { resource: 'testHelpers', name: 'executeRefund', method: 'POST',
    path: `${P}/test-helpers/refunds/{refund_id}/execute`, returns: 'Refund' },
] as const satisfies readonly Operation[];
