import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadLanguageModel } from '../../src/generate/language-model.js';
import { writeChatModel } from '../chat/chat-model.js';
import { needsShared } from '../helpers.js';
import { post, startTestServer, type TestServer } from './server-helpers.js';

const skip = needsShared();
const MODEL = 'chat.gguf';
let srv: TestServer;
let completions: string;
let chat: string;

before(async () => {
  if (skip) return;
  srv = await startTestServer(loadLanguageModel({ model: writeChatModel() }));
  completions = `${srv.url}/v1/completions`;
  chat = `${srv.url}/v1/chat/completions`;
});
after(async () => { await srv?.close(); });

const msgs = [{ role: 'user', content: 'Hi' }];

/** Asserts an OpenAI-style error body with the given status, param and code. */
function assertError(r: { status: number; body: any }, status: number, param: string | null, code?: string, message?: RegExp): void {
  assert.equal(r.status, status, JSON.stringify(r.body));
  const e = r.body?.error;
  assert.ok(e && typeof e.message === 'string' && e.message.length > 0, JSON.stringify(r.body));
  assert.equal(e.type, status === 404 && code === 'not_found' ? 'not_found_error' : 'invalid_request_error');
  assert.equal(e.param, param);
  if (code !== undefined) assert.equal(e.code, code);
  if (message) assert.match(e.message, message);
}

test('malformed JSON → 400 invalid_json (both endpoints)', { skip }, async () => {
  assertError(await post(completions, '{"model": "chat.gguf", "prompt": ', true), 400, null, 'invalid_json');
  assertError(await post(chat, '{not json', true), 400, null, 'invalid_json');
  assertError(await post(chat, '[1, 2]', true), 400, null, 'invalid_request_body');
});

test('wrong parameter types → 400 invalid_type naming the parameter', { skip }, async () => {
  assertError(await post(completions, { model: MODEL, prompt: 'a', temperature: 'hot' }), 400, 'temperature', 'invalid_type');
  assertError(await post(completions, { model: MODEL, prompt: 'a', max_tokens: 2.5 }), 400, 'max_tokens');
  assertError(await post(completions, { model: MODEL, prompt: 42 }), 400, 'prompt');
  assertError(await post(chat, { model: MODEL, messages: [{ role: 'user', content: 5 }] }), 400, 'messages[0].content');
  assertError(await post(chat, { model: MODEL, messages: msgs, stream: 'yes' }), 400, 'stream', 'invalid_type');
  assertError(await post(chat, { model: MODEL }), 400, 'messages', 'invalid_type');
});

test('out-of-range values → 400 naming the parameter', { skip }, async () => {
  assertError(await post(completions, { model: MODEL, prompt: 'a', temperature: 2.5 }), 400, 'temperature', 'invalid_value');
  assertError(await post(chat, { model: MODEL, messages: msgs, temperature: -0.1 }), 400, 'temperature', 'invalid_value');
  assertError(await post(chat, { model: MODEL, messages: msgs, top_p: 0 }), 400, 'top_p');
  assertError(await post(chat, { model: MODEL, messages: msgs, presence_penalty: 3 }), 400, 'presence_penalty');
  assertError(await post(chat, { model: MODEL, messages: msgs, n: 0 }), 400, 'n');
  assertError(await post(chat, { model: MODEL, messages: msgs, top_logprobs: 21, logprobs: true }), 400, 'top_logprobs');
  assertError(await post(chat, { model: MODEL, messages: msgs, stop: ['a', 'b', 'c', 'd', 'e'] }), 400, 'stop');
  assertError(await post(chat, { model: MODEL, messages: msgs, logit_bias: { 5: 101 } }), 400, 'logit_bias.5');
  assertError(await post(chat, { model: MODEL, messages: msgs, logit_bias: { 99999: 1 } }), 400, 'logit_bias', 'invalid_value', /outside the vocabulary/);
  assertError(await post(chat, { model: MODEL, messages: [] }), 400, 'messages');
});

