// Export downloads without a server, on the built package: a file read as chunks, lines, typed rows or saved, in
// both formats; a CSV cell spanning lines and a character cut between chunks read back whole; errors before the
// file thrown and retried like any call; a file cut off on the way thrown, never returned short; the team and audit
// methods' paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ApiError, ConnectionFailed, DecodeError, ServiceClient, ServiceError } from '../dist/index.js';

const CSV_HEADER = '"order_id","order_number","livemode","status","currency","amount_owed","amount_paid",' +
  '"amount_refunded","external_ref","metadata","created_at","paid_at","updated_at"\r\n';
const CSV_FILE = Buffer.from(CSV_HEADER +
  '"ord_1","1001","false","PAID","USD","10.00","10.00","0","A-1","{""n"":""1""}","2026-03-01T00:00:00Z",' +
  '"2026-03-01T00:05:00Z","2026-03-01T00:05:00Z"\r\n' +
  '"ord_2","1002","false","PENDING","USD","2.50","0","0","","{""note"":""line one\r\nline two, é""}",' +
  '"2026-03-02T00:00:00Z","","2026-03-02T00:00:00Z"\r\n');
const JSONL_LINE = '{"refund_id":"rf_1","order_id":"ord_1","order_number":"1001","livemode":false,"rail":"chain",' +
  '"status":"EXECUTED","amount":"1.00","currency":"USD","reason":"x","note":"=HYPERLINK(\\"a\\")\u2028b",' +
  '"destination":"0xabc","network":"ethereum","token_address":null,"transaction":"0x1","source":"customer",' +
  '"approved_by":"review","created_at":"2026-03-01T00:00:00Z","updated_at":"2026-03-01T00:00:00Z"}\n';
const CSV_HEADERS = { 'content-type': 'text/csv; charset=utf-8',
  'content-disposition': 'attachment; filename="orders-test-start-now.csv"' };

/** A body in chunks of `size` bytes, then (optionally) a dropped connection. */
function fileAnswer(body, { headers = CSV_HEADERS, size = 7, fail = false } = {}) {
  let at = 0;
  const stream = new ReadableStream({
    pull(controller) {
      if (at < body.length) {
        controller.enqueue(new Uint8Array(body.subarray(at, at + size)));
        at += size;
      } else if (fail) {
        controller.error(new TypeError('terminated', { cause: new Error('other side closed') }));
      } else {
        controller.close();
      }
    },
  });
  return new Response(stream, { status: 200, headers });
}

function client(answer) {
  const seen = [];
  const fetch = async (url, init) => {
    seen.push({ url, ...init });
    return typeof answer === 'function' ? answer(url, init) : answer;
  };
  return { seen, c: new ServiceClient({ publicKey: 'pk_test_x', secretKey: 'sk_test_x', baseUrl: 'http://service.test',
    merchantId: 'mer_1', fetch }) };
}

async function all(iterable) {
  const out = [];
  for await (const x of iterable) out.push(x);
  return out;
}

test('a CSV export reads as typed rows, a cell spanning lines and a character cut between chunks whole', async () => {
  const { seen, c } = client(() => fileAnswer(CSV_FILE));
  const file = await c.exports.orders({ from: new Date('2026-03-01T00:00:00Z'), to: '2026-04-01', format: 'csv' });
  assert.equal(file.format, 'csv');
  assert.equal(file.filename, 'orders-test-start-now.csv');
  const [first, second] = await all(file.rows());
  assert.deepEqual([first.order_id, first.livemode, first.amount_owed, first.metadata],
    ['ord_1', false, '10.00', '{"n":"1"}']);
  assert.deepEqual([second.external_ref, second.paid_at], [null, null]);
  assert.equal(second.metadata, '{"note":"line one\r\nline two, é"}');
  const url = new URL(seen[0].url);
  assert.equal(url.search, '?from=2026-03-01T00%3A00%3A00.000Z&to=2026-04-01&format=csv');
  assert.equal(seen[0].headers['Idempotency-Key'], undefined);
});

test('lines and bytes are the file as sent', async () => {
  const lines = await all((await client(() => fileAnswer(CSV_FILE)).c.exports.orders()).lines());
  assert.equal(lines[0], CSV_HEADER.slice(0, -2));
  assert.equal(lines.length, 4);
  const chunks = await all(await client(() => fileAnswer(CSV_FILE, { size: 3 })).c.exports.orders());
  assert.deepEqual(Buffer.concat(chunks), CSV_FILE);
});

test('JSON Lines keep values as stored and split only on line feeds', async () => {
  const body = Buffer.from(JSONL_LINE + JSONL_LINE);
  const file = await client(() => fileAnswer(body, { headers: { 'content-type': 'application/x-ndjson' }, size: 5 }))
    .c.exports.refunds({ format: 'jsonl' });
  const rows = await all(file.rows());
  assert.equal(rows.length, 2);
  assert.equal(rows[0].note, '=HYPERLINK("a")\u2028b');
  assert.equal(rows[0].token_address, null);
  assert.equal(file.filename, null);
});

