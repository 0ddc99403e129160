/**
 * GGUF writer (version 3, little-endian): the inverse of parseGGUF in ./gguf.ts.
 * Layout (ggml docs/gguf.md): magic "GGUF", u32 version, u64 tensor_count, u64 kv_count, kv pairs
 * (string key, u32 value type, value), tensor infos (string name, u32 n_dims, u64 dims[], u32 type,
 * u64 offset relative to the data section), zero padding to `general.alignment` (default 32), then
 * each tensor's data at its offset, every tensor padded to the alignment.
 *
 * Tensor data can be given as chunks produced on demand (an iterable), so a converter writes a
 * file while holding one tensor's chunk at a time.
 */
import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { InvalidOptionError, ModelFormatError } from '../errors.js';
import { blockLayout, byteSize, GGMLType, isKnownType, typeName } from './dtypes.js';
import { GGUF_MAGIC, GGUFValueType } from './gguf.js';
import type { MetaValue } from './model-file.js';

/**
 * The value type of one metadata entry. Compatible with the `metaTypes` entries of parseGGUF;
 * `elem` describes the inner arrays of an array of arrays (inferred when absent).
 */
export interface GGUFTypeSpec {
  type: GGUFValueType;
  elemType?: GGUFValueType;
  elem?: GGUFTypeSpec;
}

/** One tensor to write. `dims` innermost first (GGUF order), as in TensorInfo. */
export interface GGUFWriterTensor {
  name: string;
  dims: readonly number[];
  type: GGMLType;
  /** The bytes, whole or as chunks (consumed once, in order, while the file is written). */
  data: Uint8Array | Iterable<Uint8Array>;
}

export interface GGUFWriterInput {
  /** Metadata in file order. */
  meta: Iterable<readonly [string, MetaValue]>;
  /** Value types by key; a key without one gets an inferred type (see inferType). */
  metaTypes?: ReadonlyMap<string, GGUFTypeSpec>;
  tensors: readonly GGUFWriterTensor[];
  /**
   * Data alignment. Default: `general.alignment` from `meta`, else 32. When it differs from 32 and
   * `meta` lacks the key, `general.alignment` (u32) is added so readers find the same value.
   */
  alignment?: number;
}

const encoder = new TextEncoder();

/**
 * The type a value gets when none is given: booleans BOOL, strings STRING, integers UINT32 when
 * they fit (llama.cpp reads counts and token ids as u32), else INT32/INT64/UINT64, other numbers
 * FLOAT32, bigints INT64 (UINT64 above the i64 range). Arrays take the element type that fits all
 * elements (integer arrays INT32, as `tokenizer.ggml.token_type`; mixed numbers FLOAT32).
 */
export function inferType(v: MetaValue, where = 'value'): GGUFTypeSpec {
  if (typeof v === 'boolean') return { type: GGUFValueType.BOOL };
  if (typeof v === 'string') return { type: GGUFValueType.STRING };
  if (typeof v === 'bigint') return { type: v > 0x7fffffffffffffffn ? GGUFValueType.UINT64 : GGUFValueType.INT64 };
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) return { type: GGUFValueType.FLOAT32 };
    if (v >= 0 && v <= 0xffffffff) return { type: GGUFValueType.UINT32 };
    if (v >= -0x80000000 && v < 0) return { type: GGUFValueType.INT32 };
    return { type: GGUFValueType.INT64 };
  }
  if (!Array.isArray(v)) throw new InvalidOptionError(`GGUF writer: ${where} has an unsupported JavaScript type`);
  if (v.length === 0) return { type: GGUFValueType.ARRAY, elemType: GGUFValueType.INT32 };
  const first = v[0]!;
  if (Array.isArray(first)) return { type: GGUFValueType.ARRAY, elemType: GGUFValueType.ARRAY, elem: inferType(first, where) };
  if (typeof first === 'string') return { type: GGUFValueType.ARRAY, elemType: GGUFValueType.STRING };
  if (typeof first === 'boolean') return { type: GGUFValueType.ARRAY, elemType: GGUFValueType.BOOL };
  if (v.some((x) => typeof x === 'bigint')) return { type: GGUFValueType.ARRAY, elemType: GGUFValueType.INT64 };
  const allInt = v.every((x) => typeof x === 'number' && Number.isInteger(x) && x >= -0x80000000 && x <= 0x7fffffff);
  return { type: GGUFValueType.ARRAY, elemType: allInt ? GGUFValueType.INT32 : GGUFValueType.FLOAT32 };
}

