/**
 * Hugging Face tokenizers normalizers (tokenizer.json `normalizer`): NFC/NFD/NFKC/NFKD, Lowercase,
 * Replace (string or regex), Prepend, Strip and Sequence. Anything else is refused by name.
 */
import { ModelFormatError, UnsupportedError } from '../errors.js';
import { compileHfRegex, escapeRegex } from './hf-regex.js';

/** A text → text normalization step. */
export type Normalizer = (text: string) => string;

type Json = Record<string, unknown>;

/** A tokenizer.json `{String: s}` / `{Regex: r}` pattern as a global RegExp. */
export function patternRegex(p: unknown, where: string): RegExp {
  const o = p as Json | null;
  if (o && typeof o['String'] === 'string') return new RegExp(escapeRegex(o['String']), 'gu');
  if (o && typeof o['Regex'] === 'string') return compileHfRegex(o['Regex']);
  throw new ModelFormatError(`tokenizer.json: ${where} has no String or Regex pattern`);
}

/** Build the normalizer described by tokenizer.json (null → identity). */
export function createNormalizer(spec: unknown): Normalizer | null {
  if (spec === null || spec === undefined) return null;
  const o = spec as Json;
  switch (o['type']) {
    case 'NFC': return (t) => t.normalize('NFC');
    case 'NFD': return (t) => t.normalize('NFD');
    case 'NFKC': return (t) => t.normalize('NFKC');
    case 'NFKD': return (t) => t.normalize('NFKD');
    case 'Lowercase': return (t) => t.toLowerCase();
    case 'Replace': {
      const re = patternRegex(o['pattern'], 'Replace normalizer');
      const content = String(o['content'] ?? '');
      return (t) => t.replace(re, () => content);
    }
    case 'Prepend': {
      const p = String(o['prepend'] ?? '');
      return (t) => (t.length > 0 ? p + t : t);
    }
    case 'Strip': {
      const left = o['strip_left'] !== false, right = o['strip_right'] !== false;
      return (t) => (left && right ? t.trim() : left ? t.trimStart() : right ? t.trimEnd() : t);
    }
    case 'Sequence': {
      const parts = ((o['normalizers'] as unknown[]) ?? []).map(createNormalizer).filter((n): n is Normalizer => n !== null);
      return (t) => parts.reduce((acc, n) => n(acc), t);
    }
    default:
      throw new UnsupportedError(`tokenizer.json normalizer "${String(o['type'])}" is not supported`);
  }
}
