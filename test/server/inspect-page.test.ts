import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadLanguageModel } from '../../src/generate/language-model.js';
import { needsShared, sharedPath } from '../helpers.js';
import { post, startTestServer, type TestServer } from './server-helpers.js';

const skip = needsShared();
let srv: TestServer;

before(async () => {
  if (skip) return;
  srv = await startTestServer(loadLanguageModel({ model: sharedPath('models', 'stories260K', 'stories260K.bin') }));
});
after(async () => { await srv?.close(); });

test('GET /inspect serves the page and its script and style; nothing else under /inspect', { skip }, async () => {
  const page = await fetch(`${srv.url}/inspect`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type')!, /^text\/html/);
  const html = await page.text();
  assert.match(html, /<title>tokenloop inspector<\/title>/);
  assert.match(html, /src="\/inspect\/inspector\.js"/);
  const js = await fetch(`${srv.url}/inspect/inspector.js`);
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type')!, /javascript/);
  assert.match(await js.text(), /\/inspect\/run/);
  assert.equal((await fetch(`${srv.url}/inspect/inspector.css`)).status, 200);
  assert.equal((await fetch(`${srv.url}/inspect/..%2Fpackage.json`)).status, 404);
});

test('POST /inspect/run returns a trace: steps with raw top-K, stages, chosen tokens, cache growth', { skip }, async () => {
  const r = await post(`${srv.url}/inspect/run`, { prompt: 'Once upon a time', max_tokens: 6, temperature: 0.8, top_k: 12, top_p: 0.9, seed: 9, top: 4 });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const t = r.body;
  assert.equal(t.model, 'stories260K.bin');
  assert.equal(t.steps.length, 6);
  assert.equal(t.chain.seed, 9);
  assert.deepEqual(t.steps.map((s: any) => s.chosen.id), t.tokens);
  t.steps.forEach((s: any, i: number) => {
    assert.equal(s.raw.top.length, 4);
    assert.ok(s.raw.top.reduce((a: number, c: any) => a + c.prob, 0) <= 1 + 1e-9);
    assert.equal(s.stages[0].name, 'input');
    assert.ok(s.stages.find((x: any) => x.name === 'top-k').size <= 12);
    assert.equal(s.position, t.prompt.tokens.length + i);
  });
  const bad = await post(`${srv.url}/inspect/run`, { prompt: 'x', max_tokens: 100000 });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.param, 'max_tokens');
});
