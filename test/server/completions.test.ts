import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText } from '../../src/generate/generate.js';
import { loadLanguageModel, type LanguageModel } from '../../src/generate/language-model.js';
import { needsShared, sharedPath } from '../helpers.js';
import { startTestServer, type TestServer } from './server-helpers.js';

const skip = needsShared();
const MODEL = 'stories260K.bin';
const PROMPT = 'Once upon a time';
let lm: LanguageModel;
let srv: TestServer;

before(async () => {
  if (skip) return;
  lm = loadLanguageModel({ model: sharedPath('models', 'stories260K', 'stories260K.bin') });
  srv = await startTestServer(lm);
});
after(async () => { await srv?.close(); });

test('GET /v1/models lists the one served model (id = file name)', { skip }, async () => {
  const list = await srv.client.models.list();
  assert.deepEqual(list.data.map((m) => m.id), [MODEL]);
  const health = await (await fetch(`${srv.url}/health`)).json();
  assert.deepEqual(health, { status: 'ok', model: MODEL, queue: { active: 0, waiting: 0 } });
});

test('greedy completion (text and token-id prompt) equals the library\'s generate()', { skip }, async () => {
  const want = await generateText(lm, PROMPT, { temperature: 0, maxTokens: 24 });
  const r = await srv.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 24, temperature: 0 });
  assert.equal(r.object, 'text_completion');
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0]!.text, want.text);
  assert.equal(r.choices[0]!.finish_reason, 'length');
  assert.deepEqual(r.usage, { prompt_tokens: want.promptTokens.length, completion_tokens: 24, total_tokens: want.promptTokens.length + 24 });
  const ids = await srv.client.completions.create({ model: MODEL, prompt: want.promptTokens, max_tokens: 24, temperature: 0 });
  assert.equal(ids.choices[0]!.text, want.text);
});

test('streamed completion: chunks concatenate to the greedy text; finish reason and usage chunk', { skip }, async () => {
  const want = await generateText(lm, PROMPT, { temperature: 0, maxTokens: 20 });
  const stream = await srv.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 20, temperature: 0, stream: true, stream_options: { include_usage: true } });
  let text = '';
  const finishes: (string | null)[] = [];
  let usage: unknown = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) { text += c.text; if (c.finish_reason) finishes.push(c.finish_reason); }
  }
  assert.ok(chunks > 5, `streamed in pieces (${chunks} chunks)`);
  assert.equal(text, want.text);
  assert.deepEqual(finishes, ['length']);
  assert.deepEqual(usage, { prompt_tokens: want.promptTokens.length, completion_tokens: 20, total_tokens: want.promptTokens.length + 20 });
});

test('seeded sampling equals generate() with the same controls', { skip }, async () => {
  const opts = { temperature: 0.9, topP: 0.9, topK: 20, minP: 0.02, presencePenalty: 0.5, frequencyPenalty: 0.3, seed: 7, maxTokens: 30 };
  const want = await generateText(lm, PROMPT, opts);
  const r = await srv.client.completions.create({
    model: MODEL, prompt: PROMPT, max_tokens: 30, temperature: 0.9, top_p: 0.9, seed: 7, presence_penalty: 0.5, frequency_penalty: 0.3,
    // extensions beyond the OpenAI API, passed through the client's body
    ...({ top_k: 20, min_p: 0.02 } as object),
  });
  assert.equal(r.choices[0]!.text, want.text);
});

test('stop sequences end the text before the match (string and array, streamed and not)', { skip }, async () => {
  const full = await generateText(lm, PROMPT, { temperature: 0, maxTokens: 40 });
  const words = full.text.trim().split(/\s+/);
  const stopWord = ` ${words[3]}`;
  const expected = full.text.slice(0, full.text.indexOf(stopWord));
  const r = await srv.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 40, temperature: 0, stop: stopWord });
  assert.equal(r.choices[0]!.text, expected);
  assert.equal(r.choices[0]!.finish_reason, 'stop');
  const s = await srv.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 40, temperature: 0, stop: ['zzzz', stopWord], stream: true });
  let text = '';
  let finish: string | null = null;
  for await (const chunk of s) for (const c of chunk.choices) { text += c.text; finish = c.finish_reason ?? finish; }
  assert.equal(text, expected);
  assert.equal(finish, 'stop');
});

test('n = 2: two choices, each the generate() sample of the same seed', { skip }, async () => {
  const want = await generateText(lm, PROMPT, { temperature: 1, seed: 11, n: 2, maxTokens: 16 });
  const r = await srv.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 16, temperature: 1, seed: 11, n: 2 });
  assert.deepEqual(r.choices.map((c) => c.index), [0, 1]);
  assert.deepEqual(r.choices.map((c) => c.text), want.sequences!.map((s) => s.text));
  assert.notEqual(r.choices[0]!.text, r.choices[1]!.text);
  assert.equal(r.usage!.completion_tokens, want.usage.completionTokens);
  // streamed: both indices appear, each finishes once
  const s = await srv.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 16, temperature: 1, seed: 11, n: 2, stream: true });
  const texts = ['', ''];
  const finishes: number[] = [];
  for await (const chunk of s) for (const c of chunk.choices) { texts[c.index] += c.text; if (c.finish_reason) finishes.push(c.index); }
  assert.deepEqual(texts, want.sequences!.map((x) => x.text));
  assert.deepEqual(finishes.sort(), [0, 1]);
});

