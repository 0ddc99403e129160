import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError, UnsupportedError } from '../../../src/errors.ts';
import { grammarAutomaton, jsonModeGbnf, jsonSchemaToGbnf } from '../../../src/decode/constraints/index.ts';
import { validatorFor } from './ajv-check.ts';

const accepts = (schema: unknown, text: string, whitespace = 0) =>
  grammarAutomaton(jsonSchemaToGbnf(schema, { whitespace })).accepts(Buffer.from(text, 'utf8'));

const person = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 4 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    kind: { enum: ['cat', 'dog', null, 3] },
    tags: { type: 'array', items: { type: 'boolean' }, minItems: 1, maxItems: 2 },
    home: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
  },
  required: ['name', 'age'],
  additionalProperties: false,
};

test('object schema: accepts exactly the compact, declared-order documents ajv accepts', () => {
  const valid = validatorFor(person);
  const docs = [
    '{"name":"Bo","age":3}', '{"name":"Böße","age":120,"kind":"dog"}', '{"name":"a","age":0,"kind":null,"tags":[true,false]}',
    '{"name":"a","age":7,"home":{"x":-1.5e3}}', '{"name":"\\u00e9\\n","age":9,"kind":3}', '{"name":"\\"","age":1,"tags":[false]}',
    // invalid ones
    '{"name":"","age":3}', '{"name":"abcde","age":3}', '{"name":"a","age":121}', '{"name":"a","age":-1}', '{"name":"a"}',
    '{"name":"a","age":1,"kind":"cow"}', '{"name":"a","age":1,"tags":[]}', '{"name":"a","age":1,"tags":[true,true,true]}',
    '{"name":"a","age":1.5}', '{"name":"a","age":1,"home":{}}', '{"name":"a","age":1,"zzz":1}',
  ];
  for (const d of docs) assert.equal(accepts(person, d), valid(JSON.parse(d)) === null, d);
  // Valid JSON the grammar deliberately does not generate: other property order, whitespace.
  assert.equal(accepts(person, '{"age":3,"name":"Bo"}'), false);
  assert.equal(accepts(person, '{"name":"Bo", "age":3}'), false);
  assert.equal(accepts(person, '{"name":"Bo", "age":3}', 1), true);
  assert.equal(accepts(person, '{"name":"Bo",   "age":3}', 2), false);
  // Raw control characters are never allowed inside strings.
  assert.equal(accepts(person, '{"name":"a\nb","age":3}'), false);
});

test('integer bounds: every integer in a window is accepted iff it is in range', () => {
  const bounds = [
    { minimum: -37, maximum: 105 }, { exclusiveMinimum: 9, exclusiveMaximum: 100 }, { minimum: -120, maximum: -7 },
    { minimum: 0 }, { maximum: -11 }, { minimum: 5, maximum: 5 }, { minimum: 1.5, maximum: 20.2 },
  ];
  for (const b of bounds) {
    const schema = { type: 'integer', ...b };
    const valid = validatorFor(schema);
    const a = grammarAutomaton(jsonSchemaToGbnf(schema));
    for (let n = -250; n <= 250; n++) assert.equal(a.accepts(Buffer.from(String(n))), valid(n) === null, `${JSON.stringify(b)} ${n}`);
    assert.equal(a.accepts(Buffer.from('007')), false, 'no leading zeros');
  }
});

test('number bounds (integer-valued): decimals near the edges', () => {
  const schema = { type: 'number', minimum: -3, maximum: 12 };
  const valid = validatorFor(schema);
  const a = grammarAutomaton(jsonSchemaToGbnf(schema));
  for (const s of ['-3', '-3.0', '-3.01', '-2.99', '0', '-0.5', '11.999', '12', '12.000', '12.001', '13', '0.25', '-4']) {
    assert.equal(a.accepts(Buffer.from(s)), valid(JSON.parse(s)) === null, s);
  }
});

test('anyOf, type arrays, const, $ref with recursion', () => {
  const schema = {
    anyOf: [{ type: 'string', maxLength: 2 }, { type: ['integer', 'null'] }, { const: { a: [1] } }, { $ref: '#/$defs/tree' }],
    $defs: { tree: { type: 'object', properties: { v: { type: 'boolean' }, kids: { type: 'array', items: { $ref: '#/$defs/tree' }, maxItems: 2 } }, required: ['v'] } },
  };
  const valid = validatorFor(schema);
  for (const d of ['"ab"', '"abc"', '7', 'null', '{"a":[1]}', '{"a":[2]}', '{"v":true}', '{"v":true,"kids":[{"v":false,"kids":[{"v":true}]}]}', '{"kids":[]}', 'true']) {
    assert.equal(accepts(schema, d), valid(JSON.parse(d)) === null, d);
  }
});

test('JSON mode accepts any JSON object (or value) and rejects malformed JSON', () => {
  const obj = grammarAutomaton(jsonModeGbnf());
  const val = grammarAutomaton(jsonModeGbnf({ root: 'value', whitespace: 2 }));
  for (const s of ['{}', '{"a":[1,{"b":null}],"c":"\\u2603"}']) assert.ok(obj.accepts(Buffer.from(s)), s);
  for (const s of ['[]', '1', '{"a":1,}', '{a:1}', "{'a':1}", '{"a":01}']) assert.ok(!obj.accepts(Buffer.from(s)), s);
  for (const s of ['[ 1, 2 ]', '"x"', '-0.5e-3', '{ "a" : { } }']) assert.ok(val.accepts(Buffer.from(s)), s);
  assert.ok(!val.accepts(Buffer.from('[1,   2]')), 'whitespace runs are limited');
});

test('unsupported keywords throw UnsupportedError naming the keyword', () => {
  const cases: [unknown, string][] = [
    [{ type: 'string', pattern: '^a$' }, 'pattern'],
    [{ type: 'string', format: 'date' }, 'format'],
    [{ type: 'array', uniqueItems: true }, 'uniqueItems'],
    [{ type: 'array', prefixItems: [{}] }, 'prefixItems'],
    [{ type: 'object', minProperties: 1 }, 'minProperties'],
    [{ type: 'object', patternProperties: {} }, 'patternProperties'],
    [{ allOf: [{ type: 'string' }, { maxLength: 3 }] }, 'allOf'],
    [{ type: 'number', multipleOf: 2 }, 'multipleOf'],
    [{ type: 'number', exclusiveMinimum: 0 }, 'exclusiveMinimum'],
    [{ type: 'number', minimum: 0.5 }, 'minimum'],
    [{ $ref: 'http://example.com/s.json' }, '$ref'],
    [{ type: 'object', properties: { a: { not: {} } } }, 'not'],
    [{ type: 'array', items: [{}, {}] }, 'items'],
    [{ if: {}, then: {} }, 'if'],
  ];
  for (const [schema, kw] of cases) {
    assert.throws(() => jsonSchemaToGbnf(schema), (e: unknown) => e instanceof UnsupportedError && e.message.includes(`"${kw}"`), kw);
  }
});

test('malformed schemas throw InvalidOptionError', () => {
  for (const s of [false, { type: 'text' }, { enum: [] }, { type: 'integer', minimum: 5, maximum: 4 }, { type: 'string', minLength: -1 },
    { $ref: '#/$defs/missing' }, { type: 'string', enum: [1, 2] }, 42]) {
    assert.throws(() => jsonSchemaToGbnf(s), InvalidOptionError, JSON.stringify(s));
  }
});
