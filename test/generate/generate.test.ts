/**
 * The generation loop end to end on stories260K: reference parity, seeds, stop strings, abort,
 * streaming of split UTF-8, context limits and option errors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ContextOverflowError, InvalidOptionError } from '../../src/errors.js';
import type { Candidates, LogitsProcessor } from '../../src/decode/types.js';
import type { DoneEvent, GenerationEvent, TokenEvent } from '../../src/generate/events.js';
import { createSession, generate, generateText } from '../../src/generate/generate.js';
import { KV_BLOCK } from '../../src/kv/cache.js';
import { loadLanguageModel, type LanguageModel } from '../../src/generate/language-model.js';
import { needsShared, sharedPath } from '../helpers.js';

const skip = needsShared();
interface RefCase { prompt: string; prompt_tokens: number[]; greedy_tokens: number[]; run_c_stdout: string }
const ref: RefCase[] = skip ? [] : JSON.parse(readFileSync(sharedPath('reference', 'stories260K-greedy.json'), 'utf8'));
const SEQ_LEN = 256; // run.c default `steps`: it runs 256 forward steps, so prompt + generated = 257.

let binLm: LanguageModel | undefined;
let ggufLm: LanguageModel | undefined;
const bin = () => (binLm ??= loadLanguageModel({ model: sharedPath('models', 'stories260K', 'stories260K.bin') }));
const gguf = () => (ggufLm ??= loadLanguageModel({ model: sharedPath('models', 'stories260K', 'stories260K.gguf') }));

async function collect(it: AsyncIterable<GenerationEvent>): Promise<{ tokens: TokenEvent[]; done: DoneEvent }> {
  const tokens: TokenEvent[] = [];
  let done: DoneEvent | undefined;
  for await (const ev of it) if (ev.type === 'token') tokens.push(ev); else done = ev;
  assert.ok(done, 'a done event ends every generation');
  return { tokens, done };
}

test('llama2.c checkpoint: greedy generation reproduces run.c for every reference prompt', { skip }, async () => {
  for (const r of ref) {
    const { tokens, done } = await collect(generate(bin(), r.prompt, { temperature: 0, maxTokens: SEQ_LEN + 1 - r.prompt_tokens.length }));
    assert.deepEqual(done.promptTokens, r.prompt_tokens, `prompt tokens of ${JSON.stringify(r.prompt)}`);
    assert.deepEqual(done.tokens, r.greedy_tokens, `greedy tokens of ${JSON.stringify(r.prompt)}`);
    // run.c prints the prompt and the continuation; our text is the continuation only.
    assert.equal(r.prompt + done.text, r.run_c_stdout.replace(/\n$/, ''), `text of ${JSON.stringify(r.prompt)}`);
    assert.equal(tokens.map((t) => t.text).join(''), done.text, 'streamed deltas add up to the text');
    const last = r.greedy_tokens[r.greedy_tokens.length - 1];
    if (last === 1) assert.deepEqual(done.stop, { kind: 'eog', token: 1 }, 'llama2.c models end a story with BOS');
    else assert.equal(done.finishReason, 'length');
  }
});

test('GGUF file: greedy tokens equal the reference up to where run.c emits id 1', { skip }, async () => {
  for (const r of ref) {
    const end = r.greedy_tokens.indexOf(1);
    const want = end < 0 ? r.greedy_tokens : r.greedy_tokens.slice(0, end);
    const { done } = await collect(generate(gguf(), r.prompt, { temperature: 0, maxTokens: want.length }));
    assert.deepEqual(done.promptTokens, r.prompt_tokens);
    assert.deepEqual(done.tokens, want, `prompt ${JSON.stringify(r.prompt)}`);
  }
});

test('the GGUF model honours only its metadata eos and runs past id 1, as llama.cpp does', { skip }, async () => {
  const r = ref.find((c) => c.greedy_tokens.includes(1))!;
  const end = r.greedy_tokens.indexOf(1);
  const done = await generateText(gguf(), r.prompt, { temperature: 0, maxTokens: end + 5 });
  assert.equal(done.tokens[end], 1);
  assert.equal(done.tokens.length, end + 5);
});

test('seeded sampling is reproducible; different seeds differ; top-k 1 equals greedy', { skip }, async () => {
  const opts = { temperature: 1, topP: 0.95, maxTokens: 60 };
  const a = await generateText(bin(), 'Once upon a time', { ...opts, seed: 42 });
  const b = await generateText(bin(), 'Once upon a time', { ...opts, seed: 42 });
  const c = await generateText(bin(), 'Once upon a time', { ...opts, seed: 43 });
  assert.deepEqual(a.tokens, b.tokens);
  assert.notDeepEqual(a.tokens, c.tokens);
  assert.equal(a.chain.seed, 42);
  const greedy = await generateText(bin(), 'Lily and Ben', { temperature: 0, maxTokens: 80 });
  const topk1 = await generateText(bin(), 'Lily and Ben', { temperature: 1.3, topK: 1, seed: 7, maxTokens: 80 });
  assert.deepEqual(topk1.tokens, greedy.tokens);
});

test('logprobs: each token event carries the raw log-probability; the sum is reported', { skip }, async () => {
  const { tokens, done } = await collect(generate(bin(), 'Once upon a time', { temperature: 0, maxTokens: 10 }));
  for (const t of tokens) assert.ok(t.logprob <= 0 && t.logprob > -50);
  assert.ok(Math.abs(tokens.reduce((s, t) => s + t.logprob, 0) - done.logprob) < 1e-9);
});

test('a stop string spanning two tokens stops generation and is not emitted', { skip }, async () => {
  // Greedy continuation of "Once upon a time" is ", there was a little girl named Lily. She loved ...".
  const full = await generateText(bin(), 'Once upon a time', { temperature: 0, maxTokens: 40 });
  const stop = 'named Li';
  assert.ok(full.text.includes(stop));
  const { tokens, done } = await collect(generate(bin(), 'Once upon a time', { temperature: 0, maxTokens: 40, stop: [stop] }));
  assert.equal(done.finishReason, 'stop');
  assert.deepEqual(done.stop, { kind: 'stop-string', text: stop });
  assert.equal(done.text, full.text.slice(0, full.text.indexOf(stop)));
  const streamed = tokens.map((t) => t.text).join('');
  assert.equal(streamed, done.text);
  assert.ok(!streamed.includes('named'), 'text that might become the stop string was held back');
  // The stop string really spans a token boundary.
  const pieces = done.tokens.map((id) => bin().tokenizer.piece(id));
  assert.ok(!pieces.some((p) => p.includes(stop)));
});

test('abort mid-stream ends with reason abort; breaking out of the loop cancels cleanly', { skip }, async () => {
  const ac = new AbortController();
  let n = 0;
  let done: DoneEvent | undefined;
  for await (const ev of generate(bin(), 'Once upon a time', { temperature: 0.8, seed: 1, maxTokens: 200, signal: ac.signal, stopAtEndOfGeneration: false })) {
    if (ev.type === 'token' && ++n === 5) ac.abort();
    if (ev.type === 'done') done = ev;
  }
  assert.equal(done?.finishReason, 'abort');
  assert.equal(done?.tokens.length, 5);

  // An abort from a timer (another macrotask) is seen while generating.
  const ac2 = new AbortController();
  setTimeout(() => ac2.abort(), 20);
  const d2 = await generateText(bin(), 'Once', { temperature: 1, seed: 2, maxTokens: 100_000, contextLength: 512, signal: ac2.signal, stopAtEndOfGeneration: false });
  assert.ok(d2.finishReason === 'abort' || d2.stop.kind === 'context');

  const it = generate(bin(), 'Once upon a time', { temperature: 0, maxTokens: 50 });
  let seen = 0;
  for await (const ev of it) { if (ev.type === 'token') seen++; if (seen === 3) break; }
  assert.equal(seen, 3);
  assert.deepEqual(await it.next(), { done: true, value: undefined }, 'the generator is finished after break');
});

/** Forces a fixed token sequence (a user processor), to drive the loop through specific tokens. */
function forceTokens(seq: number[]): LogitsProcessor {
  let i = 0;
  return {
    name: 'force',
    apply(c: Candidates) {
      const want = seq[Math.min(i, seq.length - 1)]!;
      for (let j = 0; j < c.size; j++) c.logits[j] = c.ids[j] === want ? 0 : -Infinity;
    },
    accept() { i++; },
  };
}

