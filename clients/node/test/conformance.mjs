// The conformance cases (clients/conformance/cases.json) run with the Node library against a real deployment:
// `node test/conformance.mjs ENV.json` with the environment the harness wrote (tests/clients/harness.py).
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

import { ApiError, ServiceClient, WebhookVerificationError, verifyWebhook } from '../dist/index.js';

const env = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const only = process.argv[3];
const { cases } = JSON.parse(readFileSync(env.cases, 'utf8'));

// The cases name methods as the Python library does; this library's names are the same in camelCase.
const camel = (s) => s.replace(/_(\w)/g, (_, c) => c.toUpperCase());
const dig = (obj, dotted) => dotted.split('.').reduce((o, k) => (o == null ? undefined : o[k]), obj);
const plain = (obj) => JSON.parse(JSON.stringify(obj));

function check(ok, ...what) {
  if (!ok) throw new Error(JSON.stringify(what));
}

class Case {
  constructor(c) {
    this.c = c;
    const unique = `conf-${randomBytes(6).toString('hex')}`;
    this.saved = { unique, email: `${unique}@example.com`, receiver_url: env.receiver_url };
    const m = env.merchants[c.client ?? 'default'];
    this.client = new ServiceClient({ publicKey: m.public_key, secretKey: m.secret_key, merchantId: m.merchant_id,
      baseUrl: env.base_url, maxRetries: 3 });
  }

