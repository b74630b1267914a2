// The rules that need no server, on the built package (ESM and CJS): signing, the Idempotency-Key kept across
// retries, no retry of a 4xx, waits, undecodable answers, webhook verification (checked against the npm
// standardwebhooks library for the secret's other form).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { Webhook } from 'standardwebhooks';

import * as esm from '../dist/index.js';

const cjs = createRequire(import.meta.url)('../dist/index.cjs');
const { ServiceClient, ApiError, ConnectionFailed, DecodeError, WebhookVerificationError, delay, retryable,
  verifyWebhook, standardWebhooksSecret } = esm;

const ORDER = { order_id: 'ord_1', order_number: '1', livemode: false, status: 'PENDING', amount: '1.00',
  amount_paid: '0', amount_refunded: '0', amount_due: '1.00', line_items: [], external_ref: null, metadata: {},
  payments: [], created_at: '2026-01-01T00:00:00Z' };

function client(answers, maxRetries = 2) {
  const seen = [];
  const fetch = async (url, init) => {
    seen.push({ url, ...init });
    const next = answers.shift();
    if (next instanceof Error) throw next;
    return new Response(typeof next.body === 'string' ? next.body : JSON.stringify(next.body),
      { status: next.status, headers: next.headers ?? { 'content-type': 'application/json' } });
  };
  return { seen, c: new ServiceClient({ publicKey: 'pk_test_x', secretKey: 'sk_test_x', baseUrl: 'http://service.test',
    merchantId: 'mer_1', maxRetries, fetch }) };
}

test('both builds export the same surface', () => {
  assert.deepEqual(Object.keys(cjs).sort(), Object.keys(esm).sort());
  assert.equal(cjs.OPERATIONS.length, esm.OPERATIONS.length);
});

test('a write keeps its Idempotency-Key across retries and is signed afresh each time', async () => {
  const { seen, c } = client([
    new TypeError('fetch failed'),
    { status: 503, body: { error: { code: 'service_unavailable' } }, headers: { 'retry-after': '0' } },
    { status: 201, body: { ...ORDER, added_later: 1 } },
  ]);
  const order = await c.orders.create({ amount: '1.00' });
  assert.equal(order.order_id, 'ord_1');
  assert.equal(order.added_later, 1);
  assert.equal(order.lastResponse.attempts, 3);
  const keys = new Set(seen.map((s) => s.headers['Idempotency-Key']));
  assert.equal(keys.size, 1);
  for (const s of seen) {
    const message = `POST\n/b2b/v1/orders\n${s.headers['X-Timestamp']}\n${s.body}`;
    assert.equal(s.headers['X-Signature'], createHmac('sha256', 'sk_test_x').update(message).digest('hex'));
  }
});

const REFUSALS = [[400, 'invalid_json'], [401, 'bad_signature'], [404, 'order_not_found'],
  [409, 'idempotency_key_reused'], [422, 'invalid_field']];
for (const [status, code] of REFUSALS) {
  test(`a ${status} ${code} is raised at once with its fields`, async () => {
    const error = { type: 'invalid_request_error', code, message: 'no', param: 'amount' };
    const headers = { 'content-type': 'application/json', 'x-request-id': 'req_9' };
    const { seen, c } = client([{ status, body: { error }, headers }]);
    await assert.rejects(c.orders.retrieve('ord_1'), (e) => e instanceof ApiError && e.status === status
      && e.code === code && e.param === 'amount' && e.requestId === 'req_9' && e.type === 'invalid_request_error');
    assert.equal(seen.length, 1);
  });
}

test('no answer after the retries is ConnectionFailed', async () => {
  const { seen, c } = client([new TypeError('a'), new TypeError('b')], 1);
  await assert.rejects(c.orders.retrieve('ord_1'), ConnectionFailed);
  assert.equal(seen.length, 2);
});

for (const [name, answer] of [['html', { status: 200, body: '<html>', headers: { 'content-type': 'text/html' } }],
  ['a list', { status: 200, body: [1] }], ['a wrong field type', { status: 200, body: { ...ORDER, order_id: 7 } }]]) {
  test(`an undecodable answer (${name}) is a DecodeError`, async () => {
    const { c } = client([answer]);
    await assert.rejects(c.orders.retrieve('ord_1'), DecodeError);
  });
}

test('waits: jittered exponential, Retry-After honoured, too long refused', () => {
  assert.ok(delay(1, { 'retry-after': '3' }, 'rate_limited', 100, () => 0) >= 3);
  assert.equal(delay(1, { 'retry-after': '120' }, 'rate_limited', 100), null);
  assert.equal(delay(1, {}, 'x', 100, () => 0), 0.25);
  assert.equal(delay(10, {}, 'x', 100, () => 1), 8);
  assert.ok(retryable(null, null) && retryable(429, 'rate_limited') && retryable(504, 'command_timeout'));
  assert.ok(!retryable(500, 'internal_error') && !retryable(409, 'order_not_cancelable') && !retryable(422, 'x'));
});

test('verifyWebhook accepts any listed signature and refuses wrong secrets, tampering and old timestamps', () => {
  const body = '{"id":"evt_1","type":"payment.settled","created_at":"2026-01-01T00:00:00Z","livemode":false,"data":{}}';
  const sig = createHmac('sha256', 'whsec_a').update(`1000.${body}`).digest('hex');
  const headers = { 'x-service-timestamp': '1000', 'x-service-signature': `sha256=00,sha256=${sig}` };
  assert.equal(verifyWebhook(Buffer.from(body), headers, 'whsec_a', { now: 1300 }).type, 'payment.settled');
  assert.throws(() => verifyWebhook(body, headers, 'whsec_b', { now: 1000 }), WebhookVerificationError);
  assert.throws(() => verifyWebhook(body + ' ', headers, 'whsec_a', { now: 1000 }), WebhookVerificationError);
  assert.throws(() => verifyWebhook(body, headers, 'whsec_a', { now: 1301 }), WebhookVerificationError);
});

test('standardWebhooksSecret turns an older url-safe secret into the form the npm library takes', () => {
  const bytes = Buffer.alloc(32, 0xfb);
  const older = 'whsec_' + bytes.toString('base64url');
  const standard = standardWebhooksSecret(older);
  assert.equal(standard, 'whsec_' + bytes.toString('base64'));
  const signed = new Webhook(standard).sign('msg_1', new Date(), '{}');
  const mine = createHmac('sha256', bytes).update(`msg_1.${Math.floor(Date.now() / 1000)}.{}`).digest('base64');
  assert.equal(signed, `v1,${mine}`);
});

const ENDPOINT = { object: 'webhook_endpoint', webhook_endpoint_id: 'we_1', id: 'we_1', url: 'https://shop.test/hooks',
  enabled_events: ['*'], status: 'enabled', livemode: false };

test('a webhook endpoint is named by webhook_endpoint_id; endpoint_id still fills the path for one version', async () => {
  const { seen, c } = client([{ status: 200, body: ENDPOINT }, { status: 200, body: ENDPOINT },
    { status: 200, body: ENDPOINT }]);
  const found = await c.webhookEndpoints.retrieve('we_1');
  assert.equal(found.webhook_endpoint_id, 'we_1');
  await c.webhookEndpoints.retrieve({ webhook_endpoint_id: 'we_1' });
  await c.webhookEndpoints.retrieve({ endpoint_id: 'we_1' });
  assert.deepEqual(seen.map((s) => s.url),
    Array(3).fill('http://service.test/b2b/v1/merchants/mer_1/webhook-endpoints/we_1'));
});
