import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../../../src/errors.ts';
import { candidatesFromLogits, sortCandidates } from '../../../src/decode/candidates.ts';
import type { Candidates } from '../../../src/decode/types.ts';
import { createGrammarConstraint, createJsonSchemaConstraint, grammarAutomaton, jsonSchemaToGbnf, type GrammarConstraint } from '../../../src/decode/constraints/index.ts';
import { fakeTokenizer, type FakePiece } from './fake-tokenizer.ts';

const PIECES: FakePiece[] = [
  { control: '</s>' }, { control: '<ctl>' }, '{', '}', '"', '"a', 'a":', '":', ':', '1', '12', 'true', 'tr', 'ue', ' ', '   ',
  [0xc3], [0xa9], 'é', 'é"', ',', '[', ']', 'x', '"}', 'a', '{"', '}}', '"a":', '0', '-', '.', '5',
];
const tok = fakeTokenizer(PIECES, 0);
const EOS = 0, CTL = 1;
const id = (p: string) => tok.tokenId(p)!;

/** Token ids the constraint leaves, for uniform logits. */
function allowed(c: GrammarConstraint, tokens: number[] = [5]): Set<number> {
  const cands = candidatesFromLogits(new Float32Array(tok.vocabSize));
  c.apply(cands, { tokens, promptLength: 1 });
  return new Set(cands.ids.subarray(0, cands.size));
}

/** The mask by brute force: every text token whose bytes keep the automaton alive, plus EOS iff complete. */
function bruteForce(gbnf: string, prefix: number[]): Set<number> {
  const a = grammarAutomaton(gbnf);
  const s = a.stepBytes(a.initial, Buffer.concat(prefix.map((t) => tok.tokenBytes(t))))!;
  const out = new Set<number>();
  for (let t = 0; t < tok.vocabSize; t++) {
    if (t === EOS) { if (s.accepting) out.add(t); continue; }
    if (t === CTL) continue;
    if (a.stepBytes(s, tok.tokenBytes(t)) !== null) out.add(t);
  }
  return out;
}

const SCHEMA = { type: 'object', properties: { a: { type: 'string', maxLength: 3 }, b: { type: 'integer' } }, required: ['a'] };

test('the trie-walk mask equals the brute-force mask along a path (incl. tokens ending mid-character)', () => {
  const gbnf = jsonSchemaToGbnf(SCHEMA);
  const c = createJsonSchemaConstraint(SCHEMA, tok);
  const path = [id('{"'), id('a":'), id('"'), 16 /* 0xC3 */, 17 /* 0xA9 */, id('é"'), id('}')];
  const done: number[] = [];
  for (const t of path) {
    assert.deepEqual([...allowed(c)].sort((x, y) => x - y), [...bruteForce(gbnf, done)].sort((x, y) => x - y), `after ${done.map((d) => tok.piece(d)).join('|')}`);
    assert.ok(allowed(c).has(t), `${tok.piece(t)} should be allowed`);
    c.accept(t);
    done.push(t);
  }
  assert.equal(c.isComplete(), true);
  assert.deepEqual([...allowed(c)], [EOS], 'once the object is closed only end-of-generation is left');
});

test('end of generation only when complete; control tokens and whitespace never in compact mode', () => {
  const c = createJsonSchemaConstraint(SCHEMA, tok);
  const first = allowed(c);
  assert.ok(!first.has(EOS) && !first.has(CTL));
  assert.deepEqual([...first].map((t) => tok.piece(t)).sort(), ['{', '{"'].sort());
  assert.throws(() => c.accept(EOS), InvalidOptionError);
  assert.throws(() => c.accept(CTL), InvalidOptionError);
  assert.throws(() => c.accept(id(' ')), InvalidOptionError);
  assert.equal(c.isComplete(), false);
});

test('a value that may continue (a number) allows both more digits and end of generation', () => {
  const c = createGrammarConstraint('root ::= [0-9]+', tok);
  c.accept(id('12'));
  assert.ok(c.allowsBytes([0x33, 0x34]) && !c.allowsBytes([0x33, 0x78]));
  const a = allowed(c);
  assert.ok(a.has(EOS) && a.has(id('1')) && a.has(id('12')) && !a.has(id('x')));
});

test('clone() copies state; the copies then move independently', () => {
  const c = createJsonSchemaConstraint(SCHEMA, tok);
  c.accept(id('{"'));
  const d = c.clone();
  c.accept(id('a":'));
  assert.ok(allowed(d).has(id('a":')) && !allowed(d).has(id('"')));
  assert.ok(allowed(c).has(id('"')) && !allowed(c).has(id('a":')));
});

test('works on candidates that are already sorted / truncated, keeping their order', () => {
  const c = createGrammarConstraint('root ::= "tr" "ue" | "x"', tok);
  const logits = new Float32Array(tok.vocabSize).map((_, i) => (i * 7) % 11);
  const cands: Candidates = candidatesFromLogits(logits);
  sortCandidates(cands);
  c.apply(cands, { tokens: [5], promptLength: 1 });
  const kept = [...cands.ids.subarray(0, cands.size)];
  assert.deepEqual(new Set(kept), new Set([id('true'), id('tr'), id('x')]));
  for (let i = 1; i < cands.size; i++) assert.ok(cands.logits[i - 1]! >= cands.logits[i]!, 'still sorted');
});

test('a token budget steers an adversarial picker to a complete value in time', () => {
  // The picker always prefers opening a new level or growing a string: without the budget it never closes.
  const gbnf = 'root ::= "[" ( root | "x"* ) "]"';
  for (const budget of [3, 8, 20]) {
    const c = createGrammarConstraint(gbnf, tok, { maxTokens: budget });
    const prefer = [id('['), id('x'), id(']'), EOS];
    const out: number[] = [];
    for (let i = 0; i < budget; i++) {
      const a = allowed(c, [5, ...out]);
      const pick = prefer.find((t) => a.has(t));
      assert.ok(pick !== undefined, `nothing allowed at step ${i}`);
      c.accept(pick);
      out.push(pick);
      if (pick === EOS) break;
    }
    assert.equal(out[out.length - 1], EOS, `budget ${budget}: ended with ${tok.decode(out)}`);
    assert.ok(out.length <= budget);
    assert.ok(grammarAutomaton(gbnf).accepts(Buffer.from(tok.decode(out.slice(0, -1)))));
  }
  assert.throws(() => createGrammarConstraint(gbnf, tok, { maxTokens: 2 }), /too small/);
});

test('bad options are rejected', () => {
  assert.throws(() => createGrammarConstraint('root ::= "x"', tok, { maxTokens: 0 }), InvalidOptionError);
  assert.throws(() => createGrammarConstraint('root ::= "x"', tok, { endOfGeneration: [] }), /no end-of-generation/);
  assert.throws(() => createGrammarConstraint('root ::= "x"', tok, { endOfGeneration: [999] }), /outside the vocabulary/);
});
