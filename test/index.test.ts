/** The package entry point exposes the documented API (README "Library"). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as api from '../src/index.js';
import { needsShared, sharedPath } from './helpers.js';

test('the README library example runs through the public entry point', { skip: needsShared() }, async () => {
  for (const name of ['loadLanguageModel', 'generate', 'generateText', 'openModelFile', 'loadModel', 'loadTokenizer', 'createSamplingChain', 'KVCache'] as const) {
    assert.equal(typeof api[name], 'function', name);
  }
  const lm = api.loadLanguageModel({ model: sharedPath('models', 'stories260K', 'stories260K.bin') });
  let text = '';
  let reason = '';
  for await (const ev of api.generate(lm, 'Once upon a time', { maxTokens: 16, temperature: 0.7, topP: 0.9, seed: 1, stop: ['\n\n'] })) {
    if (ev.type === 'token') text += ev.text; else { reason = ev.finishReason; assert.equal(ev.text, text); }
  }
  assert.ok(text.length > 0);
  assert.ok(reason === 'length' || reason === 'stop');
});
