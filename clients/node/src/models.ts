// Typed answers: each model declares the fields a merchant backend relies on, checked when the answer is read;
// fields the service adds later are kept, so a newer service never breaks an older library.

import { DecodeError } from './errors';
import type { ModelName } from './operations';

/** How an answer came: HTTP status, headers, request id and how many attempts it took. */
export interface ResponseInfo {
  status: number;
  headers: Record<string, string>;
  requestId: string | null;
  attempts: number;
}

export interface ApiObject {
  [field: string]: unknown;
}

export interface Order extends ApiObject {
  order_id: string; order_number: string; livemode: boolean; status: string; amount: string; amount_paid: string;
  amount_refunded: string; amount_due: string; line_items: ApiObject[]; external_ref: string | null;
  metadata: Record<string, string>; payments: ApiObject[]; created_at: string;
}
export interface QuickSession extends ApiObject {
  order_id: string; order_number: string; session_id: string; session_key: string; checkout_url: string;
  expires_at: string; amount_due: string; status: string; order: Order;
}
export interface Refund extends ApiObject {
  refund_id: string; order_id: string; livemode: boolean; status: string; amount: string; reason: string;
  created_at: string;
}
export interface RefundRequest extends ApiObject {
  token: string; refund_url: string; status: string; order_id: string; amount: string; expires_at: string;
}
export interface Merchant extends ApiObject { merchant_id: string; name: string; livemode: boolean }
export interface MerchantSettings extends ApiObject {
  merchant_id: string; auto_approve_customer_refunds: boolean; receive_addresses: Record<string, string>;
}
export interface Event extends ApiObject {
  id: string; type: string; created_at: string; livemode: boolean; data: Record<string, unknown>;
}
export interface WebhookEndpoint extends ApiObject {
  /** Also answered as `id`, a deprecated alias (docs/api.md, Names). */
  webhook_endpoint_id: string; url: string; enabled_events: string[]; status: string; livemode: boolean;
  /** Only in the answers of create and rollSecret. */
  secret?: string;
}
export interface WebhookDelivery extends ApiObject {
  /** `id` and `endpoint_id` are answered too, as deprecated aliases. */
  delivery_id: string; webhook_endpoint_id: string; event_id: string; status: string; attempt_count: number;
}
export interface Redelivery extends ApiObject { webhook_endpoint_id: string; delivery_ids: string[] }
export interface StaffMember extends ApiObject {
  user_id: string; email: string; role: 'owner' | 'manager' | 'cashier'; created_at: string;
  last_signed_in_at: string | null; pin_set: boolean;
}
export interface StaffMemberRemoved extends ApiObject { user_id: string; removed: true }
/** The invitation's one-time link is in this answer only: keep it or send it now. */
export interface InvitationCreated extends ApiObject { invitation_id: string; url: string; expires_at: string }
export interface InvitationRevoked extends ApiObject { invitation_id: string; revoked: true }
export interface AuditActor extends ApiObject {
  type: 'staff' | 'api_key' | 'operator';
  /** The staff user's id, the API key's public key, or the `service` command an operator ran (also `id`, a deprecated alias). */
  actor_id: string;
  email: string | null;
}
export interface AuditEvent extends ApiObject {
  /** Also `id`, a deprecated alias. */
  audit_event_id: string; action: string; actor: AuditActor; object_id: string | null; order_id: string | null;
  /** null for the team's own actions, which belong to no mode. */
  livemode: boolean | null;
  details: Record<string, unknown>; client_ip: string | null; user_agent: string | null; request_id: string | null;
  created_at: string;
}
/** A link shared with many buyers; each buyer who pays through it gets an order of their own. */
export interface PaymentLink extends ApiObject {
  payment_link_id: string; livemode: boolean;
  /** The buyer's page, to share. */
  url: string;
  name: string; description: string | null;
  /** null: the buyer enters the amount, within min_amount and max_amount. */
  amount: string | null;
  min_amount: string | null; max_amount: string | null; max_uses: number | null;
  /** Orders made through the link. */
  uses: number;
  expires_at: string | null; status: 'active' | 'archived';
  /** Why a buyer cannot pay through it now; null while buyers can. */
  unavailable_reason: 'archived' | 'expired' | 'used_up' | null;
  orders: number; paid_orders: number; amount_paid: string; created_at: string; updated_at: string;
}
/** A row of the orders export: the columns of docs/api.md, Exports (new ones only ever at the end). */
export interface OrderExportRow extends ApiObject {
  order_id: string; order_number: string; livemode: boolean; status: string; currency: string; amount_owed: string;
  amount_paid: string; amount_refunded: string; external_ref: string | null; metadata: string; created_at: string;
  paid_at: string | null; updated_at: string;
}
export interface PaymentExportRow extends ApiObject {
  payment_id: string; order_id: string; order_number: string; livemode: boolean; rail: 'chain' | 'card';
  network: string; provider: string | null; transaction: string; amount: string; currency: string; asset: string;
  token_address: string | null; late: boolean; confirmed_at: string;
}
export interface RefundExportRow extends ApiObject {
  refund_id: string; order_id: string; order_number: string; livemode: boolean; rail: 'chain' | 'card';
  status: string; amount: string; currency: string; reason: string; note: string | null; destination: string | null;
  network: string; token_address: string | null; transaction: string | null; source: 'merchant' | 'customer';
  approved_by: 'merchant' | 'review' | null; created_at: string; updated_at: string;
}

