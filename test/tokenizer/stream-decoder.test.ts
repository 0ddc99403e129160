import { test } from 'node:test';
import assert from 'node:assert/strict';
import { needsShared, sharedPath } from '../helpers.js';
import { loadLlama2cTokenizer } from '../../src/tokenizer/from-llama2c.js';
import { StreamDecoder } from '../../src/tokenizer/stream-decoder.js';

const skip = needsShared();
const tok512 = () => loadLlama2cTokenizer(sharedPath('models', 'stories260K', 'tok512.bin'));

function stream(d: StreamDecoder, ids: readonly number[]): string[] {
  return ids.map((id) => d.push(id));
}

test('an emoji from byte-fallback tokens streams as one whole character', { skip }, () => {
  const tok = tok512();
  const ids = tok.encode('Hi 😀 there 🎉!'); // BOS first
  const prompt = ids.slice(0, 1);
  const gen = ids.slice(1);
  const d = new StreamDecoder(tok, { context: prompt });
  const parts = stream(d, gen);
  for (const p of parts) assert.ok(!p.includes('\uFFFD'), `garbled piece ${JSON.stringify(p)}`);
  // Exactly one push yields each emoji, whole; the three pushes before it yield nothing.
  assert.equal(parts.filter((p) => p.includes('😀')).length, 1);
  assert.ok(parts.some((p) => p === '😀' || p.endsWith('😀')));
  const i = parts.findIndex((p) => p.includes('😀'));
  assert.deepEqual(parts.slice(i - 3, i), ['', '', '']);
  const all = parts.join('') + d.flush();
  assert.equal(all, 'Hi 😀 there 🎉!', 'the prefix space after BOS is dropped, as in decode()');
  assert.equal(all, tok.decode(ids, { skipSpecial: true }));
});

test('concatenated pushes + flush equal decode() with and without a BOS context', { skip }, () => {
  const tok = tok512();
  const ids = tok.encode('Once upon a time, ünïcödé 中文 and 🙂.', { addBos: false });
  for (const context of [[], [tok.bos!], [tok.bos!, ids[0]!]]) {
    const rest = context.length === 2 ? ids.slice(1) : ids;
    const d = new StreamDecoder(tok, { context });
    const got = stream(d, rest).join('') + d.flush();
    const full = tok.decode([...context, ...rest]);
    const before = tok.decode(context);
    assert.equal(before + got, full, `context ${JSON.stringify(context)}`);
  }
});

test('an incomplete character is held back and becomes U+FFFD on flush', { skip }, () => {
  const tok = tok512();
  const d = new StreamDecoder(tok, { context: [1] });
  assert.equal(d.push(0xf0 + 3), '');
  assert.equal(d.push(0x9f + 3), '');
  assert.equal(d.flush(), '\uFFFD');
  // A stray continuation byte is invalid at once and is not held.
  const e = new StreamDecoder(tok);
  assert.equal(e.push(0x80 + 3), '\uFFFD');
  assert.equal(e.push(tok.tokenId('he')!), 'he');
});

test('skipSpecial leaves out control tokens; they still count as BOS for the prefix rule', { skip }, () => {
  const tok = tok512();
  const d = new StreamDecoder(tok, { skipSpecial: true });
  assert.equal(d.push(1), '');
  assert.equal(d.push(tok.tokenId(' the')!), 'the');
  assert.equal(d.push(2), '');
  const e = new StreamDecoder(tok);
  assert.equal(e.push(2), '</s>');
  assert.equal(e.push(tok.tokenId(' the')!), ' the');
});