test('saveTo writes the whole file, and a cut-off one leaves nothing behind', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'exports-'));
  const size = await (await client(() => fileAnswer(CSV_FILE)).c.exports.orders()).saveTo(join(dir, 'orders.csv'));
  assert.equal(size, CSV_FILE.length);
  assert.deepEqual(await readFile(join(dir, 'orders.csv')), CSV_FILE);
  const broken = await client(() => fileAnswer(CSV_FILE.subarray(0, 14), { fail: true })).c.exports.orders();
  await assert.rejects(broken.saveTo(join(dir, 'broken.csv')), (e) => e instanceof ConnectionFailed &&
    /cut off after 14 bytes/.test(e.message));
  assert.deepEqual(await readdir(dir), ['orders.csv']);
});

test('a cut-off file throws instead of ending short, and a download is read once', async () => {
  const file = await client(() => fileAnswer(CSV_FILE.subarray(0, 300), { fail: true })).c.exports.orders();
  await assert.rejects(all(file.rows()), ConnectionFailed);
  await assert.rejects(all(file), (e) => e instanceof ServiceError && /read once/.test(e.message));
});

test('a stalled file is given up after timeoutMs without data', async () => {
  const stalled = (url, init) => new Response(new ReadableStream({
    start(controller) {
      controller.enqueue(new Uint8Array(Buffer.from(CSV_HEADER)));
      init.signal.addEventListener('abort', () => controller.error(init.signal.reason));
    },
  }), { status: 200, headers: CSV_HEADERS });
  const c = new ServiceClient({ publicKey: 'pk_test_x', secretKey: 'sk', baseUrl: 'http://service.test',
    merchantId: 'mer_1', timeoutMs: 50, fetch: async (url, init) => stalled(url, init) });
  await assert.rejects(all(await c.exports.orders()), (e) => e instanceof ConnectionFailed &&
    /no data for 50 ms/.test(e.message));
});

test('errors come before the file and are retried like any call', async () => {
  const answers = [new Response(JSON.stringify({ error: { code: 'service_unavailable' } }),
    { status: 503, headers: { 'retry-after': '0', 'content-type': 'application/json' } }), fileAnswer(CSV_FILE)];
  const file = await client(() => answers.shift()).c.exports.orders();
  assert.equal(file.lastResponse.attempts, 2);
  assert.equal((await all(file.rows())).length, 2);
  const refusal = { error: { type: 'invalid_request_error', code: 'invalid_format', message: 'no', param: 'format' } };
  await assert.rejects(client(() => new Response(JSON.stringify(refusal), { status: 422 })).c.exports.orders(
    { format: 'xlsx' }), (e) => e instanceof ApiError && e.code === 'invalid_format' && e.param === 'format');
});

const NOT_FILES = [['HTML', '<html>sign in</html>', 'text/html'], ['JSON', '{"data":[]}', 'application/json']];
for (const [what, body, type] of NOT_FILES) {
  const answer = () => new Response(body, { headers: { 'content-type': type } });
  test(`an answer of ${what} is not an export file: a DecodeError`, async () => {
    await assert.rejects(client(answer).c.exports.payments(), (e) => e instanceof DecodeError &&
      /exports.payments/.test(e.message));
  });
}

test('a CSV cut inside a quoted cell is a DecodeError', async () => {
  const body = CSV_FILE.subarray(0, CSV_FILE.indexOf('line two'));
  await assert.rejects(all((await client(() => fileAnswer(body)).c.exports.orders()).rows()),
    (e) => e instanceof DecodeError && /inside a quoted CSV cell/.test(e.message));
});

test('the team and audit methods send their paths and decode their answers', async () => {
  const member = { object: 'staff_member', user_id: 'usr_1', email: 'a@example.com', role: 'manager',
    created_at: '2026-03-01T00:00:00Z', last_signed_in_at: null, pin_set: false };
  const event = { object: 'audit_event', audit_event_id: 'aud_1', id: 'aud_1', action: 'staff.invited',
    actor: { type: 'api_key', actor_id: 'pk_test_x', id: 'pk_test_x', email: null }, object_id: 'inv_1', order_id: null, livemode: null,
    details: { email: 'a@example.com' }, client_ip: null, user_agent: null, request_id: 'req_1',
    created_at: '2026-03-01T00:00:00Z' };
  const { seen, c } = client((url) => {
    if (!url.includes('/audit-events')) return new Response(JSON.stringify(member), { status: 200 });
    const more = !url.includes('cursor=');
    return new Response(JSON.stringify({ object: 'list', data: [event], has_more: more,
      next_cursor: more ? 'c2' : null }), { status: 200 });
  });
  assert.equal((await c.staff.update('usr_1', { role: 'manager' })).role, 'manager');
  const events = await all(c.auditEvents.list({ action: 'staff.invited', limit: 1 }));
  assert.deepEqual(events.map((e) => e.actor.type), ['api_key', 'api_key']);
  assert.deepEqual(seen.map((s) => [s.method, s.url.replace('http://service.test', ''), s.body]), [
    ['PATCH', '/b2b/v1/merchants/mer_1/staff/usr_1', '{"role":"manager"}'],
    ['GET', '/b2b/v1/merchants/mer_1/audit-events?action=staff.invited&limit=1', undefined],
    ['GET', '/b2b/v1/merchants/mer_1/audit-events?action=staff.invited&limit=1&cursor=c2', undefined],
  ]);
});
