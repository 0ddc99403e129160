/**
 * stories260K (llama2.c checkpoint and its GGUF conversion) against llama2.c's run.c logits:
 * every position within 1e-4, greedy ids reproduced, cache vs recompute within 1e-5.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { needsShared, sharedPath, HAVE_SHARED } from '../helpers.js';
import { openModelFile } from '../../src/format/open.js';
import { loadModel } from '../../src/model/registry.js';

interface Step { pos: number; input: number; next: number; logits: number[] }
interface Case { prompt: string; prompt_tokens: number[]; greedy_tokens: number[]; steps: Step[] }

const cases: Case[] = HAVE_SHARED ? JSON.parse(readFileSync(sharedPath('reference', 'stories260K-greedy.json'), 'utf8')) : [];

function maxDiff(a: Float32Array, aOff: number, b: number[]): number {
  let m = 0;
  for (let i = 0; i < b.length; i++) m = Math.max(m, Math.abs(a[aOff + i]! - b[i]!));
  return m;
}

function argmax(a: Float32Array, off = 0, n = a.length - off): number {
  let best = 0;
  for (let i = 1; i < n; i++) if (a[off + i]! > a[off + best]!) best = i;
  return best;
}

for (const file of ['stories260K.bin', 'stories260K.gguf']) {
  test(`${file}: logits match llama2.c at every position, greedy ids reproduced`, { skip: needsShared() }, () => {
    const model = loadModel(openModelFile(sharedPath('models', 'stories260K', file)));
    const V = model.config.nVocab;
    assert.equal(V, 512);
    for (const c of cases) {
      const cache = model.createCache(256);
      const np = c.prompt_tokens.length;
      const pre = model.forward(c.prompt_tokens, cache, { allLogits: true });
      assert.equal(pre.length, np * V);
      let worst = 0;
      for (let p = 0; p < np; p++) worst = Math.max(worst, maxDiff(pre, p * V, c.steps[p]!.logits));
      const greedy: number[] = [argmax(pre, (np - 1) * V, V)];
      for (let p = np; p < c.steps.length; p++) {
        const step = c.steps[p]!;
        const logits = model.forward([step.input], cache);
        worst = Math.max(worst, maxDiff(logits, 0, step.logits));
        greedy.push(argmax(logits));
      }
      assert.ok(worst <= 1e-4, `${c.prompt}: max |Δlogit| ${worst}`);
      assert.deepEqual(greedy.slice(0, c.greedy_tokens.length), c.greedy_tokens, c.prompt);
    }
  });
}

test('stories260K: KV-cache decoding equals recomputing the whole sequence (1e-5)', { skip: needsShared() }, () => {
  const model = loadModel(openModelFile(sharedPath('models', 'stories260K', 'stories260K.gguf')));
  const V = model.config.nVocab;
  const c = cases[0]!;
  const seq = c.steps.map((s) => s.input);
  const full = model.forward(seq, model.createCache(seq.length), { allLogits: true });
  const cache = model.createCache(seq.length);
  const split = 7;
  const first = model.forward(seq.slice(0, split), cache, { allLogits: true });
  let worst = 0;
  for (let i = 0; i < first.length; i++) worst = Math.max(worst, Math.abs(first[i]! - full[i]!));
  for (let p = split; p < seq.length; p++) {
    const l = model.forward([seq[p]!], cache);
    for (let i = 0; i < V; i++) worst = Math.max(worst, Math.abs(l[i]! - full[p * V + i]!));
  }
  assert.ok(worst <= 1e-5, `max |Δlogit| ${worst}`);
  assert.equal(cache.length, seq.length);
});
