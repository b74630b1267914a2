// Verifies one delivery with the npm standardwebhooks library: {body (base64), headers, secret} on stdin.
import { Webhook } from 'standardwebhooks';
import { readFileSync } from 'node:fs';

const input = JSON.parse(readFileSync(0, 'utf8'));
try {
  const event = new Webhook(input.secret).verify(Buffer.from(input.body, 'base64').toString('utf8'), input.headers);
  console.log(JSON.stringify({ ok: true, id: event.id }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e.message || e) }));
}
