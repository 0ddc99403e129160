/** JSON mode and JSON-Schema mode through generate(): sampling, n samples and beam search all yield valid JSON. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../../src/errors.js';
import { generateText } from '../../src/generate/generate.js';
import { loadLanguageModel, type LanguageModel } from '../../src/generate/language-model.js';
import { needsShared, sharedPath } from '../helpers.js';

const skip = needsShared();
let lmCache: LanguageModel | undefined;
const lm = () => (lmCache ??= loadLanguageModel({ model: sharedPath('models', 'stories260K', 'stories260K.bin') }));
const schema = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 12 }, age: { type: 'integer', minimum: 0, maximum: 99 } },
  required: ['name', 'age'], additionalProperties: false,
};
function checkPerson(text: string): void {
  const v = JSON.parse(text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(v).sort(), ['age', 'name'], text);
  assert.equal(typeof v['name'], 'string');
  assert.ok((v['name'] as string).length <= 12);
  assert.ok(Number.isInteger(v['age']) && (v['age'] as number) >= 0 && (v['age'] as number) <= 99, text);
}

test('JSON mode: the text is one JSON object, closed within the token budget', { skip }, async () => {
  for (const seed of [1, 2, 3]) {
    const d = await generateText(lm(), 'Once upon a time', { jsonMode: true, temperature: 0.9, seed, maxTokens: 40 });
    const v: unknown = JSON.parse(d.text);
    assert.ok(typeof v === 'object' && v !== null && !Array.isArray(v), d.text);
    assert.equal(d.chain.processors[0]!.name, 'json', 'the constraint is reported in the chain');
  }
  // Unconstrained, the model writes prose (so the checks above can fail).
  const free = await generateText(lm(), 'Once upon a time', { temperature: 0.9, seed: 1, maxTokens: 40 });
  assert.throws(() => JSON.parse(free.text));
});

test('JSON-Schema mode with sampling, n samples and beam search', { skip }, async () => {
  const s = await generateText(lm(), 'Once upon a time', { jsonSchema: schema, temperature: 0.8, seed: 2, maxTokens: 60 });
  checkPerson(s.text);
  const n = await generateText(lm(), 'Once upon a time', { jsonSchema: schema, temperature: 1, seed: 5, n: 3, maxTokens: 60 });
  for (const q of n.sequences!) checkPerson(q.text);
  const b = await generateText(lm(), 'Once upon a time', { jsonSchema: schema, numBeams: 3, numReturnSequences: 3, maxTokens: 60 });
  for (const q of b.sequences!) checkPerson(q.text);
  assert.equal(b.finishReason, 'stop');
});

test('JSON options are validated', { skip }, async () => {
  await assert.rejects(generateText(lm(), 'x', { jsonMode: true, jsonSchema: schema }), (e: Error) => e instanceof InvalidOptionError && /exclusive/.test(e.message));
  await assert.rejects(generateText(lm(), 'x', { jsonSchema: 'object' }), /jsonSchema must be/);
  await assert.rejects(generateText(lm(), 'x', { jsonMode: 'yes' as never }), /jsonMode must be a boolean/);
});
