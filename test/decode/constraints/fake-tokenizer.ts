/** A tiny in-memory Tokenizer for constraint tests: pieces given as text or raw bytes. */
import { TokenType, type Tokenizer } from '../../../src/tokenizer/tokenizer.ts';

/** Entry: text (Normal token), raw bytes (Byte token), or a control token name. */
export type FakePiece = string | number[] | { control: string };

export function fakeTokenizer(pieces: readonly FakePiece[], eos: number): Tokenizer {
  const bytes = pieces.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Array.isArray(p) ? Uint8Array.from(p) : Buffer.from(p.control)));
  const types = pieces.map((p) => (typeof p === 'string' ? TokenType.Normal : Array.isArray(p) ? TokenType.Byte : TokenType.Control));
  const names = pieces.map((p, i) => (typeof p === 'string' ? p : Array.isArray(p) ? `<bytes${i}>` : p.control));
  return {
    kind: 'spm', vocabSize: pieces.length, bos: null, eos, unk: null, endOfGeneration: new Set([eos]), addBos: false, addEos: false,
    encode: () => { throw new Error('not needed'); },
    piece: (id) => names[id]!,
    tokenId: (p) => { const i = names.indexOf(p); return i < 0 ? undefined : i; },
    tokenType: (id) => types[id]!,
    tokenBytes: (id) => bytes[id]!,
    decode: (ids) => Buffer.concat(ids.map((i) => bytes[i]!)).toString('utf8'),
  };
}
