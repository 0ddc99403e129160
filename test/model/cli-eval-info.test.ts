/**
 * `tokenloop eval` and `tokenloop info`, run in-process through the CLI entry point.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { needsShared, sharedPath, HAVE_SHARED } from '../helpers.js';
import { main } from '../../src/cli/main.js';

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '', err = '';
  const ow = process.stdout.write.bind(process.stdout), ew = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((s: string) => { out += s; return true; }) as typeof process.stdout.write;
  process.stderr.write = ((s: string) => { err += s; return true; }) as typeof process.stderr.write;
  try {
    const code = await main(args);
    return { code, out, err };
  } finally {
    process.stdout.write = ow; process.stderr.write = ew;
    process.exitCode = undefined;
  }
}

const LLAMA = HAVE_SHARED ? sharedPath('reference', 'architectures', 'llama.gguf') : '';

test('eval --json: one logits row of n_vocab per input position, equal to llama.cpp', { skip: needsShared() }, async () => {
  const ref = JSON.parse(readFileSync(sharedPath('reference', 'architectures', 'llama.json'), 'utf8')) as { tokens: number[]; logits_kv_f32: number[][] };
  const toks = ref.tokens.slice(0, 5);
  const r = await run(['eval', '-m', LLAMA, '--tokens', toks.join(','), '--json']);
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out) as { logits: number[][]; tokens: number[]; architecture: string };
  assert.equal(j.architecture, 'llama');
  assert.deepEqual(j.tokens, toks);
  assert.equal(j.logits.length, 5);
  for (let p = 0; p < 5; p++) {
    assert.equal(j.logits[p]!.length, 512);
    for (let i = 0; i < 512; i++) assert.ok(Math.abs(j.logits[p]![i]! - ref.logits_kv_f32[p]![i]!) < 1e-4);
  }
});

test('eval rejects out-of-vocab and non-integer token ids with a clear error', { skip: needsShared() }, async () => {
  const a = await run(['eval', '-m', LLAMA, '--tokens', '1,512', '--json']);
  assert.equal(a.code, 1);
  assert.match(a.err, /token id 512 .*out of range.*512 tokens/);
  assert.equal(a.out, '');
  const b = await run(['eval', '-m', LLAMA, '--tokens', '1,2.5']);
  assert.equal(b.code, 1);
  assert.match(b.err, /"2\.5".*not a non-negative integer/);
});

test('info --json: architecture, hyperparameters, tensors, tokenizer, memory for --ctx', { skip: needsShared() }, async () => {
  const r = await run(['info', '-m', sharedPath('reference', 'architectures', 'gemma2.gguf'), '--ctx', '64', '--json']);
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.architecture, 'gemma2');
  assert.equal(j.supported, true);
  assert.equal(j.hyperparameters.n_layer, 26);
  assert.equal(j.hyperparameters['attention.sliding_window'], 4);
  assert.equal(j.tensors.byType.F32.count, j.tensors.count);
  assert.equal(j.tokenizer.kind, 'llama');
  assert.equal(j.tokenizer.bos, 1);
  assert.equal(j.tokenizer.eos, 2);
  assert.equal(j.tokenizer.chatTemplate, false);
  // 26 layers × (K + V) × 2 KV heads × 16 dims × 64 positions × 4 bytes.
  assert.equal(j.memory.kvCacheBytes, 26 * 2 * 32 * 64 * 4);
  assert.equal(j.memory.kvType, 'f32');
  assert.ok(j.memory.totalBytes > j.memory.weightBytes + j.memory.kvCacheBytes);
  const h = JSON.parse((await run(['info', '-m', sharedPath('reference', 'architectures', 'gemma2.gguf'), '--ctx', '64', '--kv-type', 'f16', '--json'])).out);
  assert.equal(h.memory.kvType, 'f16');
  assert.equal(h.memory.kvCacheBytes, 26 * 2 * 32 * 64 * 2);
  const bad = await run(['info', '-m', LLAMA, '--kv-type', 'int4']);
  assert.equal(bad.code, 1);
  assert.match(bad.err, /--kv-type must be "f32" or "f16", got "int4"/);
});

test('info (text) on the llama2.c checkpoint, and a bad --ctx', { skip: needsShared() }, async () => {
  const r = await run(['info', '-m', sharedPath('models', 'stories260K', 'stories260K.bin')]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /architecture: +llama/);
  assert.match(r.out, /llama2c/);
  assert.match(r.out, /memory \(ctx 512\)/);
  const b = await run(['info', '-m', LLAMA, '--ctx', 'lots']);
  assert.equal(b.code, 1);
  assert.match(b.err, /--ctx must be a positive integer/);
});
