import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../../../src/errors.ts';
import { compileGrammar, GrammarAutomaton, parseGbnf } from '../../../src/decode/constraints/index.ts';

const auto = (g: string) => new GrammarAutomaton(compileGrammar(parseGbnf(g)));
const bytes = (s: string) => Buffer.from(s, 'utf8');
const ok = (a: GrammarAutomaton, s: string) => a.accepts(bytes(s));
const prefix = (a: GrammarAutomaton, s: string) => a.isPrefix(bytes(s));

test('literals, alternatives, groups and repetition operators', () => {
  const a = auto(`
    # a comment
    root ::= greeting ( " " name )+ "!"?
    greeting ::= "hi" | "hello"
    name ::= [A-Z] [a-z]{1,3}
  `);
  for (const s of ['hi Bob', 'hello Al Bea!', 'hi Abcd']) assert.ok(ok(a, s), s);
  for (const s of ['hi', 'hi bob', 'hi Abcde', 'hey Bob', 'hi Bob!!', 'hi B']) assert.ok(!ok(a, s), s);
  assert.ok(prefix(a, 'hel'));
  assert.ok(!prefix(a, 'hx'));
});

test('bounded repetition {m}, {m,}, {m,n} count exactly', () => {
  const a = auto('root ::= "a"{2} "b"{1,} "c"{0,2}');
  for (const s of ['aab', 'aabbbcc', 'aabc']) assert.ok(ok(a, s), s);
  for (const s of ['ab', 'aaab', 'aa', 'aabccc']) assert.ok(!ok(a, s), s);
});

test('character classes work on UTF-8 bytes: multi-byte characters, partial characters, negation', () => {
  const a = auto('root ::= [α-ω]+ [^a-z]');
  assert.ok(ok(a, 'αβγ!'));
  assert.ok(ok(a, 'ωé'));     // é is not in a-z
  assert.ok(!ok(a, 'αb'));
  const half = bytes('β').subarray(0, 1);
  assert.ok(a.isPrefix([...bytes('α'), ...half]), 'a token may end mid-character');
  assert.ok(!a.isPrefix([...bytes('α'), 0xce, 0x30]), 'a bad continuation byte is rejected');
  assert.ok(!a.isPrefix([0xff]), 'an invalid UTF-8 byte is rejected');
  const dot = auto('root ::= "<" . ">"');
  assert.ok(ok(dot, '<😀>'));
  assert.ok(!ok(dot, '<ab>'));
  assert.ok(!dot.isPrefix([0x3c, 0xed, 0xa0]), 'surrogate encodings are never accepted');
});

test('escapes in literals and classes', () => {
  const a = auto('root ::= "\\"" [\\x41-\\x43\\n] "\\u00e9" "\\\\"');
  assert.ok(ok(a, '"Bé\\'));
  assert.ok(ok(a, '"\né\\'));
  assert.ok(!ok(a, '"Dé\\'));
});

test('recursion (nested brackets) and nullable repetition terminate', () => {
  const a = auto('root ::= "(" root* ")"');
  assert.ok(ok(a, '(()(()))'));
  assert.ok(!ok(a, '(()'));
  assert.ok(prefix(a, '((('));
  const b = auto('root ::= ( "a"? )* "b"');
  assert.ok(ok(b, 'aaab'));
  assert.ok(ok(b, 'b'));
});

test('states are interned and the shortest completion length is tracked', () => {
  const a = auto('root ::= "ab" ( "c" | "def" ) "g"');
  assert.equal(a.initial.dist, 4);
  const s = a.stepBytes(a.initial, bytes('ab'))!;
  assert.equal(s.dist, 2);
  assert.equal(a.stepBytes(a.initial, bytes('abc'))!.dist, 1);
  assert.equal(a.stepBytes(a.initial, bytes('abcg'))!.accepting, true);
  assert.equal(a.step(a.initial, 0x61), a.step(a.initial, 0x61), 'memoized transitions return the same state');
});

test('grammar errors are InvalidOptionError naming the problem', () => {
  const cases: [string, RegExp][] = [
    ['root ::= foo', /undefined rule "foo"/],
    ['start ::= "a"', /no "root" rule/],
    ['root ::= "a', /unterminated/],
    ['root ::= [a-', /unterminated/],
    ['root ::= "a"{3,1}', /max < min/],
    ['root ::= root "a" | "b"', /left-recursive/],
    ['root ::= "a" root', /can never finish/],
    ['root ::= "a" )', /unexpected/],
    ['root ::= "a"\nroot ::= "b"', /defined twice/],
    ['root ::= "\\q"', /unknown escape/],
  ];
  for (const [g, re] of cases) assert.throws(() => auto(g), (e: unknown) => e instanceof InvalidOptionError && re.test(e.message), g);
});