test('a byte-fallback emoji streams as one whole character', { skip }, async () => {
  const tok = bin().tokenizer;
  const emoji = '😀';
  const ids = tok.encode(emoji, { addBos: false });
  const byteIds = ids.filter((id) => /^<0x[0-9A-F]{2}>$/.test(tok.piece(id)));
  assert.equal(byteIds.length, 4, 'the emoji is four byte-fallback tokens in this vocabulary');
  const { tokens, done } = await collect(generate(bin(), 'Hi', { temperature: 0, maxTokens: ids.length, processors: [forceTokens(ids)] }));
  assert.deepEqual(done.tokens, ids);
  const texts = tokens.map((t) => t.text);
  for (const t of texts) assert.ok(t === '' || !t.includes('\uFFFD'), `no broken character in ${JSON.stringify(t)}`);
  assert.equal(texts.join(''), done.text);
  assert.ok(texts.includes(emoji) || texts.some((t) => t.endsWith(emoji)), 'the emoji arrives in one delta');
});

test('max tokens, context limit and prompt length', { skip }, async () => {
  const d = await generateText(bin(), 'Once upon a time', { temperature: 0, maxTokens: 3 });
  assert.equal(d.tokens.length, 3);
  assert.deepEqual(d.stop, { kind: 'max-tokens', limit: 3 });
  const z = await generateText(bin(), 'Once upon a time', { maxTokens: 0 });
  assert.equal(z.tokens.length, 0);
  assert.equal(z.finishReason, 'length');
  const c = await generateText(bin(), 'Once upon a time', { temperature: 0, contextLength: 12, stopAtEndOfGeneration: false });
  assert.deepEqual(c.stop, { kind: 'context', limit: 12 });
  assert.equal(c.promptTokens.length + c.tokens.length, 13, 'the last token needs no cache slot');
  const long = 'Once upon a time '.repeat(200);
  await assert.rejects(generateText(bin(), long, { maxTokens: 1 }), (e: Error) => e instanceof ContextOverflowError && /prompt has \d+ tokens but the context holds 512/.test(e.message));
});