/** Growable little-endian byte sink for the header. */
class ByteSink {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;
  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u8(v: number): void { this.room(1); this.view.setUint8(this.length, v); this.length += 1; }
  i8(v: number): void { this.room(1); this.view.setInt8(this.length, v); this.length += 1; }
  u16(v: number): void { this.room(2); this.view.setUint16(this.length, v, true); this.length += 2; }
  i16(v: number): void { this.room(2); this.view.setInt16(this.length, v, true); this.length += 2; }
  u32(v: number): void { this.room(4); this.view.setUint32(this.length, v, true); this.length += 4; }
  i32(v: number): void { this.room(4); this.view.setInt32(this.length, v, true); this.length += 4; }
  f32(v: number): void { this.room(4); this.view.setFloat32(this.length, v, true); this.length += 4; }
  f64(v: number): void { this.room(8); this.view.setFloat64(this.length, v, true); this.length += 8; }
  u64(v: bigint): void { this.room(8); this.view.setBigUint64(this.length, v, true); this.length += 8; }
  i64(v: bigint): void { this.room(8); this.view.setBigInt64(this.length, v, true); this.length += 8; }
  bytes(b: Uint8Array): void { this.room(b.length); this.buf.set(b, this.length); this.length += b.length; }
  str(s: string): void { const b = encoder.encode(s); this.u64(BigInt(b.length)); this.bytes(b); }
  zeros(n: number): void { this.room(n); this.buf.fill(0, this.length, this.length + n); this.length += n; }
  result(): Uint8Array { return this.buf.slice(0, this.length); }
}

function intIn(v: MetaValue, lo: number, hi: number, what: string, where: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) {
    throw new InvalidOptionError(`GGUF writer: ${where} must be a ${what} (integer in ${lo}..${hi}), got ${describe(v)}`);
  }
  return v;
}

function bigIn(v: MetaValue, lo: bigint, hi: bigint, what: string, where: string): bigint {
  if (!(typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v)))) {
    throw new InvalidOptionError(`GGUF writer: ${where} must be a ${what} integer, got ${describe(v)}`);
  }
  const b = BigInt(v);
  if (b < lo || b > hi) throw new InvalidOptionError(`GGUF writer: ${where} is out of range for ${what}: ${b}`);
  return b;
}

function describe(v: MetaValue): string {
  if (Array.isArray(v)) return `an array of ${v.length}`;
  return typeof v === 'string' ? JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v) : String(v);
}

