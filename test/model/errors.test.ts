/**
 * Bad model files and bad calls: typed errors whose messages name the problem.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ContextOverflowError, InvalidOptionError, ModelFormatError, UnsupportedError } from '../../src/errors.js';
import { GGMLType } from '../../src/format/dtypes.js';
import type { MetaValue } from '../../src/format/model-file.js';
import { loadModel } from '../../src/model/registry.js';
import { buildModel, type TensorDef } from './synthetic.js';

const E = 16, V = 40, F = 24;
function llamaParts(arch = 'llama'): { meta: [string, MetaValue][]; defs: TensorDef[] } {
  const meta: [string, MetaValue][] = [
    ['general.architecture', arch], [`${arch}.context_length`, 8], [`${arch}.embedding_length`, E], [`${arch}.block_count`, 1],
    [`${arch}.feed_forward_length`, F], [`${arch}.attention.head_count`, 2], [`${arch}.attention.head_count_kv`, 1],
    [`${arch}.attention.layer_norm_rms_epsilon`, 1e-5],
  ];
  const defs: TensorDef[] = [
    { name: 'token_embd.weight', dims: [E, V], kind: 'mat' }, { name: 'output_norm.weight', dims: [E], kind: 'norm' },
    { name: 'blk.0.attn_norm.weight', dims: [E], kind: 'norm' }, { name: 'blk.0.attn_q.weight', dims: [E, E], kind: 'mat' },
    { name: 'blk.0.attn_k.weight', dims: [E, 8], kind: 'mat' }, { name: 'blk.0.attn_v.weight', dims: [E, 8], kind: 'mat' },
    { name: 'blk.0.attn_output.weight', dims: [E, E], kind: 'mat' }, { name: 'blk.0.ffn_norm.weight', dims: [E], kind: 'norm' },
    { name: 'blk.0.ffn_gate.weight', dims: [E, F], kind: 'mat' }, { name: 'blk.0.ffn_up.weight', dims: [E, F], kind: 'mat' },
    { name: 'blk.0.ffn_down.weight', dims: [F, E], kind: 'mat' },
  ];
  return { meta, defs };
}

test('a valid tiny llama loads and runs (control for the cases below)', () => {
  const { meta, defs } = llamaParts();
  const m = loadModel(buildModel(meta, defs, 1).file);
  assert.equal(m.forward([1, 2, 3], m.createCache()).length, V);
});

test('unknown architecture → UnsupportedError naming it', () => {
  const { meta, defs } = llamaParts('mamba9');
  assert.throws(() => loadModel(buildModel(meta, defs, 1).file), (e: Error) => e instanceof UnsupportedError && /"mamba9"/.test(e.message));
});

test('missing tensor → ModelFormatError naming architecture and tensor', () => {
  const { meta, defs } = llamaParts();
  const file = buildModel(meta, defs.filter((d) => d.name !== 'blk.0.ffn_up.weight'), 1).file;
  assert.throws(() => loadModel(file), (e: Error) => e instanceof ModelFormatError && /llama/.test(e.message) && /blk\.0\.ffn_up\.weight/.test(e.message));
});

test('wrong tensor shape (head counts) → ModelFormatError with both shapes', () => {
  const { meta, defs } = llamaParts();
  const bad = defs.map((d) => (d.name === 'blk.0.attn_k.weight' ? { ...d, dims: [E, 16] } : d));
  assert.throws(() => loadModel(buildModel(meta, bad, 1).file),
    (e: Error) => e instanceof ModelFormatError && /attn_k\.weight/.test(e.message) && /\[16, 16\]/.test(e.message) && /expected \[16, 8\]/.test(e.message));
});

test('missing required metadata key → ModelFormatError naming the key', () => {
  const { meta, defs } = llamaParts();
  const file = buildModel(meta.filter(([k]) => k !== 'llama.block_count'), defs, 1).file;
  assert.throws(() => loadModel(file), (e: Error) => e instanceof ModelFormatError && /llama\.block_count/.test(e.message));
});

test('inconsistent head counts → ModelFormatError', () => {
  const { meta, defs } = llamaParts();
  const file = buildModel(meta.map(([k, v]) => [k, k === 'llama.attention.head_count_kv' ? 3 : v] as [string, MetaValue]), defs, 1).file;
  assert.throws(() => loadModel(file), (e: Error) => e instanceof ModelFormatError && /head_count/.test(e.message));
});

test('quantized tensor type not computable → UnsupportedError naming tensor and type', () => {
  const { meta, defs } = llamaParts();
  const file = buildModel(meta, defs, 1).file;
  const t = file.tensors.get('blk.0.attn_q.weight')!;
  (file.tensors as Map<string, typeof t>).set(t.name, { ...t, type: GGMLType.IQ1_M, data: new Uint8Array(56) });
  assert.throws(() => loadModel(file), (e: Error) => e instanceof UnsupportedError && /blk\.0\.attn_q\.weight/.test(e.message) && /IQ1_M/.test(e.message));
});

test('bad token ids and context overflow are typed errors', () => {
  const { meta, defs } = llamaParts();
  const m = loadModel(buildModel(meta, defs, 1).file);
  assert.throws(() => m.forward([1, V], m.createCache()), (e: Error) => e instanceof InvalidOptionError && /40/.test(e.message));
  assert.throws(() => m.forward([1.5], m.createCache()), InvalidOptionError);
  assert.throws(() => m.forward([], m.createCache()), InvalidOptionError);
  assert.throws(() => m.createCache(9), ContextOverflowError);
  const c = m.createCache(4);
  m.forward([1, 2, 3], c);
  assert.throws(() => m.forward([4, 5], c), ContextOverflowError);
  assert.equal(c.length, 3, 'a refused call leaves the cache untouched');
  m.forward([4], c);
  assert.equal(c.length, 4);
});