test('the KV cache is sized from the request and reports its growth', { skip }, async () => {
  const { tokens, done } = await collect(generate(bin(), 'Once upon a time', { temperature: 0, maxTokens: 8 }));
  const perPos = 5 * 2 * 32 * 4; // layers × (K,V) × kv_dim × f32
  // 5 + 8 positions requested, allocated in whole blocks of KV_BLOCK positions
  assert.equal(done.cache.capacityBytes, Math.ceil((5 + 8) / KV_BLOCK) * KV_BLOCK * perPos);
  for (let i = 1; i < tokens.length; i++) assert.equal(tokens[i]!.cacheBytes - tokens[i - 1]!.cacheBytes, perPos);
});

test('a session reuses the cached prefix: only the new turn is prefilled, results unchanged', { skip }, async () => {
  const s = createSession();
  const first = await generateText(bin(), 'Once upon a time', { temperature: 0, maxTokens: 10, session: s });
  assert.equal(first.timings.prefillTokens, 5);
  const added = bin().tokenizer.encode(' Then', { addBos: false });
  const prompt2 = [...first.promptTokens, ...first.tokens, ...added];
  const second = await generateText(bin(), prompt2, { temperature: 0, maxTokens: 10, session: s });
  // Only the last generated token (never fed back) and the new text are prefilled.
  assert.equal(second.timings.prefillTokens, 1 + added.length);
  const fresh = await generateText(bin(), prompt2, { temperature: 0, maxTokens: 10 });
  assert.deepEqual(second.tokens, fresh.tokens);
});

test('invalid options are rejected with messages that name them', { skip }, async () => {
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ temperature: -1 }, /temperature/], [{ topP: 0 }, /topP/], [{ topP: 1.5 }, /topP/], [{ topK: -1 }, /topK/],
    [{ minP: 2 }, /minP/], [{ maxTokens: -1 }, /maxTokens/], [{ maxTokens: 1.5 }, /maxTokens/], [{ bogus: 1 }, /bogus/],
    [{ stop: 'x' }, /stop/], [{ contextLength: 0 }, /contextLength/],
  ];
  for (const [o, re] of bad) {
    await assert.rejects(generateText(bin(), 'x', o as never), (e: Error) => e instanceof InvalidOptionError && re.test(e.message), JSON.stringify(o));
  }
  await assert.rejects(generateText(bin(), [1, 99999], {}), /outside the vocabulary/);
  await assert.rejects(generateText(bin(), '', { addBos: false }), /prompt is empty/);
});

test('two greedy generations on one model, stepped concurrently, give what each gives alone (the reused logits array is sampled before any await)', { skip }, async () => {
  const lm = gguf();
  const opts = { temperature: 0, maxTokens: 160 } as const;
  const prompts = ['Once upon a time', 'The little dog'];
  const alone = [];
  for (const p of prompts) alone.push((await collect(generate(lm, p, opts))).done.tokens);
  const its = prompts.map((p) => generate(lm, p, opts)[Symbol.asyncIterator]());
  const got: number[][] = [[], []];
  let live = [true, true];
  while (live.some(Boolean)) {
    // both advanced at once: each runs until its next event, interleaving at its awaits
    const res = await Promise.all(its.map((it, i) => (live[i] ? it.next() : Promise.resolve({ done: true, value: undefined }))));
    res.forEach((r, i) => {
      if (r.done) { live[i] = false; return; }
      if (r.value?.type === 'token') got[i]!.push(r.value.id);
    });
    live = live.map((l, i) => l && !res[i]!.done);
  }
  assert.deepEqual(got[0], alone[0]);
  assert.deepEqual(got[1], alone[1]);
});
