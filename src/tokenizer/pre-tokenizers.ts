/**
 * The pre-tokenizer table of byte-level BPE vocabularies: `tokenizer.ggml.pre` → the list of regex
 * splits that llama.cpp applies one after another (llama-vocab.cpp, `llm_tokenizer_bpe`), plus the
 * per-family flags llama.cpp sets at load time (ignore_merges, add_bos, clean_spaces).
 *
 * Each regex splits every current fragment further; the text between matches stays as its own
 * fragment. The split engine reproduces llama.cpp (unicode.cpp `unicode_regex_split`) exactly:
 * - the GPT-2 and Llama-3 patterns run as hand-written scanners with llama.cpp's character classes;
 * - other patterns using \p{..} run on a "collapsed" text where every non-ASCII code point becomes one
 *   marker per category (letters, numbers, ...), the \p{..} classes being rewritten to match the marker
 *   plus their ASCII members (so e.g. '~' is not \p{S} there, as in llama.cpp);
 * - patterns without \p{..} run on the code points, non-ASCII whitespace replaced by \v and \s meaning
 *   ASCII whitespace only (C++ std::wregex behaviour).
 */
import { UnsupportedError } from '../errors.js';
import {
  codePoints, cptFlags, CPT_LETTER, CPT_MARK, CPT_NUMBER, CPT_PUNCTUATION, CPT_SYMBOL, CPT_WHITESPACE,
} from './unicode-flags.js';

/** How one `tokenizer.ggml.pre` value tokenizes. */
export interface PreTokenizerSpec {
  /** The llama.cpp pre-type the name resolves to. */
  type: string;
  regexes: readonly string[];
  ignoreMerges: boolean;
  /** llama.cpp turns add_bos on for these families unless the file says otherwise. */
  addBos: boolean;
  cleanSpaces: boolean;
}