test('unsupported parameters → 400 unsupported_parameter naming them, never ignored', { skip }, async () => {
  const tools = [{ type: 'function', function: { name: 'f', parameters: {} } }];
  assertError(await post(chat, { model: MODEL, messages: msgs, tools }), 400, 'tools', 'unsupported_parameter');
  assertError(await post(chat, { model: MODEL, messages: msgs, tool_choice: 'auto' }), 400, 'tool_choice', 'unsupported_parameter');
  assertError(await post(chat, { model: MODEL, messages: msgs, functions: [{ name: 'f' }] }), 400, 'functions', 'unsupported_parameter');
  assertError(await post(chat, { model: MODEL, messages: [...msgs, { role: 'tool', content: 'x', tool_call_id: '1' }] }), 400, 'messages[1].role', 'unsupported_parameter');
  assertError(await post(chat, { model: MODEL, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }), 400, 'messages[0].content[0].type', 'unsupported_parameter');
  assertError(await post(chat, { model: MODEL, messages: [{ role: 'user', content: 'x', name: 'bob' }] }), 400, 'messages[0].name', 'unsupported_parameter');
  assertError(await post(completions, { model: MODEL, prompt: 'a', echo: true }), 400, 'echo', 'unsupported_parameter');
  assertError(await post(completions, { model: MODEL, prompt: 'a', suffix: 'end' }), 400, 'suffix', 'unsupported_parameter');
  assertError(await post(completions, { model: MODEL, prompt: 'a', best_of: 3, n: 2 }), 400, 'best_of', 'unsupported_parameter');
  assertError(await post(completions, { model: MODEL, prompt: ['a', 'b'] }), 400, 'prompt', 'unsupported_parameter', /batch/);
  assertError(await post(completions, { model: MODEL, prompt: [] }), 400, 'prompt', 'invalid_value', /token ids/);
  // unknown (misspelled) parameters are rejected too
  assertError(await post(chat, { model: MODEL, messages: msgs, temprature: 0.5 }), 400, 'temprature', 'unknown_parameter');
  assertError(await post(chat, { model: MODEL, messages: msgs, stream_options: { include_usage: true } }), 400, 'stream_options');
  // accepted neutral forms: echo false, empty suffix, best_of = n
  const ok = await post(completions, { model: MODEL, prompt: 'a', echo: false, suffix: null, best_of: 1, max_tokens: 2, temperature: 0 });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
});

test('engine-level rejections keep their parameter: greedy n > 1, context overflow', { skip }, async () => {
  assertError(await post(chat, { model: MODEL, messages: msgs, n: 2, temperature: 0 }), 400, 'n', 'invalid_value');
  const long = 'once upon a time '.repeat(400);
  assertError(await post(completions, { model: MODEL, prompt: long }), 400, 'prompt', 'context_length_exceeded');
  assertError(await post(chat, { model: MODEL, messages: [{ role: 'user', content: long }], stream: true }), 400, 'messages', 'context_length_exceeded');
  assertError(await post(completions, { model: MODEL, prompt: [1, 99999] }), 400, 'prompt', 'invalid_value');
});

test('unknown model → 404 model_not_found; unknown route → 404', { skip }, async () => {
  assertError(await post(completions, { model: 'gpt-4', prompt: 'a' }), 404, 'model', 'model_not_found');
  assertError(await post(chat, { model: 'gpt-4', messages: msgs, stream: true }), 404, 'model', 'model_not_found');
  const m = await fetch(`${srv.url}/v1/models/gpt-4`);
  assert.equal(m.status, 404);
  const r = await fetch(`${srv.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assertError({ status: r.status, body: await r.json() }, 404, null, 'not_found');
});

test('the openai client surfaces the errors (status, param, code)', { skip }, async () => {
  await assert.rejects(srv.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], temperature: 5 }), (e: any) => {
    assert.equal(e.status, 400);
    assert.equal(e.param, 'temperature');
    return true;
  });
  await assert.rejects(srv.client.completions.create({ model: 'nope', prompt: 'x' }), (e: any) => {
    assert.equal(e.status, 404);
    assert.equal(e.code, 'model_not_found');
    return true;
  });
  // nothing failed on the way: the queue is idle
  const h = await (await fetch(`${srv.url}/health`)).json() as { queue: unknown };
  assert.deepEqual(h.queue, { active: 0, waiting: 0 });
});
