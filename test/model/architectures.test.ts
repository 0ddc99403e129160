/**
 * The six synthetic architecture models of ../shared/reference/architectures against llama.cpp's
 * own logits (F32 KV cache): one batch, batch + incremental through the KV cache, and greedy ids.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { needsShared, sharedPath } from '../helpers.js';
import { openModelFile } from '../../src/format/open.js';
import { loadModel } from '../../src/model/registry.js';

interface ArchRef {
  arch: string;
  tokens: number[];
  logits_kv_f32: number[][];
  greedy: { prompt: number[]; ids: number[]; top1_minus_top2: number[] };
}

// ggml's F16 GELU table is emulated by default, so gemma meets the non-GELU bound. gemma2 (26
// layers) stays at ~5e-4, as the README's float64 check with the table emulated does (5.0e-4):
// f32-vs-double differences flip F16 roundings of GELU inputs. gpt2 lands at ~2.4e-4 for the same
// reason (which inputs flip depends on the f32 summation order of our GEMM vs llama.cpp's).
const TOL: Record<string, number> = { llama: 1e-4, qwen2: 1e-4, phi3: 1e-4, gemma: 1e-4, gemma2: 1e-3, gpt2: 5e-4 };

function argmax(a: Float32Array): number {
  let best = 0;
  for (let i = 1; i < a.length; i++) if (a[i]! > a[best]!) best = i;
  return best;
}

function rowDiff(a: Float32Array, off: number, ref: number[]): number {
  let m = 0;
  for (let i = 0; i < ref.length; i++) m = Math.max(m, Math.abs(a[off + i]! - ref[i]!));
  return m;
}

for (const arch of Object.keys(TOL)) {
  test(`${arch}: logits match llama.cpp (one batch, batch + incremental, greedy)`, { skip: needsShared() }, () => {
    const ref: ArchRef = JSON.parse(readFileSync(sharedPath('reference', 'architectures', `${arch}.json`), 'utf8'));
    const model = loadModel(openModelFile(sharedPath('reference', 'architectures', `${arch}.gguf`)));
    assert.equal(model.config.architecture, arch);
    const V = model.config.nVocab;
    const tol = TOL[arch]!;
    const n = ref.tokens.length;

    const all = model.forward(ref.tokens, model.createCache(), { allLogits: true });
    assert.equal(all.length, n * V);
    let worst = 0;
    for (let p = 0; p < n; p++) worst = Math.max(worst, rowDiff(all, p * V, ref.logits_kv_f32[p]!));
    assert.ok(worst <= tol, `one batch: max |Δlogit| ${worst} > ${tol}`);

    // First 4 tokens as one batch, then one at a time through the cache.
    const cache = model.createCache(n);
    const head = model.forward(ref.tokens.slice(0, 4), cache, { allLogits: true });
    worst = 0;
    for (let p = 0; p < 4; p++) worst = Math.max(worst, rowDiff(head, p * V, ref.logits_kv_f32[p]!));
    for (let p = 4; p < n; p++) worst = Math.max(worst, rowDiff(model.forward([ref.tokens[p]!], cache), 0, ref.logits_kv_f32[p]!));
    assert.ok(worst <= tol, `incremental: max |Δlogit| ${worst} > ${tol}`);

    // Greedy continuation, compared while the recorded top-1/top-2 margin exceeds the tolerance.
    const g = ref.greedy;
    const gc = model.createCache(g.prompt.length + g.ids.length);
    let logits = model.forward(g.prompt, gc);
    const ids: number[] = [];
    for (let i = 0; i < g.ids.length; i++) {
      const id = argmax(logits);
      ids.push(id);
      logits = model.forward([id], gc);
    }
    let m = 0;
    while (m < g.ids.length && g.top1_minus_top2[m]! > 2 * tol) m++;
    assert.ok(m >= 1);
    assert.deepEqual(ids.slice(0, m), g.ids.slice(0, m), `greedy ids (first ${m} steps)`);
  });
}

for (const arch of ['gemma', 'gpt2']) {
  test(`${arch}: exact tanh-GELU (exactGelu) stays within 2e-3 of llama.cpp and differs from the F16 table`, { skip: needsShared() }, () => {
    const ref: ArchRef = JSON.parse(readFileSync(sharedPath('reference', 'architectures', `${arch}.json`), 'utf8'));
    const file = openModelFile(sharedPath('reference', 'architectures', `${arch}.gguf`));
    const exact = loadModel(file, { exactGelu: true });
    const table = loadModel(file);
    const a = exact.forward(ref.tokens, exact.createCache(), { allLogits: true });
    const b = table.forward(ref.tokens, table.createCache(), { allLogits: true });
    const V = exact.config.nVocab;
    let worst = 0, apart = 0;
    for (let p = 0; p < ref.tokens.length; p++) worst = Math.max(worst, rowDiff(a, p * V, ref.logits_kv_f32[p]!));
    for (let i = 0; i < a.length; i++) apart = Math.max(apart, Math.abs(a[i]! - b[i]!));
    assert.ok(worst <= 2e-3, `max |Δlogit| ${worst}`);
    assert.ok(apart > 1e-5, 'exact GELU should differ from the F16 table');
  });
}
