/**
 * Phi-3 LongRoPE (rope_factors_long/short + rope.scaling.attn_factor) and StableLM-2-12B per-head
 * Q/K LayerNorms, each against the float64 reference forward of synthetic.ts written from the
 * formulas: θ_i = pos · base^(−2i/n_rot) / f_i with f = long factors when the context in use
 * exceeds rope.scaling.original_context_length, else short; cos/sin × attn_factor; Q/K of each
 * head LayerNorm-ed over head_dim with that head's own scale (no bias), before RoPE.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ContextOverflowError, ModelFormatError } from '../../src/errors.js';
import { loadModel, type LoadModelOptions } from '../../src/model/registry.js';
import type { TransformerModel } from '../../src/model/transformer.js';
import { referenceForward, buildModel, type RefConfig } from './synthetic.js';
import { buildShape, metaFor, PHI3_LONGROPE, STABLELM_12B, tensorDefs, type Built } from './synthetic-families.js';

const TOKENS = [1, 17, 250, 3, 99, 400, 12, 5, 77, 300, 2, 45, 8, 13, 21, 34, 55, 89, 144];

/** Max |Δ| of the engine (one batch, and 3 tokens + one at a time) against `expected`. */
function worstDiff(b: Built, opts: LoadModelOptions, expected: number[][], cacheSize: number): { batch: number; inc: number } {
  const model = loadModel(b.file, opts);
  const V = b.ref.nVocab;
  const all = model.forward(TOKENS, model.createCache(cacheSize), { allLogits: true });
  const cache = model.createCache(cacheSize);
  const first = model.forward(TOKENS.slice(0, 3), cache, { allLogits: true });
  let batch = 0, inc = 0;
  for (let p = 0; p < TOKENS.length; p++) {
    const row = p < 3 ? first.subarray(p * V, (p + 1) * V) : model.forward([TOKENS[p]!], cache);
    for (let i = 0; i < V; i++) {
      batch = Math.max(batch, Math.abs(all[p * V + i]! - expected[p]![i]!));
      inc = Math.max(inc, Math.abs(row[i]! - expected[p]![i]!));
    }
  }
  return { batch, inc };
}

function maxAbsDiff(a: number[][], b: number[][]): number {
  let m = 0;
  a.forEach((row, p) => row.forEach((v, i) => { m = Math.max(m, Math.abs(v - b[p]![i]!)); }));
  return m;
}

const phi = buildShape(PHI3_LONGROPE.shape(), { rope: 'neox', act: 'silu', parallel: false });
const theta = (p: number, i: number) => p * Math.pow(10000, (-2 * i) / 8);
const refWith = (factors: Float64Array | null, mscale: number): number[][] => referenceForward({
  ...phi.ref, mscale, angle: (p, i) => (factors ? theta(p, i) / factors[i]! : theta(p, i)),
}, phi.w, TOKENS);
const longF = phi.w.get('rope_factors_long.weight')!, shortF = phi.w.get('rope_factors_short.weight')!;
const attnF = Math.fround(PHI3_LONGROPE.attnFactor);

test('phi3 LongRoPE: context above original_context_length → long factors and attn_factor (default = file context 64)', () => {
  const expected = refWith(longF, attnF);
  for (const opts of [{}, { contextLength: 19 }, { contextLength: 64 }]) {
    const m = loadModel(phi.file, opts) as TransformerModel;
    assert.equal(m.spec.rope?.factorSet, 'long');
    const { batch, inc } = worstDiff(phi, opts, expected, TOKENS.length);
    assert.ok(batch <= 1e-4 && inc <= 1e-4, `${JSON.stringify(opts)}: max |Δ| batch ${batch}, incremental ${inc}`);
  }
});

test('phi3 LongRoPE: context within original_context_length → short factors (attn_factor still applied)', () => {
  const expected = refWith(shortF, attnF);
  const m = loadModel(phi.file, { contextLength: 16 }) as TransformerModel;
  assert.equal(m.spec.rope?.factorSet, 'short');
  assert.equal(m.config.nCtx, 16);
  // TOKENS has 19 positions: check the first 16 against the reference (the cache holds 16).
  const V = phi.ref.nVocab;
  const got = m.forward(TOKENS.slice(0, 16), m.createCache(16), { allLogits: true });
  let worst = 0;
  for (let p = 0; p < 16; p++) for (let i = 0; i < V; i++) worst = Math.max(worst, Math.abs(got[p * V + i]! - expected[p]![i]!));
  assert.ok(worst <= 1e-4, `max |Δ| ${worst}`);
  assert.throws(() => m.createCache(17), ContextOverflowError, 'a model loaded for 16 positions refuses a larger cache');
});

test('phi3 LongRoPE: the check can fail (long, short, no factors and no attn_factor all differ by far more than 1e-4)', () => {
  const long = refWith(longF, attnF), short = refWith(shortF, attnF);
  assert.ok(maxAbsDiff(long, short) > 1e-2, 'long vs short');
  assert.ok(maxAbsDiff(long, refWith(null, attnF)) > 1e-2, 'long vs none');
  assert.ok(maxAbsDiff(long, refWith(longF, 1)) > 1e-2, 'attn_factor matters');
});

test('contextLength option: validated, and larger than the file context is refused', () => {
  assert.throws(() => loadModel(phi.file, { contextLength: 65 }), ContextOverflowError);
  assert.throws(() => loadModel(phi.file, { contextLength: 0 }), /contextLength/);
  assert.throws(() => loadModel(phi.file, { contextLength: 2.5 }), /contextLength/);
});

test('rope_freqs together with LongRoPE factors → ModelFormatError', () => {
  const s = PHI3_LONGROPE.shape();
  const { file } = buildModel(metaFor(s), [...tensorDefs(s), { name: 'rope_freqs.weight', dims: [4], kind: 'pos' }], 7);
  assert.throws(() => loadModel(file), (e: Error) => e instanceof ModelFormatError && /rope_freqs/.test(e.message));
});

test('stablelm-2-12b: per-head Q/K LayerNorm ({head_dim, n_head}), parallel residual, partial NEOX', () => {
  const b = buildShape(STABLELM_12B, { rope: 'neox', act: 'silu', parallel: true, qkNormKind: 'layer' });
  const expected = referenceForward(b.ref, b.w, TOKENS);
  const { batch, inc } = worstDiff(b, {}, expected, 32);
  assert.ok(batch <= 1e-4 && inc <= 1e-4, `max |Δ| batch ${batch}, incremental ${inc}`);
  // Using head 0's scale for every head (a shared-weight norm) must give a clearly different answer.
  const shared = new Map(b.w);
  for (let l = 0; l < STABLELM_12B.nLayer; l++) {
    for (const n of ['attn_q_norm', 'attn_k_norm']) shared.set(`blk.${l}.${n}.weight`, b.w.get(`blk.${l}.${n}.weight`)!.slice(0, STABLELM_12B.hd));
  }
  const ref: RefConfig = b.ref;
  assert.ok(maxAbsDiff(expected, referenceForward(ref, shared, TOKENS)) > 1e-2);
});

test('stablelm: a Q/K norm of the wrong shape → ModelFormatError naming the tensor', () => {
  const s = { ...STABLELM_12B, qkNorm: 'head' as const };
  const { file } = buildModel(metaFor(s), tensorDefs(s), 7);
  assert.throws(() => loadModel(file), (e: Error) => e instanceof ModelFormatError && /attn_q_norm\.weight/.test(e.message) && /\[8, 4\]/.test(e.message));
});