export interface Models {
  ApiObject: ApiObject; Order: Order; QuickSession: QuickSession; Refund: Refund; RefundRequest: RefundRequest;
  Merchant: Merchant; MerchantSettings: MerchantSettings; Event: Event; WebhookEndpoint: WebhookEndpoint;
  WebhookDelivery: WebhookDelivery; Redelivery: Redelivery; StaffMember: StaffMember;
  StaffMemberRemoved: StaffMemberRemoved; InvitationCreated: InvitationCreated; InvitationRevoked: InvitationRevoked;
  AuditActor: AuditActor; AuditEvent: AuditEvent; PaymentLink: PaymentLink; OrderExportRow: OrderExportRow;
  PaymentExportRow: PaymentExportRow; RefundExportRow: RefundExportRow;
}

type Kind = 'string' | 'number' | 'boolean' | 'object' | 'array' | `${'string' | 'number' | 'boolean' | 'object'}?`
  | ModelName;

const S = 'string' as const;
const S0 = 'string?' as const;
const SCHEMAS: Record<ModelName, Record<string, Kind>> = {
  ApiObject: {},
  Order: { order_id: S, order_number: S, livemode: 'boolean', status: S, amount: S, amount_paid: S,
    amount_refunded: S, amount_due: S, line_items: 'array', external_ref: 'string?', metadata: 'object',
    payments: 'array', created_at: S },
  QuickSession: { order_id: S, order_number: S, session_id: S, session_key: S, checkout_url: S, expires_at: S,
    amount_due: S, status: S, order: 'Order' },
  Refund: { refund_id: S, order_id: S, livemode: 'boolean', status: S, amount: S, reason: S, created_at: S },
  RefundRequest: { token: S, refund_url: S, status: S, order_id: S, amount: S, expires_at: S },
  Merchant: { merchant_id: S, name: S, livemode: 'boolean' },
  MerchantSettings: { merchant_id: S, auto_approve_customer_refunds: 'boolean', receive_addresses: 'object' },
  Event: { id: S, type: S, created_at: S, livemode: 'boolean', data: 'object' },
  WebhookEndpoint: { webhook_endpoint_id: S, url: S, enabled_events: 'array', status: S, livemode: 'boolean', secret: 'string?' },
  WebhookDelivery: { delivery_id: S, webhook_endpoint_id: S, event_id: S, status: S, attempt_count: 'number' },
  Redelivery: { webhook_endpoint_id: S, delivery_ids: 'array' },
  StaffMember: { user_id: S, email: S, role: S, created_at: S, last_signed_in_at: S0, pin_set: 'boolean' },
  StaffMemberRemoved: { user_id: S, removed: 'boolean' },
  InvitationCreated: { invitation_id: S, url: S, expires_at: S },
  InvitationRevoked: { invitation_id: S, revoked: 'boolean' },
  AuditActor: { type: S, actor_id: S, email: S0 },
  AuditEvent: { audit_event_id: S, action: S, actor: 'AuditActor', object_id: S0, order_id: S0, livemode: 'boolean?',
    details: 'object', client_ip: S0, user_agent: S0, request_id: S0, created_at: S },
  PaymentLink: { payment_link_id: S, livemode: 'boolean', url: S, name: S, description: S0, amount: S0, min_amount: S0,
    max_amount: S0, max_uses: 'number?', uses: 'number', expires_at: S0, status: S, unavailable_reason: S0,
    orders: 'number', paid_orders: 'number', amount_paid: S, created_at: S, updated_at: S },
  OrderExportRow: { order_id: S, order_number: S, livemode: 'boolean', status: S, currency: S, amount_owed: S,
    amount_paid: S, amount_refunded: S, external_ref: S0, metadata: S, created_at: S, paid_at: S0, updated_at: S },
  PaymentExportRow: { payment_id: S, order_id: S, order_number: S, livemode: 'boolean', rail: S, network: S,
    provider: S0, transaction: S, amount: S, currency: S, asset: S, token_address: S0, late: 'boolean',
    confirmed_at: S },
  RefundExportRow: { refund_id: S, order_id: S, order_number: S, livemode: 'boolean', rail: S, status: S, amount: S,
    currency: S, reason: S, note: S0, destination: S0, network: S, token_address: S0, transaction: S0, source: S,
    approved_by: S0, created_at: S, updated_at: S },
};

/** The declared kind of each field of a model ('string', 'boolean?', ...): how a CSV cell is read back. */
export function fieldKinds(model: ModelName): Readonly<Record<string, string>> {
  return SCHEMAS[model];
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

/** The answer checked against its model; throws DecodeError naming the field that is not as API v1 has it. */
export function decode<N extends ModelName>(model: N, value: unknown, where: string): Models[N] {
  if (kindOf(value) !== 'object') throw new DecodeError(`${where}: expected a JSON object, got ${kindOf(value)}`);
  const obj = value as Record<string, unknown>;
  for (const [field, kind] of Object.entries(SCHEMAS[model])) {
    const v = obj[field];
    const at = `${where}.${field}`;
    if (kind.endsWith('?')) {
      if (v !== undefined && v !== null && kindOf(v) !== kind.slice(0, -1)) {
        throw new DecodeError(`${at}: expected ${kind.slice(0, -1)} or null, got ${kindOf(v)}`);
      }
    } else if (kind in SCHEMAS) {
      decode(kind as ModelName, v, at);
    } else if (kindOf(v) !== kind) {
      const what = v === undefined ? 'missing from the answer' : `expected ${kind}, got ${kindOf(v)}`;
      throw new DecodeError(`${at}: ${what}`);
    }
  }
  return obj as Models[N];
}
