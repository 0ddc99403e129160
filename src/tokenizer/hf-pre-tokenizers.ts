/**
 * Hugging Face tokenizers pre-tokenizers (tokenizer.json `pre_tokenizer`): Sequence, Split (string or
 * regex pattern, behavior Removed / Isolated / MergedWithPrevious / MergedWithNext / Contiguous,
 * invert), ByteLevel (GPT-2 regex and byte alphabet), Metaspace, Digits, Whitespace and
 * WhitespaceSplit. Each step maps every current piece to a list of pieces.
 */
import { UnsupportedError } from '../errors.js';
import { toByteLevel } from './byte-level.js';
import { compileHfRegex } from './hf-regex.js';
import { patternRegex } from './hf-normalizers.js';

/** Splits one piece; `first` is true for the piece that starts the encoded text. */
export type PreTokenizer = (pieces: string[], first: boolean) => string[];

type Json = Record<string, unknown>;
type Behavior = 'Removed' | 'Isolated' | 'MergedWithPrevious' | 'MergedWithNext' | 'Contiguous';

/** GPT-2's split pattern, used by ByteLevel with `use_regex`. */
const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/** Split `text` by `re` according to an HF split behavior. */
export function splitWith(text: string, re: RegExp, behavior: Behavior, invert = false): string[] {
  const segs: { s: string; m: boolean }[] = [];
  let prev = 0;
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    if (m[0].length === 0) { re.lastIndex += 1; continue; }
    if (m.index > prev) segs.push({ s: text.slice(prev, m.index), m: invert });
    segs.push({ s: m[0], m: !invert });
    prev = m.index + m[0].length;
  }
  if (prev < text.length) segs.push({ s: text.slice(prev), m: invert });
  const out: string[] = [];
  switch (behavior) {
    case 'Removed': for (const g of segs) if (!g.m) out.push(g.s); break;
    case 'Isolated': for (const g of segs) out.push(g.s); break;
    case 'MergedWithPrevious': {
      let cur = '';
      for (const g of segs) { cur += g.s; if (g.m) { out.push(cur); cur = ''; } }
      if (cur) out.push(cur);
      break;
    }
    case 'MergedWithNext': {
      let cur = '';
      for (const g of segs) { if (g.m && cur) { out.push(cur); cur = ''; } cur += g.s; }
      if (cur) out.push(cur);
      break;
    }
    case 'Contiguous': {
      let cur = '', curM: boolean | null = null;
      for (const g of segs) {
        if (curM === g.m && g.m) cur += g.s;
        else { if (cur) out.push(cur); cur = g.s; curM = g.m; }
      }
      if (cur) out.push(cur);
      break;
    }
    default: throw new UnsupportedError(`tokenizer.json Split behavior "${String(behavior)}" is not supported`);
  }
  return out;
}

/** Build the pre-tokenizer described by tokenizer.json (null → whole text is one piece). */
export function createPreTokenizer(spec: unknown): PreTokenizer | null {
  if (spec === null || spec === undefined) return null;
  const o = spec as Json;
  switch (o['type']) {
    case 'Sequence': {
      const steps = ((o['pretokenizers'] as unknown[]) ?? []).map(createPreTokenizer).filter((p): p is PreTokenizer => p !== null);
      return (pieces, first) => steps.reduce((acc, p) => p(acc, first), pieces);
    }
    case 'Split': {
      const re = patternRegex(o['pattern'], 'Split pre-tokenizer');
      const behavior = o['behavior'] as Behavior;
      const invert = o['invert'] === true;
      splitWith('', re, behavior, invert); // validates the behavior name now
      return (pieces) => pieces.flatMap((p) => splitWith(p, re, behavior, invert));
    }
    case 'ByteLevel': {
      const addPrefix = o['add_prefix_space'] === true;
      const re = o['use_regex'] !== false ? compileHfRegex(GPT2_PATTERN) : null;
      return (pieces) => pieces.flatMap((p) => {
        const t = addPrefix && !p.startsWith(' ') ? ' ' + p : p;
        return (re ? splitWith(t, re, 'Isolated') : [t]).map(toByteLevel);
      });
    }
    case 'Metaspace': {
      const rep = String(o['replacement'] ?? '\u2581');
      const scheme = String(o['prepend_scheme'] ?? (o['add_prefix_space'] === false ? 'never' : 'always'));
      if (!['always', 'first', 'never'].includes(scheme)) throw new UnsupportedError(`tokenizer.json Metaspace prepend_scheme "${scheme}" is not supported`);
      const split = o['split'] !== false;
      const repRe = new RegExp(rep.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'gu');
      return (pieces, first) => pieces.flatMap((p, i) => {
        let t = p.replaceAll(' ', rep);
        const prepend = scheme === 'always' || (scheme === 'first' && first && i === 0);
        if (prepend && !t.startsWith(rep)) t = rep + t;
        return split ? splitWith(t, repRe, 'MergedWithNext') : [t];
      });
    }
    case 'Digits': {
      const re = o['individual_digits'] === true ? /\p{Nd}/gu : /\p{Nd}+/gu;
      return (pieces) => pieces.flatMap((p) => splitWith(p, re, 'Isolated'));
    }
    case 'Whitespace': {
      const re = /[\p{L}\p{N}\p{M}\p{Pc}]+|[^\p{L}\p{N}\p{M}\p{Pc}\p{White_Space}]+/gu;
      return (pieces) => pieces.flatMap((p) => splitWith(p, re, 'Removed', true));
    }
    case 'WhitespaceSplit': {
      const re = /\p{White_Space}+/gu;
      return (pieces) => pieces.flatMap((p) => splitWith(p, re, 'Removed'));
    }
    default:
      throw new UnsupportedError(`tokenizer.json pre-tokenizer "${String(o['type'])}" is not supported`);
  }
}
