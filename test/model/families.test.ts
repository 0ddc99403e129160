/**
 * Families without shared reference files (qwen3, stablelm, starcoder2, olmo2, internlm2, llama
 * with rope scaling, F16/BF16 weights): seeded random GGUFs built in memory, checked against the
 * float64 reference forward in synthetic.ts (README formulas) within 1e-4, through one batch and
 * through the KV cache one token at a time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GGMLType } from '../../src/format/dtypes.js';
import type { MetaValue } from '../../src/format/model-file.js';
import { loadModel } from '../../src/model/registry.js';
import { buildModel, referenceForward, type RefConfig, type TensorDef } from './synthetic.js';

interface Shape {
  arch: string; E: number; nHead: number; nKv: number; hd: number; F: number; V: number; nLayer: number;
  norm: 'rms' | 'layer'; attnNorm?: boolean; qkvBias?: boolean; oBias?: boolean; qkNorm?: 'none' | 'head' | 'full';
  postNorms?: boolean; ffnNorm?: boolean; ffn?: 'gated' | 'plain'; output?: boolean; type?: GGMLType;
  extraMeta?: [string, MetaValue][]; extraTensors?: TensorDef[];
}

function tensorDefs(s: Shape): TensorDef[] {
  const q = s.nHead * s.hd, kv = s.nKv * s.hd;
  const d: TensorDef[] = [{ name: 'token_embd.weight', dims: [s.E, s.V], kind: 'mat', type: s.type }];
  const normDefs = (p: string, n: number) => [{ name: p + '.weight', dims: [n], kind: 'norm' as const },
    ...(s.norm === 'layer' ? [{ name: p + '.bias', dims: [n], kind: 'bias' as const }] : [])];
  d.push(...normDefs('output_norm', s.E));
  if (s.output !== false) d.push({ name: 'output.weight', dims: [s.E, s.V], kind: 'mat', type: s.type });
  for (let l = 0; l < s.nLayer; l++) {
    const P = `blk.${l}.`;
    if (s.attnNorm !== false) d.push(...normDefs(P + 'attn_norm', s.E));
    d.push({ name: P + 'attn_q.weight', dims: [s.E, q], kind: 'mat', type: s.type },
      { name: P + 'attn_k.weight', dims: [s.E, kv], kind: 'mat', type: s.type },
      { name: P + 'attn_v.weight', dims: [s.E, kv], kind: 'mat', type: s.type });
    if (s.qkvBias) d.push({ name: P + 'attn_q.bias', dims: [q], kind: 'bias' }, { name: P + 'attn_k.bias', dims: [kv], kind: 'bias' }, { name: P + 'attn_v.bias', dims: [kv], kind: 'bias' });
    if (s.qkNorm === 'head') d.push({ name: P + 'attn_q_norm.weight', dims: [s.hd], kind: 'norm' }, { name: P + 'attn_k_norm.weight', dims: [s.hd], kind: 'norm' });
    if (s.qkNorm === 'full') d.push({ name: P + 'attn_q_norm.weight', dims: [q], kind: 'norm' }, { name: P + 'attn_k_norm.weight', dims: [kv], kind: 'norm' });
    d.push({ name: P + 'attn_output.weight', dims: [q, s.E], kind: 'mat', type: s.type });
    if (s.oBias) d.push({ name: P + 'attn_output.bias', dims: [s.E], kind: 'bias' });
    if (s.postNorms) d.push({ name: P + 'post_attention_norm.weight', dims: [s.E], kind: 'norm' });
    if (s.ffnNorm !== false) d.push(...normDefs(P + 'ffn_norm', s.E));
    if ((s.ffn ?? 'gated') === 'gated') {
      d.push({ name: P + 'ffn_gate.weight', dims: [s.E, s.F], kind: 'mat', type: s.type }, { name: P + 'ffn_up.weight', dims: [s.E, s.F], kind: 'mat', type: s.type },
        { name: P + 'ffn_down.weight', dims: [s.F, s.E], kind: 'mat', type: s.type });
    } else {
      d.push({ name: P + 'ffn_up.weight', dims: [s.E, s.F], kind: 'mat', type: s.type }, { name: P + 'ffn_up.bias', dims: [s.F], kind: 'bias' },
        { name: P + 'ffn_down.weight', dims: [s.F, s.E], kind: 'mat', type: s.type }, { name: P + 'ffn_down.bias', dims: [s.E], kind: 'bias' });
    }
    if (s.postNorms) d.push({ name: P + 'post_ffw_norm.weight', dims: [s.E], kind: 'norm' });
  }
  return [...d, ...(s.extraTensors ?? [])];
}

function metaFor(s: Shape, nRot: number): [string, MetaValue][] {
  const a = s.arch;
  return [
    ['general.architecture', a], [`${a}.context_length`, 64], [`${a}.embedding_length`, s.E], [`${a}.block_count`, s.nLayer],
    [`${a}.feed_forward_length`, s.F], [`${a}.attention.head_count`, s.nHead], [`${a}.attention.head_count_kv`, s.nKv],
    [`${a}.attention.key_length`, s.hd], [`${a}.attention.value_length`, s.hd],
    [s.norm === 'rms' ? `${a}.attention.layer_norm_rms_epsilon` : `${a}.attention.layer_norm_epsilon`, 1e-5],
    [`${a}.rope.freq_base`, 10000], [`${a}.rope.dimension_count`, nRot], ...(s.extraMeta ?? []),
  ];
}

const TOKENS = [1, 17, 250, 3, 99, 400, 12, 5, 77, 300, 2, 45];
const BASE = { E: 32, nHead: 4, nKv: 2, hd: 8, F: 48, V: 500, nLayer: 2 };

function check(s: Shape, ref: Omit<RefConfig, 'nEmbd' | 'nHead' | 'nKv' | 'headDim' | 'nFF' | 'nLayer' | 'nVocab' | 'eps' | 'base' | 'output'>, tol = 1e-4, seed = 7): void {
  const { file, w } = buildModel(metaFor(s, ref.nRot), tensorDefs(s), seed);
  const model = loadModel(file);
  assert.equal(model.config.architecture, s.arch);
  const V = s.V;
  const expected = referenceForward({
    ...ref, nEmbd: s.E, nHead: s.nHead, nKv: s.nKv, headDim: s.hd, nFF: s.F, nLayer: s.nLayer, nVocab: V, eps: 1e-5, base: 10000,
    output: s.output === false ? 'token_embd.weight' : 'output.weight',
  }, w, TOKENS);
  const all = model.forward(TOKENS, model.createCache(32), { allLogits: true });
  const cache = model.createCache(32);
  const first = model.forward(TOKENS.slice(0, 3), cache, { allLogits: true });
  let worstBatch = 0, worstInc = 0;
  for (let p = 0; p < TOKENS.length; p++) {
    const inc = p < 3 ? first.subarray(p * V, (p + 1) * V) : model.forward([TOKENS[p]!], cache);
    for (let i = 0; i < V; i++) {
      worstBatch = Math.max(worstBatch, Math.abs(all[p * V + i]! - expected[p]![i]!));
      worstInc = Math.max(worstInc, Math.abs(inc[i]! - expected[p]![i]!));
    }
  }
  assert.ok(worstBatch <= tol, `${s.arch}: one batch max |Δ| ${worstBatch}`);
  assert.ok(worstInc <= tol, `${s.arch}: incremental max |Δ| ${worstInc}`);
  // The check must be able to fail: the logits are far from trivial.
  assert.ok(Math.max(...expected[TOKENS.length - 1]!.map(Math.abs)) > 0.05);
}

const common = { attnNorm: true, qkNorm: 'none' as const, postNorms: false, ffnNorm: true, parallel: false, ffn: 'gated' as const, act: 'silu' as const, posEmbd: false };

test('qwen3: per-head Q/K RMSNorm, NEOX, head_dim != n_embd/n_head, tied output', () => {
  const s: Shape = { arch: 'qwen3', ...BASE, hd: 16, norm: 'rms', qkNorm: 'head', output: false };
  check(s, { ...common, norm: 'rms', rope: 'neox', nRot: 16, qkNorm: 'head' });
});

test('stablelm: LayerNorm, biases, partial NEOX rotary', () => {
  const s: Shape = { arch: 'stablelm', ...BASE, norm: 'layer', qkvBias: true };
  check(s, { ...common, norm: 'layer', rope: 'neox', nRot: 4 });
});

test('stablelm without ffn_norm: parallel residual', () => {
  const s: Shape = { arch: 'stablelm', ...BASE, norm: 'layer', qkvBias: true, ffnNorm: false };
  check(s, { ...common, norm: 'layer', rope: 'neox', nRot: 4, ffnNorm: false, parallel: true });
});

test('starcoder2: LayerNorm, all biases, plain GELU FFN, tied output', () => {
  const s: Shape = { arch: 'starcoder2', ...BASE, norm: 'layer', qkvBias: true, oBias: true, ffn: 'plain', output: false };
  // The engine emulates ggml's F16 GELU table; the reference uses exact tanh-GELU.
  check(s, { ...common, norm: 'layer', rope: 'neox', nRot: 8, ffn: 'plain', act: 'gelu' }, 2e-3);
});

test('starcoder2 with exactGelu meets 1e-4', () => {
  const s: Shape = { arch: 'starcoder2', ...BASE, norm: 'layer', qkvBias: true, oBias: true, ffn: 'plain', output: false };
  const { file, w } = buildModel(metaFor(s, 8), tensorDefs(s), 7);
  const model = loadModel(file, { exactGelu: true });
  const exp = referenceForward({ ...common, norm: 'layer', rope: 'neox', nRot: 8, ffn: 'plain', act: 'gelu', nEmbd: s.E, nHead: s.nHead, nKv: s.nKv, headDim: s.hd, nFF: s.F, nLayer: s.nLayer, nVocab: s.V, eps: 1e-5, base: 10000, output: 'token_embd.weight' }, w, TOKENS);
  const all = model.forward(TOKENS, model.createCache(32), { allLogits: true });
  let worst = 0;
  exp.forEach((row, p) => row.forEach((v, i) => { worst = Math.max(worst, Math.abs(all[p * s.V + i]! - v)); }));
  assert.ok(worst <= 1e-4, `max |Δ| ${worst}`);
});

test('olmo2: no pre-norms, full-width Q/K norm, post norms, MHA', () => {
  const s: Shape = { arch: 'olmo2', ...BASE, nKv: 4, norm: 'rms', attnNorm: false, qkNorm: 'full', postNorms: true, ffnNorm: false };
  check(s, { ...common, norm: 'rms', rope: 'neox', nRot: 8, attnNorm: false, qkNorm: 'full', postNorms: true, ffnNorm: false });
});

test('internlm2: llama computation under internlm2 keys', () => {
  const s: Shape = { arch: 'internlm2', ...BASE, norm: 'rms' };
  check(s, { ...common, norm: 'rms', rope: 'norm', nRot: 8 });
});

test('llama: linear rope scaling (rope.scaling.factor 4)', () => {
  const s: Shape = { arch: 'llama', ...BASE, norm: 'rms', extraMeta: [['llama.rope.scaling.type', 'linear'], ['llama.rope.scaling.factor', 4]] };
  check(s, { ...common, norm: 'rms', rope: 'norm', nRot: 8, angle: (p, i) => (p / 4) * Math.pow(10000, (-2 * i) / 8) });
});

test('llama: rope_freqs per-pair divisors (Llama 3.1 style)', () => {
  const s: Shape = { arch: 'llama', ...BASE, norm: 'rms', extraTensors: [{ name: 'rope_freqs.weight', dims: [4], kind: 'pos' }] };
  const { w } = buildModel(metaFor(s, 8), tensorDefs(s), 7);
  const f = w.get('rope_freqs.weight')!;
  check(s, { ...common, norm: 'rms', rope: 'norm', nRot: 8, angle: (p, i) => (p * Math.pow(10000, (-2 * i) / 8)) / f[i]! });
});

test('llama: YaRN rope scaling', () => {
  const factor = 4, nCtxOrig = 16, nRot = 8;
  const s: Shape = { arch: 'llama', ...BASE, norm: 'rms', extraMeta: [['llama.rope.scaling.type', 'yarn'], ['llama.rope.scaling.factor', factor], ['llama.rope.scaling.original_context_length', nCtxOrig]] };
  // YaRN (Peng et al. 2023) as ggml computes it: per pair, blend interpolated and extrapolated
  // angles with a linear ramp between the β_fast = 32 and β_slow = 1 correction dims.
  const corr = (beta: number) => (nRot * Math.log(nCtxOrig / (beta * 2 * Math.PI))) / (2 * Math.log(10000));
  const lo = Math.max(0, Math.floor(corr(32))), hi = Math.min(nRot - 1, Math.ceil(corr(1)));
  const angle = (p: number, i: number) => {
    const ext = p * Math.pow(10000, (-2 * i) / nRot);
    const ramp = 1 - Math.min(1, Math.max(0, (i - lo) / Math.max(0.001, hi - lo)));
    return (ext / factor) * (1 - ramp) + ext * ramp;
  };
  check(s, { ...common, norm: 'rms', rope: 'norm', nRot, angle, mscale: 1 + 0.1 * Math.log(factor) });
});

for (const [name, type] of [['F16', GGMLType.F16], ['BF16', GGMLType.BF16]] as const) {
  test(`llama with ${name} weights (converted inside the kernels)`, () => {
    const s: Shape = { arch: 'llama', ...BASE, norm: 'rms', type };
    check(s, { ...common, norm: 'rms', rope: 'norm', nRot: 8 });
  });
}
