/**
 * forward({ reuseLogits }): the same logits as a fresh array, in one array the model overwrites on
 * its next call (js and wasm backends, 1 and 2 threads); without the option every call returns a
 * new array that later calls leave alone; batched prompts with allLogits never hand out the reused
 * array. Runs on stories260K (GGUF).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { needsShared, sharedPath } from '../helpers.js';
import { openModelFile } from '../../src/format/open.js';
import { loadModel, type LoadModelOptions } from '../../src/model/registry.js';

const PROMPT = [1, 403, 407, 261, 378, 429, 438, 260, 395];
const STEPS = [351, 270, 407, 438, 275, 261];

for (const opts of [{ backend: 'js' }, { backend: 'wasm', threads: 1 }, { backend: 'wasm', threads: 2 }] as LoadModelOptions[]) {
  const name = `${opts.backend}${opts.threads ? ` ${opts.threads}T` : ''}`;
  test(`reuseLogits (${name}): the fresh array's logits, in one array overwritten by the next call`, { skip: needsShared() }, () => {
    const file = () => openModelFile(sharedPath('models', 'stories260K', 'stories260K.gguf'));
    const a = loadModel(file(), opts), b = loadModel(file(), opts);
    const ca = a.createCache(64), cb = b.createCache(64);
    const fresh: Float32Array[] = [a.forward(PROMPT, ca)];
    const reused: Float32Array[] = [b.forward(PROMPT, cb, { reuseLogits: true })];
    const copies: Float32Array[] = [reused[0]!.slice()];
    for (const id of STEPS) {
      fresh.push(a.forward([id], ca));
      reused.push(b.forward([id], cb, { reuseLogits: true }));
      copies.push(reused[reused.length - 1]!.slice());
    }
    const V = a.config.nVocab;
    for (let i = 0; i < fresh.length; i++) {
      assert.equal(reused[i]!.length, V);
      assert.deepEqual(copies[i], fresh[i], `step ${i}: reused logits differ from a fresh array's`);
    }
    // one array throughout, holding the last step's logits
    for (const r of reused) assert.equal(r.buffer, reused[0]!.buffer);
    for (const r of reused) assert.equal(r.byteOffset, reused[0]!.byteOffset);
    assert.deepEqual(reused[0], fresh[fresh.length - 1]);
    // fresh arrays are distinct and keep their step's values
    assert.notEqual(fresh[0], fresh[1]);
    assert.notDeepEqual(fresh[0], fresh[fresh.length - 1]);
  });
}

test('reuseLogits with allLogits over a prompt run in batches: every position, fresh', { skip: needsShared() }, () => {
  const model = loadModel(openModelFile(sharedPath('models', 'stories260K', 'stories260K.gguf')), { backend: 'wasm', threads: 1, batchSize: 4 } as LoadModelOptions);
  const want = model.forward(PROMPT, model.createCache(64), { allLogits: true });
  const got = model.forward(PROMPT, model.createCache(64), { allLogits: true, reuseLogits: true });
  assert.equal(got.length, PROMPT.length * model.config.nVocab);
  assert.deepEqual(got, want);
  model.forward([5], model.createCache(64), { reuseLogits: true });
  model.forward(PROMPT.slice(0, 3), model.createCache(64), { reuseLogits: true });
  assert.deepEqual(got, want, 'later reusing calls left the batched result alone');
});