function writeValue(s: ByteSink, v: MetaValue, spec: GGUFTypeSpec, where: string, depth = 0): void {
  switch (spec.type) {
    case GGUFValueType.UINT8: s.u8(intIn(v, 0, 0xff, 'UINT8', where)); return;
    case GGUFValueType.INT8: s.i8(intIn(v, -0x80, 0x7f, 'INT8', where)); return;
    case GGUFValueType.UINT16: s.u16(intIn(v, 0, 0xffff, 'UINT16', where)); return;
    case GGUFValueType.INT16: s.i16(intIn(v, -0x8000, 0x7fff, 'INT16', where)); return;
    case GGUFValueType.UINT32: s.u32(intIn(v, 0, 0xffffffff, 'UINT32', where)); return;
    case GGUFValueType.INT32: s.i32(intIn(v, -0x80000000, 0x7fffffff, 'INT32', where)); return;
    case GGUFValueType.UINT64: s.u64(bigIn(v, 0n, 0xffffffffffffffffn, 'UINT64', where)); return;
    case GGUFValueType.INT64: s.i64(bigIn(v, -0x8000000000000000n, 0x7fffffffffffffffn, 'INT64', where)); return;
    case GGUFValueType.FLOAT32:
    case GGUFValueType.FLOAT64:
      if (typeof v !== 'number') throw new InvalidOptionError(`GGUF writer: ${where} must be a number, got ${describe(v)}`);
      if (spec.type === GGUFValueType.FLOAT32) s.f32(v); else s.f64(v);
      return;
    case GGUFValueType.BOOL:
      if (typeof v !== 'boolean') throw new InvalidOptionError(`GGUF writer: ${where} must be a boolean, got ${describe(v)}`);
      s.u8(v ? 1 : 0);
      return;
    case GGUFValueType.STRING:
      if (typeof v !== 'string') throw new InvalidOptionError(`GGUF writer: ${where} must be a string, got ${describe(v)}`);
      s.str(v);
      return;
    case GGUFValueType.ARRAY: {
      if (!Array.isArray(v)) throw new InvalidOptionError(`GGUF writer: ${where} must be an array, got ${describe(v)}`);
      if (depth > 8) throw new InvalidOptionError(`GGUF writer: ${where} nests arrays too deeply`);
      const elemType = spec.elemType ?? inferType(v, where).elemType!;
      s.u32(elemType);
      s.u64(BigInt(v.length));
      for (let i = 0; i < v.length; i++) {
        const item = v[i]!;
        const elemSpec: GGUFTypeSpec = elemType === GGUFValueType.ARRAY
          ? (spec.elem && spec.elem.type === GGUFValueType.ARRAY ? spec.elem : inferType(item, where))
          : { type: elemType };
        writeValue(s, item, elemSpec, `${where}[${i}]`, depth + 1);
      }
      return;
    }
    default:
      throw new InvalidOptionError(`GGUF writer: ${where} has unknown value type ${String(spec.type)}`);
  }
}

/** A tensor's position in the data section, as the header records it. */
export interface GGUFLayoutEntry { name: string; offset: number; byteLength: number }

/** The encoded header (with padding) and where each tensor's data goes. */
export interface GGUFLayout {
  header: Uint8Array;
  alignment: number;
  tensors: GGUFLayoutEntry[];
  /** Total file size in bytes. */
  fileBytes: number;
}

const alignUp = (n: number, a: number) => Math.ceil(n / a) * a;

/** Encode the header and lay out the data section (no tensor data is read). */
export function layoutGGUF(input: GGUFWriterInput): GGUFLayout {
  const meta = [...input.meta];
  const keys = new Set<string>();
  for (const [k] of meta) {
    if (keys.has(k)) throw new InvalidOptionError(`GGUF writer: duplicate metadata key "${k}"`);
    keys.add(k);
  }
  let alignment = input.alignment;
  const metaAlign = meta.find(([k]) => k === 'general.alignment')?.[1];
  if (metaAlign !== undefined) {
    if (alignment !== undefined && alignment !== metaAlign) {
      throw new InvalidOptionError(`GGUF writer: alignment ${alignment} disagrees with general.alignment ${String(metaAlign)}`);
    }
    alignment = metaAlign as number;
  }
  alignment ??= 32;
  if (typeof alignment !== 'number' || !Number.isInteger(alignment) || alignment <= 0 || (alignment & (alignment - 1)) !== 0) {
    throw new InvalidOptionError(`GGUF writer: alignment must be a power of two, got ${String(alignment)}`);
  }
  if (metaAlign === undefined && alignment !== 32) meta.push(['general.alignment', alignment]);

  const s = new ByteSink();
  s.u32(GGUF_MAGIC);
  s.u32(3);
  s.u64(BigInt(input.tensors.length));
  s.u64(BigInt(meta.length));
  for (const [key, value] of meta) {
    const spec = input.metaTypes?.get(key)
      ?? (key === 'general.alignment' ? { type: GGUFValueType.UINT32 } : inferType(value, `metadata "${key}"`));
    s.str(key);
    s.u32(spec.type);
    writeValue(s, value, spec, `metadata "${key}"`);
  }
  const entries: GGUFLayoutEntry[] = [];
  const names = new Set<string>();
  let rel = 0;
  for (const t of input.tensors) {
    if (names.has(t.name)) throw new InvalidOptionError(`GGUF writer: duplicate tensor name "${t.name}"`);
    names.add(t.name);
    if (!isKnownType(t.type)) throw new InvalidOptionError(`GGUF writer: tensor "${t.name}" has unknown type id ${t.type}`);
    if (t.dims.length < 1 || t.dims.length > 4 || t.dims.some((d) => !Number.isInteger(d) || d < 1)) {
      throw new InvalidOptionError(`GGUF writer: tensor "${t.name}" has invalid dimensions [${t.dims.join(', ')}] (1..4 positive integers)`);
    }
    const { blockElems } = blockLayout(t.type);
    if (t.dims[0]! % blockElems !== 0) {
      throw new InvalidOptionError(`GGUF writer: tensor "${t.name}" row length ${t.dims[0]} is not a multiple of the ${typeName(t.type)} block size ${blockElems}`);
    }
    const byteLength = byteSize(t.type, t.dims.reduce((a, b) => a * b, 1));
    s.str(t.name);
    s.u32(t.dims.length);
    for (const d of t.dims) s.u64(BigInt(d));
    s.u32(t.type);
    s.u64(BigInt(rel));
    entries.push({ name: t.name, offset: rel, byteLength });
    rel = alignUp(rel + byteLength, alignment);
  }
  s.zeros(alignUp(s.length, alignment) - s.length);
  const header = s.result();
  return { header, alignment, tensors: entries, fileBytes: header.length + rel };
}

