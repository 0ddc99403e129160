/**
 * A Q8_0 copy of a real model (stories260K, quantized with src/tools/quantize.ts) run through the
 * wasm backend — int8 weights and, since the matmuls quantize activations to int8 blocks, int8
 * activations — stays close to the F32 original, and 1 and 2 threads agree exactly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openModelFile } from '../../src/format/open.ts';
import { modelAllocator } from '../../src/model/kernels/wasm/select.ts';
import { loadModel } from '../../src/model/registry.ts';
import { quantizeFile } from '../../src/tools/quantize.ts';
import { needsShared, sharedPath } from '../helpers.ts';

/**
 * Tolerance on |Δlogit|, relative to the largest |logit| of the position. Q8_0 rounds each weight
 * (and, in these matmuls, each activation) to 1/254 of its 32-block's max: ≲ 0.4% per value. On
 * this tiny model (width 64: rows of only two blocks, peaky activations, 5 layers) that is not
 * small: measured max |Δlogit|/max|logit| is 5.4% for the Q8_0 weights alone (f32 activations, JS
 * reference kernels) and 5.2% with int8 activations too. 10% leaves room for that, while a wrong
 * scale, offset or block layout (errors of the order of the logits themselves) still fails; the
 * greedy choice must also agree at nearly every position.
 */
const REL_TOL = 0.1;

