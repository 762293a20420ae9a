// Regenerates a2a-js-hybrid.json: hybrid agent cards (v1 members plus the
// v0.3 compatibility members an a2a-js agent serves to v0.3 clients) signed
// by the a2a-js SDK's own generateAgentCardSignature, checked with its own
// verifyAgentCardSignature, and the public keys that verify them.
//
//   dir=$(mktemp -d) && (cd "$dir" && npm init -y >/dev/null && npm install @a2a-js/sdk@1.3.0)
//   NODE_PATH="$dir/node_modules" node --input-type=module < generate.mjs > a2a-js-hybrid.json
//
// (run from this directory; the SDK is installed outside the repository).
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const { generateAgentCardSignature, verifyAgentCardSignature } = require('@a2a-js/sdk');
const jose = require('jose');

const base = 'https://agent.example';
function card(variant) {
  const c = {
    name: 'Hybrid ' + variant,
    description: 'An a2a-js agent serving v1 and v0.3 clients',
    version: '1.0.0',
    supportedInterfaces: [{ url: base + '/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    provider: { organization: 'Example', url: 'https://example.com' },
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes text', tags: ['echo'] }],
    // The v0.3 rendering: outside the v1 schema, so not signed.
    url: base + '/a2a/jsonrpc',
    preferredTransport: 'JSONRPC',
    protocolVersion: '0.3.0',
    additionalInterfaces: [{ url: base + '/a2a/jsonrpc', transport: 'JSONRPC' }],
  };
  if (variant.startsWith('bearer')) {
    const spelling = variant === 'bearer-lower' ? 'bearer' : 'Bearer';
    c.securitySchemes = {
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' }, type: 'http', scheme: spelling, bearerFormat: 'JWT' },
    };
    c.securityRequirements = [{ schemes: { bearer: { list: ['read'] } } }];
    c.security = [{ bearer: ['read'] }];
  }
  if (variant === 'empty') {
    // Empty elements the SDK removes before signing.
    c.supportedInterfaces.push({ url: '', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' });
    c.skills.push({ id: '', name: '', description: '', tags: [] });
    c.skills[0].tags.push('');
    c.defaultInputModes.push('');
  }
  return c;
}

const algs = { ES256: ['ES256', {}], EdDSA: ['EdDSA', { crv: 'Ed25519' }], RS256: ['RS256', { modulusLength: 2048 }] };
const out = { jwks: { keys: [] }, cards: {} };
for (const [name, [alg, opts]] of Object.entries(algs)) {
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, { ...opts, extractable: true });
  const jwk = await jose.exportJWK(publicKey);
  jwk.kid = 'js-' + name;
  jwk.alg = alg;
  out.jwks.keys.push(jwk);
  const sign = generateAgentCardSignature(privateKey, { alg, kid: jwk.kid, typ: 'JOSE' });
  const verify = verifyAgentCardSignature(async () => publicKey);
  for (const variant of ['plain', 'bearer-upper', 'bearer-lower', 'empty']) {
    const signed = await sign(card(variant));
    await verify(JSON.parse(JSON.stringify(signed))); // throws when the SDK does not accept it
    out.cards[name + '-' + variant] = signed;
  }
}
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
