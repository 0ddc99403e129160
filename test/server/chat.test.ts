import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText } from '../../src/generate/generate.js';
import { loadLanguageModel, type LanguageModel } from '../../src/generate/language-model.js';
import { createChatSetup } from '../../src/server/chat-completions.js';
import { chatPromptTokens } from '../../src/tokenizer/chat-template.js';
import { LLAMA2_LIKE_TEMPLATE, writeChatModel } from '../chat/chat-model.js';
import { validatorFor } from '../decode/constraints/ajv-check.js';
import { needsShared } from '../helpers.js';
import { startTestServer, type TestServer } from './server-helpers.js';

const skip = needsShared();
const MODEL = 'stories-chat';
let lm: LanguageModel;
let srv: TestServer;

before(async () => {
  if (skip) return;
  lm = loadLanguageModel({ model: writeChatModel() });
  srv = await startTestServer(lm, { modelName: MODEL });
});
after(async () => { await srv?.close(); });

const messages = [
  { role: 'system' as const, content: 'You tell short stories.' },
  { role: 'user' as const, content: 'Tell me a story about a cat.' },
];

/** What the library generates for these messages with the model's template. */
async function expected(options: Parameters<typeof generateText>[2]) {
  const setup = createChatSetup(lm, LLAMA2_LIKE_TEMPLATE);
  const prompt = chatPromptTokens(lm.tokenizer, setup.template, { ...setup.vars, messages, add_generation_prompt: true });
  return generateText(setup.lm, prompt, options);
}

test('greedy chat completion equals generate() on the template-rendered prompt', { skip }, async () => {
  const want = await expected({ temperature: 0, maxTokens: 40 });
  const r = await srv.client.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: 40 });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.model, MODEL);
  assert.equal(r.choices[0]!.message.role, 'assistant');
  assert.equal(r.choices[0]!.message.content, want.text);
  assert.equal(r.choices[0]!.finish_reason, want.finishReason === 'length' ? 'length' : 'stop');
  assert.equal(r.usage!.prompt_tokens, want.promptTokens.length);
  assert.equal(r.usage!.completion_tokens, want.usage.completionTokens);
  // max_completion_tokens is the newer name of max_tokens
  const r2 = await srv.client.chat.completions.create({ model: MODEL, messages, temperature: 0, max_completion_tokens: 40 });
  assert.equal(r2.choices[0]!.message.content, want.text);
});

test('streamed chat: role chunk first, content deltas equal the non-streamed answer, finish chunk, usage', { skip }, async () => {
  const want = await expected({ temperature: 0, maxTokens: 30 });
  const s = await srv.client.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: 30, stream: true, stream_options: { include_usage: true } });
  let text = '';
  const roles: string[] = [];
  const finishes: string[] = [];
  let usage: { completion_tokens: number } | null = null;
  for await (const chunk of s) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      if (c.delta.role) roles.push(c.delta.role);
      text += c.delta.content ?? '';
      if (c.finish_reason) finishes.push(c.finish_reason);
    }
  }
  assert.deepEqual(roles, ['assistant']);
  assert.equal(text, want.text);
  assert.equal(finishes.length, 1);
  assert.equal(usage!.completion_tokens, want.usage.completionTokens);
});

test('an answer that ends at the end-of-turn token finishes with "stop" and leaves the marker out', { skip }, async () => {
  // stories260K never ends a turn by itself: a +100 bias on </s> (the template's end-of-turn) makes it.
  const eot = lm.tokenizer.eos!;
  const r = await srv.client.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: 50, logit_bias: { [eot]: 100 }, logprobs: true });
  assert.equal(r.choices[0]!.finish_reason, 'stop');
  assert.equal(r.choices[0]!.message.content, '');
  assert.equal(r.usage!.completion_tokens, 1, 'the end-of-turn token is counted');
  assert.deepEqual(r.choices[0]!.logprobs!.content, [], 'but is not part of the content');
});

test('response_format json_object: the content parses as a JSON object', { skip }, async () => {
  for (const seed of [1, 2]) {
    const r = await srv.client.chat.completions.create({ model: MODEL, messages, temperature: 0.8, seed, max_tokens: 48, response_format: { type: 'json_object' } });
    const v = JSON.parse(r.choices[0]!.message.content!);
    assert.equal(typeof v, 'object');
    assert.ok(v !== null && !Array.isArray(v));
  }
});

test('response_format json_schema: the content validates against the schema', { skip }, async () => {
  const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 12 }, age: { type: 'integer', minimum: 0, maximum: 99 } }, required: ['name', 'age'], additionalProperties: false };
  const r = await srv.client.chat.completions.create({
    model: MODEL, messages, temperature: 1, seed: 4, max_tokens: 60,
    response_format: { type: 'json_schema', json_schema: { name: 'person', schema, strict: true } },
  });
  assert.equal(validatorFor(schema)(JSON.parse(r.choices[0]!.message.content!)), null, r.choices[0]!.message.content!);
});

test('logprobs + top_logprobs: one entry per answer token with raw log-probabilities', { skip }, async () => {
  const want = await expected({ temperature: 0, maxTokens: 12, topLogprobs: 2 });
  const r = await srv.client.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: 12, logprobs: true, top_logprobs: 2 });
  const content = r.choices[0]!.logprobs!.content!;
  const visible = want.stop.kind === 'eog' ? want.tokens.length - 1 : want.tokens.length;
  assert.equal(content.length, visible);
  content.forEach((t, i) => {
    assert.ok(Math.abs(t.logprob - want.tokenLogprobs[i]!) < 1e-9);
    assert.equal(t.top_logprobs.length, 2);
    assert.ok(Math.abs(t.top_logprobs[0]!.logprob - t.logprob) < 1e-9, 'greedy: the chosen token is the top alternative');
    assert.deepEqual(Buffer.from(t.bytes!).toString('utf8'), t.token);
  });
  const plain = await srv.client.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: 4 });
  assert.equal(plain.choices[0]!.logprobs, null);
});

test('developer role and text content parts are accepted (developer = system)', { skip }, async () => {
  const want = await expected({ temperature: 0, maxTokens: 10 });
  const r = await srv.client.chat.completions.create({
    model: MODEL, temperature: 0, max_tokens: 10,
    messages: [{ role: 'developer', content: 'You tell short stories.' }, { role: 'user', content: [{ type: 'text', text: 'Tell me a story ' }, { type: 'text', text: 'about a cat.' }] }],
  });
  assert.equal(r.choices[0]!.message.content, want.text);
});

test('a llama2.c checkpoint (no template) answers chat requests with a 400 that says how to fix it', { skip }, async () => {
  const { sharedPath } = await import('../helpers.js');
  const bin = loadLanguageModel({ model: sharedPath('models', 'stories260K', 'stories260K.bin') });
  const other = await startTestServer(bin);
  try {
    await assert.rejects(other.client.chat.completions.create({ model: 'stories260K.bin', messages }), (e: any) => {
      assert.equal(e.status, 400);
      assert.equal(e.error.code, 'no_chat_template');
      assert.match(e.error.message, /--template/);
      return true;
    });
  } finally {
    await other.close();
  }
});