test('stories260K Q8_0 (int8 weights and activations) gives logits close to its F32 original; 1 and 2 threads identical (logits and greedy tokens)', { skip: needsShared() }, () => {
  // every op of the 2-thread model goes through the pool (this file's process creates the backends)
  process.env['TOKENLOOP_PARALLEL_MIN_MACS'] = '0';
  const src = sharedPath('models', 'stories260K', 'stories260K.gguf');
  const dir = mkdtempSync(join(tmpdir(), 'tokenloop-q8-'));
  try {
    const q8 = join(dir, 'stories260K-Q8_0.gguf');
    quantizeFile(src, q8, 'Q8_0');
    const f32 = loadModel(openModelFile(src), { backend: 'wasm', threads: 1 });
    const a = loadModel(openModelFile(q8, { allocate: modelAllocator({ threads: 1 }) }), { backend: 'wasm', threads: 1 });
    const b = loadModel(openModelFile(q8, { allocate: modelAllocator({ threads: 2 }) }), { backend: 'wasm', threads: 2 });
    const exact = loadModel(openModelFile(q8), { backend: 'js' });
    const tokens = [1, 403, 407, 261, 378, 360, 271, 266, 303, 387, 270, 433, 270, 289, 261, 280, 341, 265, 268, 407];
    const ref = f32.forward(tokens, f32.createCache(32), { allLogits: true });
    const got = a.forward(tokens, a.createCache(32), { allLogits: true });
    const got2 = b.forward(tokens, b.createCache(32), { allLogits: true });
    const dequant = exact.forward(tokens, exact.createCache(32), { allLogits: true });
    assert.deepEqual(got2, got, '2 threads differ from 1');
    // greedy decoding through the KV cache (one-token matvecs and attention): identical too
    const greedy = (m: typeof a): number[] => {
      const cache = m.createCache(64);
      let l = m.forward(tokens, cache);
      const ids: number[] = [];
      for (let i = 0; i < 24; i++) {
        let best = 0;
        for (let j = 1; j < l.length; j++) if (l[j]! > l[best]!) best = j;
        ids.push(best);
        l = m.forward([best], cache);
      }
      return ids;
    };
    assert.deepEqual(greedy(b), greedy(a), 'greedy tokens differ between 1 and 2 threads');
    const V = f32.config.nVocab;
    /** Worst |Δlogit|/max|logit| over positions, and at how many positions the argmax agrees. */
    const compare = (x: Float32Array, y: Float32Array): [number, number] => {
      let worst = 0, agree = 0;
      for (let t = 0; t < tokens.length; t++) {
        let range = 0, err = 0, ia = 0, ib = 0;
        for (let i = 0; i < V; i++) {
          const r = y[t * V + i]!, g = x[t * V + i]!;
          range = Math.max(range, Math.abs(r));
          err = Math.max(err, Math.abs(g - r));
          if (r > y[t * V + ia]!) ia = i;
          if (g > x[t * V + ib]!) ib = i;
        }
        worst = Math.max(worst, err / range);
        if (ia === ib) agree++;
      }
      return [worst, agree];
    };
    const [worst, agree] = compare(got, ref);
    assert.ok(worst <= REL_TOL, `Q8_0 vs F32: max |Δlogit| / max |logit| = ${worst}`);
    assert.ok(agree >= tokens.length - 2, `Q8_0 vs F32: greedy choice agrees at only ${agree}/${tokens.length} positions`);
    // the int8-activation kernels against exact (f32-activation) arithmetic on the same Q8_0 weights
    const [worstAct, agreeAct] = compare(got, dequant);
    assert.ok(worstAct <= REL_TOL, `int8 vs f32 activations: max |Δlogit| / max |logit| = ${worstAct}`);
    assert.ok(agreeAct >= tokens.length - 2, `int8 vs f32 activations: greedy choice agrees at only ${agreeAct}/${tokens.length} positions`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('load-time warm-up (default with the wasm backend) leaves no trace: a warmed and an unwarmed model give the same logits bit for bit', { skip: needsShared() }, () => {
  const src = sharedPath('models', 'stories260K', 'stories260K.gguf');
  const dir = mkdtempSync(join(tmpdir(), 'tokenloop-warm-'));
  try {
    for (const type of ['Q8_0', 'Q4_0'] as const) {
      const path = join(dir, `stories260K-${type}.gguf`);
      quantizeFile(src, path, type);
      const cold = loadModel(openModelFile(path, { allocate: modelAllocator({ threads: 1 }) }), { backend: 'wasm', threads: 1, warmup: false });
      const warm = loadModel(openModelFile(path, { allocate: modelAllocator({ threads: 1 }) }), { backend: 'wasm', threads: 1 });
      // the warm-up's own tokens (0..7) as the prompt: the same activations as its prefill
      for (const tokens of [[0, 1, 2, 3, 4, 5, 6, 7], [1, 403, 407, 261, 378, 360, 271, 266, 303, 387, 270]]) {
        const a = cold.forward(tokens, cold.createCache(32), { allLogits: true });
        const b = warm.forward(tokens, warm.createCache(32), { allLogits: true });
        assert.deepEqual(b, a, `${type}: warm-up changed the logits of ${tokens.length} tokens`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a long input runs in batches of batchSize tokens: F32 logits bit-identical to one batch (all positions and last), Q8_0 within its tolerance, the cache the same length; bad batchSize rejected', { skip: needsShared() }, () => {
  const src = sharedPath('models', 'stories260K', 'stories260K.gguf');
  const tokens = Array.from({ length: 45 }, (_, i) => 1 + ((i * 37) % 500));
  const whole = loadModel(openModelFile(src), { backend: 'wasm', threads: 1 });
  const split = loadModel(openModelFile(src), { backend: 'wasm', threads: 1, batchSize: 16 });
  assert.equal(split.batchSize, 16);
  const c1 = whole.createCache(64), c2 = split.createCache(64);
  const a = whole.forward(tokens, c1, { allLogits: true }), b = split.forward(tokens, c2, { allLogits: true });
  assert.equal(b.length, a.length);
  assert.deepEqual(b, a, 'batched logits differ');
  assert.equal(c2.length, c1.length);
  assert.deepEqual(split.forward([5], c2), whole.forward([5], c1), 'the next step after a batched prefill differs');
  assert.deepEqual(split.forward(tokens, split.createCache(64)), whole.forward(tokens, whole.createCache(64)), 'last-position logits differ');
  // a batch that does not fit is refused before anything is appended
  const small = split.createCache(40);
  assert.throws(() => split.forward(tokens, small), /context is full/);
  assert.equal(small.length, 0);
  assert.throws(() => loadModel(openModelFile(src), { batchSize: 0 }), /batchSize must be a positive integer/);
  const dir = mkdtempSync(join(tmpdir(), 'tokenloop-batch-'));
  try {
    const q8 = join(dir, 'q8.gguf');
    quantizeFile(src, q8, 'Q8_0');
    const qa = loadModel(openModelFile(q8, { allocate: modelAllocator({ threads: 1 }) }), { backend: 'wasm', threads: 1 });
    const qb = loadModel(openModelFile(q8, { allocate: modelAllocator({ threads: 1 }) }), { backend: 'wasm', threads: 1, batchSize: 13 });
    const la = qa.forward(tokens, qa.createCache(64), { allLogits: true }), lb = qb.forward(tokens, qb.createCache(64), { allLogits: true });
    const V = qa.config.nVocab;
    for (let p = 0; p < tokens.length; p++) {
      let m = 0, d = 0;
      for (let i = 0; i < V; i++) { m = Math.max(m, Math.abs(la[p * V + i]!)); d = Math.max(d, Math.abs(la[p * V + i]! - lb[p * V + i]!)); }
      assert.ok(d <= 0.02 * m, `Q8_0 position ${p}: batched logits differ by ${d} (max |logit| ${m})`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
