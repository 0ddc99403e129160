/**
 * End-to-end: the real stories260K model (512-token SentencePiece vocabulary with byte fallback)
 * sampled at temperature 1 under JSON-Schema / JSON-mode constraints; every output must parse and
 * validate with ajv, and end by end-of-generation within the token budget. Plus a 32000-token
 * vocabulary (llama SPM) driven by random logits, with the mask checked against brute force.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadLanguageModel } from '../../../src/generate/language-model.ts';
import { generateText } from '../../../src/generate/generate.ts';
import { loadTokenizerFile } from '../../../src/tokenizer/load.ts';
import { candidatesFromLogits } from '../../../src/decode/candidates.ts';
import { createRng } from '../../../src/decode/rng.ts';
import { createJsonConstraint, createJsonSchemaConstraint, grammarAutomaton, jsonSchemaToGbnf, type GrammarConstraint } from '../../../src/decode/constraints/index.ts';
import { isTextToken } from '../../../src/decode/constraints/token-trie.ts';
import { needsShared, sharedPath } from '../../helpers.ts';
import { validatorFor } from './ajv-check.ts';

const PERSON = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 20 },
    age: { type: 'integer', minimum: 1, maximum: 99 },
    score: { type: 'number' },
    happy: { type: 'boolean' },
    pet: { enum: ['cat', 'dog', 'fish'] },
    home: { type: 'object', properties: { town: { type: 'string', maxLength: 12 }, zip: { type: 'integer' } }, required: ['town'] },
    friends: { type: 'array', items: { type: 'string', maxLength: 10 }, maxItems: 3 },
  },
  required: ['name', 'age', 'score', 'happy', 'pet', 'home', 'friends'],
};
const LIST = {
  type: 'array', minItems: 1, maxItems: 3,
  items: { type: 'object', properties: { id: { type: 'integer', minimum: 0 }, label: { type: 'string', minLength: 1, maxLength: 8 }, done: { type: 'boolean' } }, required: ['id', 'label'] },
};
const CHOICE = {
  $defs: { point: { type: 'object', properties: { x: { type: 'number', minimum: -10, maximum: 10 }, y: { type: 'number' } }, required: ['x', 'y'] } },
  anyOf: [{ $ref: '#/$defs/point' }, { type: 'array', items: { $ref: '#/$defs/point' }, maxItems: 2 }, { type: 'object', properties: { name: { type: 'string', maxLength: 10 } }, required: ['name'] }],
};
const ANY_OBJECT = { type: 'object' };

test('stories260K: 100 seeded samples under schema constraints all parse, validate and end in time', { skip: needsShared() }, async (t) => {
  const lm = loadLanguageModel({ model: sharedPath('models/stories260K/stories260K.bin') });
  const MAX = 200;
  const cases = [
    { schema: PERSON, n: 35, json: false },
    { schema: LIST, n: 25, json: false },
    { schema: CHOICE, n: 25, json: false },
    { schema: ANY_OBJECT, n: 15, json: true },
  ];
  let steps = 0, maskMs = 0, maxMs = 0, tokens = 0, seed = 0;
  const shapes = new Set<string>();
  const t0 = performance.now();
  for (const { schema, n, json } of cases) {
    const valid = validatorFor(schema);
    for (let i = 0; i < n; i++, seed++) {
      // Odd samples of the anyOf schema may put one whitespace byte between JSON tokens.
      const opts = { maxTokens: MAX, endOfGeneration: lm.endOfGeneration, whitespace: schema === CHOICE ? i % 2 : 0 };
      const c: GrammarConstraint = json ? createJsonConstraint(lm.tokenizer, opts) : createJsonSchemaConstraint(schema, lm.tokenizer, opts);
      // Every fifth sample starts right after BOS (where SentencePiece drops the leading space).
      const prompt = seed % 5 === 0 ? [lm.tokenizer.bos!] : 'Once upon a time';
      const done = await generateText(lm, prompt, { processors: [c], seed, temperature: 1, maxTokens: MAX });
      assert.equal(done.finishReason, 'stop', `seed ${seed}: ${done.finishReason} after ${done.tokens.length} tokens: ${done.text}`);
      assert.ok(lm.endOfGeneration.has(done.tokens[done.tokens.length - 1]!));
      let value: unknown;
      assert.doesNotThrow(() => { value = JSON.parse(done.text); }, `seed ${seed}: not JSON: ${done.text}`);
      assert.equal(valid(value), null, `seed ${seed}: ${done.text}`);
      assert.ok(c.isComplete());
      if (schema === CHOICE) shapes.add(Array.isArray(value) ? 'array' : 'x' in (value as object) ? 'point' : 'named');
      const s = c.stats();
      steps += s.steps; maskMs += s.totalMs; maxMs = Math.max(maxMs, s.maxMs); tokens += done.tokens.length;
    }
  }
  const wall = performance.now() - t0;
  assert.ok(shapes.size >= 2, `anyOf samples all took one branch: ${[...shapes]}`);
  t.diagnostic(`512-token vocab: ${steps} masked steps, mean ${(maskMs / steps).toFixed(3)} ms/step, max ${maxMs.toFixed(2)} ms; ${tokens} tokens in ${wall.toFixed(0)} ms`);
  assert.ok(maskMs / steps < 5, `mask too slow: ${(maskMs / steps).toFixed(2)} ms/step`);
});

test('32000-token llama SPM vocabulary: mask equals brute force, output validates, mask cost per step', { skip: needsShared() }, (t) => {
  const tok = loadTokenizerFile(sharedPath('reference/tokenizer/llama.cpp-vocab/ggml-vocab-llama-spm.gguf'));
  assert.equal(tok.vocabSize, 32000);
  const automaton = grammarAutomaton(jsonSchemaToGbnf(PERSON));
  const valid = validatorFor(PERSON);
  const rng = createRng(7);
  const MAX = 300;
  const c = createJsonSchemaConstraint(PERSON, tok, { maxTokens: MAX });
  const history: number[] = [tok.bos!];
  const out: Uint8Array[] = [];
  const logits = new Float32Array(tok.vocabSize);
  let checked = 0;
  for (let step = 0; step < MAX; step++) {
    for (let i = 0; i < logits.length; i++) logits[i] = rng.next() * 8;
    const cands = candidatesFromLogits(logits);
    c.apply(cands, { tokens: history, promptLength: 1 });
    assert.ok(cands.size > 0, `step ${step}: nothing allowed`);
    if (step % 25 === 0) {
      // Brute force: every token tested from scratch against the automaton (budget not binding this early).
      const afterBos = step === 0;
      const state = automaton.stepBytes(automaton.initial, Buffer.concat(out))!;
      const expect: number[] = [];
      for (let id = 0; id < tok.vocabSize; id++) {
        if (tok.endOfGeneration.has(id)) { if (state.accepting) expect.push(id); continue; }
        const b = tok.tokenBytes(id, afterBos);
        if (isTextToken(tok, id) && b.length > 0 && automaton.stepBytes(state, b) !== null) expect.push(id);
      }
      assert.deepEqual([...cands.ids.subarray(0, cands.size)].sort((a, b) => a - b), expect, `step ${step}`);
      checked++;
    }
    let best = 0;
    for (let i = 1; i < cands.size; i++) if (cands.logits[i]! > cands.logits[best]!) best = i;
    const id = cands.ids[best]!;
    c.accept(id);
    history.push(id);
    if (tok.endOfGeneration.has(id)) break;
    out.push(tok.tokenBytes(id, step === 0));
  }
  assert.ok(tok.endOfGeneration.has(history[history.length - 1]!), 'ended by end of generation within the budget');
  const text = Buffer.concat(out).toString('utf8');
  assert.equal(valid(JSON.parse(text)), null, text);
  assert.ok(checked >= 2);
  const s = c.stats();
  t.diagnostic(`32000-token vocab: ${s.steps} steps, mean ${(s.totalMs / s.steps).toFixed(3)} ms/step, max ${s.maxMs.toFixed(1)} ms (first steps build states), ${s.states} automaton states`);
});
