// Node server library for merchant backends of the checkout, orders and refunds service (B2B API v1).
export { ServiceClient } from './client';
export type { Args, ClientOptions, Params, RequestOptions, Resources, WithResponse } from './client';
export { ApiError, ConnectionFailed, DecodeError, ServiceError, WebhookVerificationError } from './errors';
export type { ErrorFields } from './errors';
export { ExportFile } from './exports';
export type {
  ApiObject, AuditActor, AuditEvent, Event, InvitationCreated, InvitationRevoked, Merchant, MerchantSettings, Models,
  Order, OrderExportRow, PaymentExportRow, PaymentLink, QuickSession, Redelivery, Refund, RefundExportRow,
  RefundRequest, ResponseInfo, StaffMember, StaffMemberRemoved, WebhookDelivery, WebhookEndpoint,
} from './models';
export { OPERATIONS } from './operations';
export type { HttpMethod, ModelName, Operation } from './operations';
export { delay, retryable } from './retries';
export type { ExportFormat } from './rows';
export { API_VERSION, VERSION } from './version';
export { standardWebhooksSecret, verifyWebhook } from './webhooks';
export type { VerifyOptions } from './webhooks';
