import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeGGUF, writeGGUF, type GGUFTypeSpec } from '../../src/format/gguf-writer.ts';
import { parseGGUF, GGUFValueType as V } from '../../src/format/gguf.ts';
import { GGMLType } from '../../src/format/dtypes.ts';
import type { MetaValue } from '../../src/format/model-file.ts';
import { InvalidOptionError, ModelFormatError } from '../../src/errors.ts';

const META: [string, MetaValue, GGUFTypeSpec][] = [
  ['u8', 255, { type: V.UINT8 }],
  ['i8', -128, { type: V.INT8 }],
  ['u16', 65535, { type: V.UINT16 }],
  ['i16', -32768, { type: V.INT16 }],
  ['u32', 4294967295, { type: V.UINT32 }],
  ['i32', -2147483648, { type: V.INT32 }],
  ['f32', 0.5, { type: V.FLOAT32 }],
  ['bool.t', true, { type: V.BOOL }],
  ['bool.f', false, { type: V.BOOL }],
  ['str', 'héllo ▁wörld 🦙', { type: V.STRING }],
  ['u64.small', 42, { type: V.UINT64 }],
  ['u64.big', 18446744073709551615n, { type: V.UINT64 }],
  ['i64', -9223372036854775808n, { type: V.INT64 }],
  ['f64', Math.PI, { type: V.FLOAT64 }],
  ['arr.str', ['a', '', 'ß', '<0x0A>'], { type: V.ARRAY, elemType: V.STRING }],
  ['arr.f32', [0, -1.5, 3.25], { type: V.ARRAY, elemType: V.FLOAT32 }],
  ['arr.i32', [1, -2, 3], { type: V.ARRAY, elemType: V.INT32 }],
  ['arr.u8', [0, 7, 255], { type: V.ARRAY, elemType: V.UINT8 }],
  ['arr.bool', [true, false], { type: V.ARRAY, elemType: V.BOOL }],
  ['arr.empty', [], { type: V.ARRAY, elemType: V.FLOAT32 }],
  ['arr.nested', [[1, 2], [3], []], { type: V.ARRAY, elemType: V.ARRAY, elem: { type: V.ARRAY, elemType: V.UINT16 } }],
  ['arr.nested.str', [['x', 'y'], ['z']], { type: V.ARRAY, elemType: V.ARRAY }],
];

function tensors() {
  const f32 = new Float32Array([1, 2, 3, 4, 5, 6]);
  const q8 = new Uint8Array(34 * 2).map((_, i) => i);
  return [
    { name: 'a.weight', dims: [3, 2], type: GGMLType.F32, data: new Uint8Array(f32.buffer) },
    // chunks that add up to the tensor: two Q8_0 blocks written block by block
    { name: 'b.weight', dims: [64], type: GGMLType.Q8_0, data: [q8.subarray(0, 34), q8.subarray(34)] },
    { name: 'c', dims: [5], type: GGMLType.F16, data: new Uint8Array(10).fill(0x3c) },
  ];
}

test('writer round-trips every metadata value type, nested arrays and tensors through parseGGUF', () => {
  const bytes = encodeGGUF({ meta: META.map(([k, v]) => [k, v] as const), metaTypes: new Map(META.map(([k, , t]) => [k, t])), tensors: tensors() });
  const g = parseGGUF(bytes);
  assert.equal(g.version, 3);
  assert.equal(g.alignment, 32);
  for (const [k, v, t] of META) {
    assert.deepEqual(g.meta.get(k), v, k);
    assert.equal(g.metaTypes.get(k)!.type, t.type, `type of ${k}`);
    if (t.elemType !== undefined) assert.equal(g.metaTypes.get(k)!.elemType, t.elemType, `element type of ${k}`);
  }
  assert.deepEqual([...g.meta.keys()], META.map(([k]) => k), 'key order kept');
  const a = g.tensors.get('a.weight')!;
  assert.deepEqual(a.dims, [3, 2]);
  assert.deepEqual([...new Float32Array(a.data.slice().buffer)], [1, 2, 3, 4, 5, 6]);
  const b = g.tensors.get('b.weight')!;
  assert.equal(b.type, GGMLType.Q8_0);
  assert.deepEqual([...b.data], [...new Uint8Array(68).map((_, i) => i)]);
  assert.deepEqual([...g.tensors.get('c')!.data], new Array(10).fill(0x3c));
  for (const t of g.tensors.values()) assert.equal((t.offset - g.dataOffset) % 32, 0, `${t.name} aligned`);
  assert.equal(bytes.length % 32, 0, 'last tensor padded');
});