test('logprobs: tokens, raw log-probabilities and top alternatives (non-streamed and streamed)', { skip }, async () => {
  const want = await generateText(lm, PROMPT, { temperature: 0, maxTokens: 10, topLogprobs: 3 });
  const r = await srv.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 10, temperature: 0, logprobs: 3 });
  const lp = r.choices[0]!.logprobs!;
  assert.equal(lp.tokens!.length, 10);
  assert.equal(lp.tokens!.join(''), r.choices[0]!.text);
  lp.token_logprobs!.forEach((x, i) => assert.ok(Math.abs(x - want.tokenLogprobs[i]!) < 1e-9));
  lp.top_logprobs!.forEach((top, i) => {
    const vals = Object.values(top);
    assert.ok(vals.length >= 1 && vals.length <= 3);
    // greedy: the chosen token is the most likely, so its logprob is the best alternative's
    assert.ok(Math.abs(Math.max(...vals) - lp.token_logprobs![i]!) < 1e-9);
  });
  assert.deepEqual(lp.text_offset![0], 0);
  const s = await srv.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 10, temperature: 0, logprobs: 2, stream: true });
  const streamed: number[] = [];
  for await (const chunk of s) for (const c of chunk.choices) if (c.logprobs) streamed.push(...c.logprobs.token_logprobs!);
  assert.deepEqual(streamed, lp.token_logprobs);
});

test('requests are served one at a time: a concurrent request waits for the first to finish', { skip }, async () => {
  const order: string[] = [];
  const run = async (name: string) => {
    const s = await srv.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 60, temperature: 0, stream: true, logit_bias: { 1: -100, 2: -100 } });
    let first = true;
    for await (const chunk of s) {
      if (first) { order.push(`${name}:start`); first = false; }
      void chunk;
    }
    order.push(`${name}:end`);
  };
  await Promise.all([run('a'), run('b')]);
  // whichever started first ended before the other started
  assert.equal(order.length, 4);
  assert.equal(order[0]!.split(':')[0], order[1]!.split(':')[0], `serialized: ${order.join(', ')}`);
});

test('a client abort mid-stream stops the generation and frees the queue', { skip }, async () => {
  const ac = new AbortController();
  const recorded = srv.nextRecord();
  // Bans (-100) on BOS/EOS keep the story going until the context is full (~507 tokens) unless aborted.
  const s = await srv.client.completions.create(
    { model: MODEL, prompt: PROMPT, max_tokens: 2000, temperature: 1, seed: 3, stream: true, logit_bias: { 1: -100, 2: -100 } },
    { signal: ac.signal },
  );
  let chunks = 0;
  // The client ends the iteration quietly once aborted (or throws, depending on timing).
  try { for await (const _ of s) { if (++chunks === 3) ac.abort(); } } catch (e) { assert.equal((e as Error).name, 'APIUserAbortError'); }
  assert.ok(chunks >= 3);
  const rec = await recorded;
  assert.equal(rec.finishReason, 'abort');
  assert.ok(rec.completionTokens < 400, `stopped early (${rec.completionTokens} tokens)`);
  const health = await (await fetch(`${srv.url}/health`)).json() as { queue: unknown };
  assert.deepEqual(health.queue, { active: 0, waiting: 0 });
  const after = await srv.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 5, temperature: 0 });
  assert.equal(after.choices[0]!.finish_reason, 'length');
});

test('a request whose client leaves while it waits in the queue never runs', { skip }, async () => {
  const seen = srv.records.length;
  // four samples of 300 tokens: busy long enough that the second request surely queues behind it
  // (one sample took only tens of milliseconds on the compiled kernels and sometimes ended first)
  const long = srv.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 300, n: 4, temperature: 1, seed: 1, logit_bias: { 1: -100, 2: -100 } });
  const ac = new AbortController();
  const waiting = srv.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 5, temperature: 0 }, { signal: ac.signal });
  // let both requests reach the server, then leave
  for (let i = 0; i < 50; i++) {
    const h = await (await fetch(`${srv.url}/health`)).json() as { queue: { waiting: number } };
    if (h.queue.waiting === 1) break;
    await new Promise((r) => setTimeout(r, 2));
  }
  ac.abort();
  await assert.rejects(waiting);
  const r = await long;
  assert.equal(r.choices[0]!.finish_reason, 'length');
  const h = await (await fetch(`${srv.url}/health`)).json() as { queue: unknown };
  assert.deepEqual(h.queue, { active: 0, waiting: 0 });
  const mine = srv.records.slice(seen);
  assert.deepEqual(mine.map((r) => r.status).sort(), [200, 499], 'the waiting request was dropped without running');
  assert.equal(mine.find((r) => r.status === 499)!.completionTokens, 0);
});