  resolve(v, index = 0) {
    if (typeof v === 'string' && v.startsWith('$')) return v === '$index' ? String(index) : dig(this.saved, v.slice(1));
    if (Array.isArray(v)) return v.map((x) => this.resolve(x, index));
    if (v && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.resolve(x, index)]));
    }
    return v;
  }

  method(dotted) {
    const [resource, name] = dotted.split('.').map(camel);
    return this.client[resource][name];
  }

  async call(step, index = 0) {
    const started = performance.now();
    const key = this.resolve(step.idempotency_key, index);
    try {
      const result = await this.method(step.call)(...this.resolve(step.args ?? [], index),
        this.resolve(step.params ?? {}, index), key ? { idempotencyKey: key } : {});
      return [result, (performance.now() - started) / 1000];
    } catch (e) {
      if (e instanceof ApiError) return [e, (performance.now() - started) / 1000];
      throw e;
    }
  }

  async run() {
    for (const [n, step] of this.c.steps.entries()) {
      const where = `${this.c.name} / step ${n}`;
      if (step.fault) await post(`${env.control_url}/faults`, step.fault);
      if (step.walk) await this.walk(step, where);
      else if (step.export) await this.export(step, where);
      else if (step.await_delivery) this.saved[step.save] = await awaitDelivery(this.resolve(step.await_delivery));
      else if (step.verify_webhook) this.verify(step, where);
      else if (step.create_many) {
        for (let i = 0; i < step.create_many; i++) {
          const [result] = await this.call(step, i);
          check(!(result instanceof ApiError), where, i, String(result));
        }
      } else {
        const results = [];
        for (let i = 0; i < (step.repeat ?? 1); i++) results.push(await this.call(step, i));
        this.check(results, this.resolve(step.expect ?? {}), where);
        if (step.save) this.saved[step.save] = plain(results.at(-1)[0]);
      }
    }
  }

  check(results, expect, where) {
    for (const [result] of results) {
      if (expect.error) {
        check(result instanceof ApiError, where, 'expected an error', plain(result));
        for (const [k, v] of Object.entries(expect.error)) check(result[k] === v, where, k, result[k], v);
        check(result.requestId && result.message, where, 'request id and message');
        continue;
      }
      check(!(result instanceof ApiError), where, String(result));
      const info = result.lastResponse;
      check(expect.status === undefined || info.status === expect.status, where, 'status', info.status);
      check(expect.attempts === undefined || info.attempts === expect.attempts, where, 'attempts', info.attempts);
      for (const [k, v] of Object.entries(expect.fields ?? {})) {
        check(dig(result, k) === v, where, k, dig(result, k), v);
      }
    }
    if (expect.max_attempts_at_least !== undefined) {
      const most = Math.max(...results.map(([r]) => r.lastResponse.attempts));
      check(most >= expect.max_attempts_at_least, where, 'attempts', most);
    }
    if (expect.slowest_call_at_least_s !== undefined) {
      check(Math.max(...results.map(([, s]) => s)) >= expect.slowest_call_at_least_s, where, 'waited');
    }
  }

  async walk(step, where) {
    const found = [];
    for await (const item of this.method(step.walk)(this.resolve(step.params ?? {}))) found.push(item);
    this.match(found, step, where);
  }

  // The whole file read as rows (a cut-off or undecodable file throws), then matched like a walk's items.
  async export(step, where) {
    const file = await this.method(step.export)(this.resolve(step.params ?? {}));
    const expect = this.resolve(step.expect);
    check(expect.format === undefined || file.format === expect.format, where, 'format', file.format);
    const rows = [];
    for await (const row of file.rows()) rows.push(row);
    this.match(rows, step, where);
  }

  match(found, step, where) {
    const filter = this.resolve(step.where ?? {});
    const matching = found.filter((o) => Object.entries(filter).every(([k, v]) => dig(o, k) === v));
    const expect = this.resolve(step.expect);
    check(expect.count === undefined || matching.length === expect.count, where, 'count', matching.length);
    const ids = matching.map((o) => o.order_id ?? o.payment_link_id ?? o.id);
    if (expect.distinct) check(new Set(ids).size === ids.length, where, 'an item came twice');
    for (const id of expect.ids ?? []) check(ids.includes(id), where, 'missing', id);
    for (const [k, v] of Object.entries(expect.fields ?? {})) {
      check(matching.every((o) => dig(o, k) === v), where, k, matching.map((o) => dig(o, k)));
    }
  }

  verify(step, where) {
    const spec = this.resolve(step.verify_webhook);
    const delivery = this.saved.delivery;
    let body = Buffer.from(delivery.body, 'base64');
    if (spec.tamper) body = Buffer.from(body.toString('utf8').replace('"livemode":false', '"livemode":true'));
    const now = Number(delivery.headers['x-service-timestamp']) + (spec.now_offset_s ?? 0);
    const expect = this.resolve(step.expect);
    let event;
    try {
      event = verifyWebhook(body, delivery.headers, spec.secret, { now });
    } catch (e) {
      if (!(e instanceof WebhookVerificationError)) throw e;
      check(expect.ok === false, where, 'refused', e.message);
      return;
    }
    check(expect.ok === true, where, 'accepted');
    for (const [k, v] of Object.entries(expect.fields ?? {})) check(dig(event, k) === v, where, k);
  }
}

async function post(url, payload) {
  const headers = { 'content-type': 'application/json' };
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(payload), headers });
  await res.text();
}

async function awaitDelivery(want, timeoutS = 30) {
  const deadline = Date.now() + timeoutS * 1000;
  while (Date.now() < deadline) {
    const deliveries = await (await fetch(`${env.control_url}/deliveries`)).json();
    const found = deliveries.find((d) => {
      const event = JSON.parse(Buffer.from(d.body, 'base64').toString('utf8'));
      return event.type === want.type && event.data.order_id === want.order_id;
    });
    if (found) return found;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no ${JSON.stringify(want)} delivered within ${timeoutS} s`);
}

const failures = [];
for (const c of cases) {
  if (only && c.name !== only) continue;
  try {
    await new Case(c).run();
    console.log(`ok - ${c.name}`);
  } catch (e) {
    failures.push(c.name);
    console.log(`not ok - ${c.name}: ${e.stack ?? e}`);
  }
}
process.exitCode = failures.length ? 1 : 0;