test('writer keeps the types parseGGUF reports, so a file re-encodes byte for byte', () => {
  const first = encodeGGUF({ meta: META.map(([k, v]) => [k, v] as const), metaTypes: new Map(META.map(([k, , t]) => [k, t])), tensors: tensors() });
  const g = parseGGUF(first);
  const again = encodeGGUF({
    meta: g.meta, metaTypes: new Map([...g.metaTypes].map(([k, t]) => [k, k === 'arr.nested' ? { ...t, elem: { type: V.ARRAY, elemType: V.UINT16 } } : t])),
    tensors: [...g.tensors.values()].map((t) => ({ name: t.name, dims: t.dims, type: t.type, data: t.data })),
  });
  assert.deepEqual(again, first);
});

test('writer honours a custom alignment and records general.alignment', () => {
  for (const alignment of [64, 256]) {
    const bytes = encodeGGUF({ meta: [['general.architecture', 'llama']], tensors: tensors(), alignment });
    const g = parseGGUF(bytes);
    assert.equal(g.alignment, alignment);
    assert.equal(g.meta.get('general.alignment'), alignment);
    assert.equal(g.metaTypes.get('general.alignment')!.type, V.UINT32);
    assert.equal(g.dataOffset % alignment, 0);
    for (const t of g.tensors.values()) assert.equal(t.offset % alignment, 0, `${t.name} at ${t.offset}`);
  }
  // general.alignment given in the metadata decides
  const g = parseGGUF(encodeGGUF({ meta: [['general.alignment', 16]], tensors: tensors() }));
  assert.equal(g.alignment, 16);
});

test('inferred types: integers u32, negatives i32, fractions f32, integer arrays i32, mixed f32', () => {
  const g = parseGGUF(encodeGGUF({ meta: [['n', 7], ['neg', -3], ['x', 1e-5], ['ids', [1, 2]], ['sc', [0, -0.5]], ['big', 2 ** 40], ['s', ['a']]], tensors: [] }));
  const types = Object.fromEntries([...g.metaTypes].map(([k, t]) => [k, [t.type, t.elemType]]));
  assert.deepEqual(types, {
    n: [V.UINT32, undefined], neg: [V.INT32, undefined], x: [V.FLOAT32, undefined], ids: [V.ARRAY, V.INT32],
    sc: [V.ARRAY, V.FLOAT32], big: [V.INT64, undefined], s: [V.ARRAY, V.STRING],
  });
  assert.equal(g.meta.get('big'), 2 ** 40);
});

test('writer rejects bad input with clear messages', () => {
  const t = (meta: [string, MetaValue][], types?: Map<string, GGUFTypeSpec>) => () => encodeGGUF({ meta, metaTypes: types, tensors: [] });
  assert.throws(t([['k', 256]], new Map([['k', { type: V.UINT8 }]])), (e: Error) => e instanceof InvalidOptionError && /"k" must be a UINT8/.test(e.message));
  assert.throws(t([['k', 'x']], new Map([['k', { type: V.FLOAT32 }]])), /"k" must be a number/);
  assert.throws(t([['k', 1.5]], new Map([['k', { type: V.INT32 }]])), /must be a INT32/);
  assert.throws(t([['k', [1, 'x']]], new Map([['k', { type: V.ARRAY, elemType: V.INT32 }]])), /"k"\[1\] must be a INT32/);
  assert.throws(t([['k', 1], ['k', 2]]), /duplicate metadata key "k"/);
  assert.throws(() => encodeGGUF({ meta: [], tensors: [], alignment: 24 }), /alignment must be a power of two/);
  assert.throws(() => encodeGGUF({ meta: [], tensors: [{ name: 'q', dims: [33], type: GGMLType.Q8_0, data: new Uint8Array(0) }] }), /row length 33 is not a multiple of the Q8_0 block size 32/);
  assert.throws(() => encodeGGUF({ meta: [], tensors: [{ name: 'w', dims: [4], type: GGMLType.F32, data: new Uint8Array(12) }] }),
    (e: Error) => e instanceof ModelFormatError && /"w" .* needs 16 bytes of data but got 12/.test(e.message));
  assert.throws(() => encodeGGUF({ meta: [], tensors: [{ name: 'w', dims: [4], type: GGMLType.F32, data: new Uint8Array(16) }, { name: 'w', dims: [4], type: GGMLType.F32, data: new Uint8Array(16) }] }), /duplicate tensor name "w"/);
});

test('writeGGUF streams chunks to disk and removes the file when a tensor comes up short', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tl-writer-'));
  try {
    const path = join(dir, 'x.gguf');
    const size = writeGGUF(path, { meta: [['general.architecture', 'llama']], tensors: tensors() });
    const bytes = new Uint8Array(readFileSync(path));
    assert.equal(bytes.length, size);
    assert.deepEqual(bytes, encodeGGUF({ meta: [['general.architecture', 'llama']], tensors: tensors() }));
    const bad = join(dir, 'bad.gguf');
    assert.throws(() => writeGGUF(bad, { meta: [], tensors: [{ name: 'w', dims: [8], type: GGMLType.F32, data: [new Uint8Array(16)] }] }), /needs 32 bytes/);
    assert.equal(existsSync(bad), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
