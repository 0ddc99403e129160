/**
 * What tokenloop does not implement is refused with an UnsupportedError naming the architecture
 * and the metadata key or tensor, never silently ignored: per-layer head counts / FFN sizes,
 * unknown rope.scaling.type values, YaRN log multipliers, M-RoPE sections, mixture-of-experts,
 * and any tensor the family does not read. A plain file and the supported variants still load.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UnsupportedError } from '../../src/errors.js';
import type { MetaValue } from '../../src/format/model-file.js';
import { loadModel } from '../../src/model/registry.js';
import { buildModel, type TensorDef } from './synthetic.js';
import { metaFor, tensorDefs, type Shape } from './synthetic-families.js';

const SHAPE: Shape = { arch: 'llama', E: 16, nHead: 2, nKv: 1, hd: 8, F: 24, V: 40, nLayer: 2, nRot: 8, norm: 'rms' };

function load(meta: [string, MetaValue][] = [], extra: TensorDef[] = [], shape: Shape = SHAPE) {
  const m = new Map(metaFor(shape));
  for (const [k, v] of meta) m.set(k, v);
  return loadModel(buildModel([...m], [...tensorDefs(shape), ...extra], 3).file);
}

/** Assert an UnsupportedError whose message names every pattern. */
function refuses(fn: () => unknown, ...names: RegExp[]): void {
  assert.throws(fn, (e: Error) => {
    assert.ok(e instanceof UnsupportedError, `expected UnsupportedError, got ${e.name}: ${e.message}`);
    for (const n of names) assert.match(e.message, n);
    return true;
  });
}

test('control: the plain file, equal per-layer arrays and the supported rope types load', () => {
  assert.equal(load().forward([1, 2], load().createCache(4)).length, SHAPE.V);
  load([['llama.attention.head_count_kv', [1, 1]], ['llama.feed_forward_length', [24, 24]]]);
  for (const t of ['none', 'linear', 'yarn', 'longrope']) load([['llama.rope.scaling.type', t]]);
  load([['llama.rope.scaling.yarn_log_multiplier', 0]]);
});

test('per-layer head counts and FFN sizes that differ → UnsupportedError naming the key', () => {
  refuses(() => load([['llama.attention.head_count_kv', [1, 2]]]), /llama/, /llama\.attention\.head_count_kv/);
  refuses(() => load([['llama.attention.head_count', [2, 4]]]), /llama\.attention\.head_count\b/);
  refuses(() => load([['llama.feed_forward_length', [24, 48]]]), /llama\.feed_forward_length/);
});

test('unknown rope.scaling.type values → UnsupportedError naming the architecture, key and value', () => {
  for (const t of ['su', 'dynamic', 'ntk', 'llama3', '']) {
    refuses(() => load([['llama.rope.scaling.type', t]]), /^llama:/, /llama\.rope\.scaling\.type/, new RegExp(`"${t}"`));
  }
  const qwen: Shape = { ...SHAPE, arch: 'qwen3', hd: 8, qkNorm: 'head' };
  refuses(() => load([['qwen3.rope.scaling.type', 'dynamic']], [], qwen), /^qwen3:/, /qwen3\.rope\.scaling\.type/);
});

test('other rope features not implemented → UnsupportedError naming the key', () => {
  refuses(() => load([['llama.rope.scaling.type', 'yarn'], ['llama.rope.scaling.yarn_log_multiplier', 0.1]]), /llama\.rope\.scaling\.yarn_log_multiplier/);
  refuses(() => load([['llama.rope.dimension_sections', [2, 1, 1, 0]]]), /llama\.rope\.dimension_sections/);
});

test('mixture-of-experts and tensors the family does not read → UnsupportedError naming them', () => {
  refuses(() => load([['llama.expert_count', 8], ['llama.expert_used_count', 2]]), /llama\.expert_count/);
  refuses(() => load([], [{ name: 'blk.0.ffn_gate_inp.weight', dims: [16, 8], kind: 'mat' }]), /^llama:/, /blk\.0\.ffn_gate_inp\.weight/);
  refuses(() => load([], [{ name: 'blk.1.attn_q_norm.weight', dims: [8], kind: 'norm' }]), /blk\.1\.attn_q_norm\.weight/);
  // LongRoPE factors are read by every RoPE family, so a llama file with them loads.
  load([], [{ name: 'rope_factors_long.weight', dims: [4], kind: 'pos' }, { name: 'rope_factors_short.weight', dims: [4], kind: 'pos' }]);
  // gpt2 has no RoPE: rope factors there are unused tensors.
  const gpt2: Shape = { ...SHAPE, arch: 'gpt2', nKv: 2, norm: 'layer', fusedQkv: true, qkvBias: false, ffn: 'plain' };
  const defs = tensorDefs(gpt2);
  const extra: TensorDef[] = [{ name: 'position_embd.weight', dims: [16, 64], kind: 'mat' }];
  for (let l = 0; l < 2; l++) extra.push({ name: `blk.${l}.attn_qkv.bias`, dims: [48], kind: 'bias' }, { name: `blk.${l}.attn_output.bias`, dims: [16], kind: 'bias' });
  const file = (more: TensorDef[]) => buildModel(metaFor(gpt2), [...defs, ...extra, ...more], 3).file;
  loadModel(file([]));
  refuses(() => loadModel(file([{ name: 'rope_freqs.weight', dims: [4], kind: 'pos' }])), /^gpt2:/, /rope_freqs\.weight/);
});