const GPT2 = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`;
const LLAMA3 = String.raw`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;
const LLAMA3_ORIG = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;
const QWEN2 = String.raw`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;
const CONTRACTIONS = String.raw`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`;
const UPPER_THEN_LOWER = String.raw`[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+`;
const UPPER_RUN = String.raw`[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*`;
const BLOOM = ' ?[^(\\s|.,!?…。，、।۔،)]+';
const DEEPSEEK_V3 = String.raw`[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_` + '`' + String.raw`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

const TABLE: Record<string, Omit<PreTokenizerSpec, 'type' | 'ignoreMerges' | 'addBos' | 'cleanSpaces'> & Partial<PreTokenizerSpec>> = {
  'default': { regexes: [String.raw`[\p{P}\$\+<=>\^~\|]+`, GPT2, String.raw`\p{N}+`, '[0-9][0-9][0-9]'] },
  'llama3': { regexes: [LLAMA3], ignoreMerges: true, addBos: true },
  'dbrx': { regexes: [LLAMA3] },
  'deepseek-llm': {
    // Code points with canonical singleton decompositions (U+1F7D, U+1FBE, U+2126, ...) are written as
    // escapes so that no editor or NFC pass can silently change them.
    regexes: [
      '[\r\n]',
      '\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\\u{1F7D}ᾀ-ᾴᾶ-ᾼ\\u{1FBE}ῂ-ῄῆ-ῌῐ-\\u{1FD3}ῖ-\\u{1FDB}ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\\u{2126}ℨ\\u{212A}-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+',
      '\\s?[!-/:-~！-／：-～‘-‟　-。]+',
      '\\s+$',
      '[一-龥ࠀ-一가-퟿]+',
      '\\p{N}+',
    ],
    cleanSpaces: false,
  },
  'deepseek-v3': { regexes: [String.raw`\p{N}{1,3}`, '[一-龥぀-ゟ゠-ヿ]+', DEEPSEEK_V3], cleanSpaces: false },
  'deepseek-coder': { regexes: ['[\r\n]', String.raw`\s?\p{L}+`, String.raw`\s?\p{P}+`, '[一-龥ࠀ-一가-퟿]+', String.raw`\p{N}`], cleanSpaces: false },
  'falcon': { regexes: [String.raw`[\p{P}\$\+<=>\^~\|` + '`' + ']+', GPT2, '[0-9][0-9][0-9]'] },
  'starcoder': { regexes: [String.raw`\p{N}`, GPT2] },
  'gpt2': { regexes: [GPT2] },
  'qwen2': { regexes: [QWEN2], cleanSpaces: false },
  'poro': { regexes: [BLOOM], cleanSpaces: false },
  'bloom': { regexes: [BLOOM] },
  'chatglm4': { regexes: [LLAMA3] },
  'viking': { regexes: [BLOOM, String.raw`\p{N}`], cleanSpaces: false },
  'tekken': {
    regexes: [`${UPPER_THEN_LOWER}|${UPPER_RUN}|` + String.raw`\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`],
    ignoreMerges: true, addBos: true, cleanSpaces: false,
  },
  'chameleon': {
    regexes: ['<sentinel:[0-9]+>', '(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z', String.raw`([\t\n]|    |  )`, String.raw`\p{N}`,
      String.raw`[\p{P}!-/:-@\[-` + '`' + '{-~]', GPT2],
    addBos: true, cleanSpaces: false,
  },
  'gpt4o': {
    regexes: [`${UPPER_THEN_LOWER}${CONTRACTIONS}?|${UPPER_RUN}${CONTRACTIONS}?|` + String.raw`\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`],
    cleanSpaces: false,
  },
  'seed-coder': {
    regexes: [String.raw`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+`],
    cleanSpaces: false,
  },
  'bailingmoe': {
    regexes: [String.raw`'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+`],
    cleanSpaces: false,
  },
};

/** `tokenizer.ggml.pre` names → table entry and the flags llama.cpp overrides for that name. */
const NAMES: Record<string, [type: string, flags?: Partial<PreTokenizerSpec>]> = {
  'default': ['default'],
  'llama3': ['llama3'], 'llama-v3': ['llama3'], 'llama-bpe': ['llama3'], 'falcon3': ['llama3'], 'falcon-h1': ['llama3'],
  'pixtral': ['llama3'], 'midm-2.0': ['llama3'], 'lfm2': ['llama3'],
  'deepseek-llm': ['deepseek-llm'], 'deepseek-coder': ['deepseek-coder'], 'deepseek-v3': ['deepseek-v3'],
  'hunyuan-dense': ['deepseek-v3'],
  'falcon': ['falcon'],
  'mpt': ['gpt2'], 'olmo': ['gpt2'], 'jais': ['gpt2'], 'trillion': ['gpt2', { cleanSpaces: false }],
  'granite-docling': ['gpt2', { cleanSpaces: false }], 'exaone4': ['gpt2'],
  'gpt-2': ['gpt2'], 'phi-2': ['gpt2'], 'jina-es': ['gpt2'], 'jina-de': ['gpt2'], 'gigachat': ['gpt2'],
  'jina-v2-es': ['gpt2'], 'jina-v2-de': ['gpt2'], 'a.x-4.0': ['gpt2'], 'mellum': ['gpt2'], 'modern-bert': ['gpt2'],
  'jina-v1-en': ['gpt2'], 'jina-v2-code': ['gpt2'], 'roberta-bpe': ['gpt2'],
  'starcoder': ['starcoder'], 'refact': ['starcoder'], 'command-r': ['starcoder', { cleanSpaces: false }],
  'smollm': ['starcoder', { cleanSpaces: false }], 'codeshell': ['starcoder'], 'exaone': ['starcoder'],
  'minerva-7b': ['starcoder'],
  'qwen2': ['qwen2'], 'deepseek-r1-qwen': ['qwen2'], 'stablelm2': ['qwen2', { cleanSpaces: true }],
  'hunyuan': ['qwen2'], 'megrez': ['qwen2', { cleanSpaces: true }],
  'dbrx': ['dbrx'], 'smaug-bpe': ['dbrx'],
  'poro-chat': ['poro'], 'bloom': ['bloom'], 'gpt3-finnish': ['bloom'],
  'chatglm-bpe': ['chatglm4'], 'glm4': ['chatglm4'],
  'viking': ['viking'], 'tekken': ['tekken'], 'chameleon': ['chameleon'],
  'gpt-4o': ['gpt4o'], 'llama4': ['gpt4o'], 'minimax-m2': ['gpt4o'],
  'seed-coder': ['seed-coder'], 'bailingmoe': ['bailingmoe'], 'bailingmoe2': ['bailingmoe'], 'llada-moe': ['bailingmoe'],
};

/** The pre-tokenizer names this table knows. */
export const KNOWN_PRE_TOKENIZERS: readonly string[] = Object.keys(NAMES);

/**
 * Resolve `tokenizer.ggml.pre`. A missing value uses llama.cpp's 'default' splits; an unknown one
 * throws UnsupportedError naming it (llama.cpp refuses to load such a file too).
 */
export function preTokenizerFor(pre: string | undefined): PreTokenizerSpec {
  const name = pre === undefined || pre === '' ? 'default' : pre;
  const entry = NAMES[name];
  if (!entry) throw new UnsupportedError(`unsupported pre-tokenizer '${name}' (tokenizer.ggml.pre)`);
  const [type, flags] = entry;
  const t = TABLE[type]!;
  return {
    type, regexes: t.regexes, ignoreMerges: t.ignoreMerges ?? false, addBos: t.addBos ?? false,
    cleanSpaces: t.cleanSpaces ?? true, ...flags,
  };
}

// ---------------------------------------------------------------------------------------------
// The split engine.

type Splitter = (cps: readonly number[], offsets: number[], ctx: SplitContext) => number[];

interface SplitContext { collapsed?: string; wide?: { text: string; unitToCp: Int32Array } }

const CATEGORY_MARK: Record<string, { flag: number; marker: string; ascii: string }> = {
  '\\p{N}': { flag: CPT_NUMBER, marker: '\xD1', ascii: '0-9' },
  '\\p{L}': { flag: CPT_LETTER, marker: '\xD2', ascii: 'A-Za-z' },
  '\\p{P}': { flag: CPT_PUNCTUATION, marker: '\xD3', ascii: '!-#%-*,-/:-;?-@\\[-\\]_\\{\\}' },
  '\\p{M}': { flag: CPT_MARK, marker: '\xD4', ascii: '' },
  '\\p{S}': { flag: CPT_SYMBOL, marker: '\xD5', ascii: '\\$\\+<->\\^`\\|' },
  '\\p{Lu}': { flag: CPT_LETTER, marker: '\xD2', ascii: 'A-Za-z' },
  '\\p{Ll}': { flag: CPT_LETTER, marker: '\xD2', ascii: 'A-Za-z' },
  '\\p{Lt}': { flag: CPT_LETTER, marker: '\xD2', ascii: 'A-Za-z' },
  '\\p{Lm}': { flag: CPT_LETTER, marker: '\xD2', ascii: 'A-Za-z' },
  '\\p{Lo}': { flag: CPT_LETTER, marker: '\xD2', ascii: 'A-Za-z' },
};
const CATEGORY_RE = /\\p\{(?:N|L|P|M|S|Lu|Ll|Lt|Lm|Lo)\}/;

function collapsedText(cps: readonly number[]): string {
  let s = '';
  for (const cp of cps) {
    if (cp < 128) { s += String.fromCharCode(cp); continue; }
    const f = cptFlags(cp);
    if (f & CPT_WHITESPACE) s += '\x0B';
    else if (f & CPT_NUMBER) s += '\xD1';
    else if (f & CPT_LETTER) s += '\xD2';
    else if (f & CPT_PUNCTUATION) s += '\xD3';
    else if (f & CPT_MARK) s += '\xD4';
    else if (f & CPT_SYMBOL) s += '\xD5';
    else s += '\xD0';
  }
  return s;
}

/** Rewrite \p{..} into marker classes (llama.cpp's collapsed regex). */
function collapseRegex(re: string): string {
  let out = '';
  let inside = false;
  for (let i = 0; i < re.length; i++) {
    const c = re[i]!;
    if (c === '[' && (i === 0 || re[i - 1] !== '\\')) { out += '['; inside = true; continue; }
    if (inside && c === ']' && re[i - 1] !== '\\') { out += ']'; inside = false; continue; }
    if (c === '\\' && re[i + 1] === 'p' && re[i + 2] === '{') {
      const close = re.indexOf('}', i + 3);
      const cat = close >= 0 ? CATEGORY_MARK[re.slice(i, close + 1)] : undefined;
      if (cat) {
        const body = cat.marker + cat.ascii;
        out += inside ? body : `[${body}]`;
        i = close;
        continue;
      }
    }
    out += c;
  }
  return out;
}

/** \s / \S → ASCII whitespace only (std::wregex in the C locale). */
function asciiWhitespaceRegex(re: string): string {
  let out = '';
  let inside = false;
  for (let i = 0; i < re.length; i++) {
    const c = re[i]!;
    if (c === '\\') {
      const n = re[i + 1];
      if (n === 's') { out += inside ? '\\t-\\r ' : '[\\t-\\r ]'; i++; continue; }
      if (n === 'S') {
        if (inside) throw new UnsupportedError(`pre-tokenizer regex uses \\S inside a class: ${re}`);
        out += '[^\\t-\\r ]'; i++; continue;
      }
      out += c + (n ?? ''); i++; continue;
    }
    if (c === '[') inside = true; else if (c === ']') inside = false;
    out += c;
  }
  return out;
}

/** Split each fragment of `text` by `re` (global), keeping the gaps between matches as fragments. */
function regexSplit(text: string, re: RegExp, offsets: number[], unitOf: (cpIndex: number) => number,
  cpOf: (unit: number) => number): number[] {
  const out: number[] = [];
  let startCp = 0;
  for (const len of offsets) {
    const a = unitOf(startCp), b = unitOf(startCp + len);
    const sub = text.slice(a, b);
    re.lastIndex = 0;
    let prev = 0; // in units, relative to sub
    let m: RegExpExecArray | null;
    while ((m = re.exec(sub)) !== null) {
      const s = m.index, e = s + m[0].length;
      if (s > prev) out.push(cpOf(a + s) - cpOf(a + prev));
      if (e > s) out.push(cpOf(a + e) - cpOf(a + s));
      prev = e;
      if (e === s) re.lastIndex = e + (re.unicode && sub.charCodeAt(e) >= 0xd800 && sub.charCodeAt(e) <= 0xdbff ? 2 : 1);
    }
    if (prev < sub.length) out.push(cpOf(b) - cpOf(a + prev));
    startCp += len;
  }
  return out;
}

function compileSplitter(expr: string): Splitter {
  if (expr === GPT2) return splitGpt2;
  if (expr === LLAMA3 || expr === LLAMA3_ORIG) return splitLlama3;
  if (CATEGORY_RE.test(expr)) {
    for (const ch of expr) {
      if (ch.codePointAt(0)! >= 128) throw new UnsupportedError(`pre-tokenizer regex mixes \\p{..} and non-ASCII: ${expr}`);
    }
    const re = new RegExp(collapseRegex(expr), 'g');
    return (cps, offsets, ctx) => {
      ctx.collapsed ??= collapsedText(cps);
      return regexSplit(ctx.collapsed, re, offsets, (i) => i, (u) => u);
    };
  }
  const re = new RegExp(asciiWhitespaceRegex(expr), 'gu');
  return (cps, offsets, ctx) => {
    if (!ctx.wide) {
      let text = '';
      const unitToCp = new Int32Array(cps.length * 2 + 1);
      let u = 0;
      cps.forEach((cp, i) => {
        const c = cp > 0x7f && cptFlags(cp) & CPT_WHITESPACE ? 0x0b : cp;
        const s = String.fromCodePoint(c);
        text += s;
        for (let k = 0; k < s.length; k++) unitToCp[u++] = i;
      });
      unitToCp[u] = cps.length;
      ctx.wide = { text, unitToCp: unitToCp.subarray(0, u + 1) };
    }
    const { text, unitToCp } = ctx.wide;
    const cpToUnit = new Int32Array(cps.length + 1);
    for (let k = unitToCp.length - 1; k >= 0; k--) cpToUnit[unitToCp[k]!] = k;
    return regexSplit(text, re, offsets, (i) => cpToUnit[i]!, (k) => unitToCp[k]!);
  };
}

const isLetter = (f: number) => (f & CPT_LETTER) !== 0;
const isNumber = (f: number) => (f & CPT_NUMBER) !== 0;
const isSpace = (f: number) => (f & CPT_WHITESPACE) !== 0;
const lowerAscii = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

/** Length of a contraction ('s 't 'm 'd 're 've 'll) at `pos`, or 0. */
function contraction(cps: readonly number[], pos: number, end: number, caseless: boolean): number {
  if (cps[pos] !== 0x27 || pos + 1 >= end) return 0;
  const low = caseless ? lowerAscii : (c: number) => c;
  const n = low(cps[pos + 1]!);
  if (n === 0x73 || n === 0x74 || n === 0x6d || n === 0x64) return 2;
  if (pos + 2 < end) {
    const nn = low(cps[pos + 2]!);
    if ((n === 0x72 && nn === 0x65) || (n === 0x76 && nn === 0x65) || (n === 0x6c && nn === 0x6c)) return 3;
  }
  return 0;
}

/** Scanner equivalent of GPT-2's pattern, as llama.cpp runs it (unicode_regex_split_custom_gpt2). */
function splitGpt2(cps: readonly number[], offsets: number[]): number[] {
  const out: number[] = [];
  let start = 0;
  for (const len of offsets) {
    const ini = start, end = start + len;
    start = end;
    const flagsAt = (p: number) => (p >= ini && p < end ? cptFlags(cps[p]!) : 0);
    let prev = ini;
    const add = (e: number) => { if (e > prev) out.push(e - prev); prev = e; };
    let pos = ini;
    while (pos < end) {
      const cp = cps[pos]!;
      const c = contraction(cps, pos, end, false);
      if (c) { pos += c; add(pos); continue; }
      let f2 = cp === 0x20 ? flagsAt(pos + 1) : flagsAt(pos);
      if (isLetter(f2) || isNumber(f2) || (f2 !== 0 && !(f2 & (CPT_WHITESPACE | CPT_LETTER | CPT_NUMBER)))) {
        const klass = isLetter(f2) ? 1 : isNumber(f2) ? 2 : 3;
        const inClass = (f: number) => klass === 1 ? isLetter(f) : klass === 2 ? isNumber(f)
          : f !== 0 && !(f & (CPT_WHITESPACE | CPT_LETTER | CPT_NUMBER));
        if (cp === 0x20) pos++;
        while (inClass(f2)) f2 = flagsAt(++pos);
        add(pos);
        continue;
      }
      let ws = 0;
      while (isSpace(flagsAt(pos + ws))) ws++;
      if (ws > 1 && pos + ws < end) { pos += ws - 1; add(pos); continue; }
      if (ws > 0) { pos += ws; add(pos); continue; }
      add(++pos);
    }
  }
  return out;
}

/** Scanner equivalent of Llama 3's pattern, as llama.cpp runs it (unicode_regex_split_custom_llama3). */
function splitLlama3(cps: readonly number[], offsets: number[]): number[] {
  const out: number[] = [];
  let start = 0;
  for (const len of offsets) {
    const ini = start, end = start + len;
    start = end;
    const flagsAt = (p: number) => (p >= ini && p < end ? cptFlags(cps[p]!) : 0);
    let prev = ini;
    const add = (e: number) => { if (e > prev) out.push(e - prev); prev = e; };
    let pos = ini;
    while (pos < end) {
      const cp = cps[pos]!;
      const flags = flagsAt(pos);
      const c = contraction(cps, pos, end, true);
      if (c) { pos += c; add(pos); continue; }
      // [^\r\n\p{L}\p{N}]?\p{L}+
      if (!(cp === 13 || cp === 10 || isNumber(flags)) && (isLetter(flags) || isLetter(flagsAt(pos + 1)))) {
        pos++;
        while (isLetter(flagsAt(pos))) pos++;
        add(pos);
        continue;
      }
      // \p{N}{1,3}
      if (isNumber(flags)) {
        let i0 = pos;
        while (isNumber(flagsAt(pos))) {
          if (++pos - i0 >= 3) { add(pos); i0 = pos; }
        }
        add(pos);
        continue;
      }
      // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
      let f2 = cp === 0x20 ? flagsAt(pos + 1) : flags;
      if (!(f2 & (CPT_WHITESPACE | CPT_LETTER | CPT_NUMBER)) && flags !== 0) {
        if (cp === 0x20) pos++;
        while (!(f2 & (CPT_WHITESPACE | CPT_LETTER | CPT_NUMBER)) && f2 !== 0) f2 = flagsAt(++pos);
        while (pos < end && (cps[pos] === 13 || cps[pos] === 10)) pos++;
        add(pos);
        continue;
      }
      let ws = 0, lastNl = 0;
      while (isSpace(flagsAt(pos + ws))) {
        const c2 = cps[pos + ws];
        if (c2 === 13 || c2 === 10) lastNl = pos + ws + 1;
        ws++;
      }
      if (lastNl > 0) { pos = lastNl; add(pos); continue; }
      if (ws > 1 && pos + ws < end) { pos += ws - 1; add(pos); continue; }
      if (ws > 0) { pos += ws; add(pos); continue; }
      add(++pos);
    }
  }
  return out;
}

/** A compiled list of llama.cpp regex splits. */
export class LlamaCppSplitter {
  private readonly splitters: Splitter[];
  constructor(readonly regexes: readonly string[]) {
    this.splitters = regexes.map(compileSplitter);
  }

  /** Split text into pre-tokenized words (substrings of `text`, in order, covering it). */
  split(text: string): string[] {
    if (text.length === 0) return [];
    const cps = codePoints(text);
    let offsets = [cps.length];
    const ctx: SplitContext = {};
    for (const s of this.splitters) offsets = s(cps, offsets, ctx);
    const words: string[] = [];
    let p = 0;
    for (const n of offsets) {
      let w = '';
      for (let i = p; i < p + n; i++) w += String.fromCodePoint(cps[i]!);
      words.push(w);
      p += n;
    }
    return words;
  }
}