/** Yield the tensor's chunks, checking that they add up to the size its header promised. */
function* tensorChunks(t: GGUFWriterTensor, expected: number): Generator<Uint8Array> {
  let got = 0;
  const chunks: Iterable<Uint8Array> = t.data instanceof Uint8Array ? [t.data] : t.data;
  for (const c of chunks) {
    got += c.byteLength;
    if (got > expected) break;
    yield c;
  }
  if (got !== expected) {
    throw new ModelFormatError(`GGUF writer: tensor "${t.name}" (${typeName(t.type)} [${t.dims.join(', ')}]) needs ${expected} bytes of data but got ${got}${got > expected ? ' or more' : ''}`);
  }
}

/** Write a GGUF file; tensor chunks are written as they are produced. Returns the file size. */
export function writeGGUF(path: string, input: GGUFWriterInput): number {
  const layout = layoutGGUF(input);
  const fd = openSync(path, 'w');
  try {
    let pos = 0;
    const put = (b: Uint8Array) => {
      let off = 0;
      while (off < b.byteLength) off += writeSync(fd, b, off, b.byteLength - off, pos + off);
      pos += b.byteLength;
    };
    put(layout.header);
    const zeros = new Uint8Array(layout.alignment);
    input.tensors.forEach((t, i) => {
      const e = layout.tensors[i]!;
      for (const c of tensorChunks(t, e.byteLength)) put(c);
      put(zeros.subarray(0, alignUp(pos, layout.alignment) - pos));
    });
    if (pos !== layout.fileBytes) throw new Error(`GGUF writer: wrote ${pos} bytes, expected ${layout.fileBytes}`);
  } catch (e) {
    // Never leave a half-written model file behind.
    closeSync(fd);
    try { unlinkSync(path); } catch { /* already gone */ }
    throw e;
  }
  closeSync(fd);
  return layout.fileBytes;
}

/** Build a whole GGUF file in memory (small files and tests). */
export function encodeGGUF(input: GGUFWriterInput): Uint8Array {
  const layout = layoutGGUF(input);
  const out = new Uint8Array(layout.fileBytes);
  out.set(layout.header, 0);
  input.tensors.forEach((t, i) => {
    const e = layout.tensors[i]!;
    let pos = layout.header.length + e.offset;
    for (const c of tensorChunks(t, e.byteLength)) { out.set(c, pos); pos += c.byteLength; }
  });
  return out;
}
