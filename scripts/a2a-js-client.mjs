// Asks Cardex's own A2A agent for agents with the a2a-js SDK's client, the
// way an agent built on it would (docs/discovery.md "Cardex as an A2A
// agent"). Run by scripts/a2a-js-check.sh, which installs the SDK outside
// the repository and starts a demo server; CARDEX_URL is its base URL.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const { ClientFactory } = require('@a2a-js/sdk/client');
const { Role } = require('@a2a-js/sdk');

const base = process.env.CARDEX_URL;
const fail = (msg) => { console.error('FAIL ' + msg); process.exit(1); };

const client = await new ClientFactory().createFromUrl(base);
const reply = await client.sendMessage({
  message: {
    messageId: crypto.randomUUID(), role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: 'currency' } },
            { content: { $case: 'data', value: { pageSize: 5 } } }],
  },
});
const msg = reply.message ?? reply.payload?.value ?? reply;
const parts = msg.parts ?? [];
const data = parts.map((p) => p.content).find((c) => c && c.$case === 'data');
if (!data) fail('the reply has no data part: ' + JSON.stringify(reply).slice(0, 400));
const page = data.value;
if (!Array.isArray(page.agents) || page.agents.length === 0 || page.agents.length > 5 || typeof page.totalSize !== 'number') {
  fail('the data part is not a page of at most 5 agents: ' + JSON.stringify(page).slice(0, 400));
}
console.log(`ok sendMessage: ${page.totalSize} agents match "currency", first: ${page.agents[0].name}`);

// A refused method answers an A2A error the client reports, not a hang.
try {
  await client.getTask({ id: 'no-such-task' });
  fail('getTask of an unknown task answered');
} catch (e) {
  console.log('ok getTask refused: ' + String(e.message ?? e).slice(0, 120));
}
