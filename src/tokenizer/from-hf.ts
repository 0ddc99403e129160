/**
 * Hugging Face `tokenizer.json` (+ `tokenizer_config.json`) loader for BPE models: byte-level BPE
 * (GPT-2 / Llama 3 / Qwen) and SentencePiece-style BPE with byte fallback (Gemma), following the
 * tokenizers pipeline: added tokens → normalizer → pre-tokenizer → BPE model → post-processor.
 * Components this file does not implement are refused with an UnsupportedError naming them.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { InvalidOptionError, ModelFormatError, UnsupportedError } from '../errors.js';
import { BpeModel, type BpeMerge } from './bpe.js';
import { fromByteLevel } from './byte-level.js';
import { AddedTokenMatcher, type AddedToken } from './hf-added-tokens.js';
import { createNormalizer, type Normalizer } from './hf-normalizers.js';
import { createPreTokenizer, type PreTokenizer } from './hf-pre-tokenizers.js';
import type { EncodeOptions, Tokenizer } from './tokenizer.js';
import { TokenType } from './tokenizer.js';
import { END_OF_TURN_TEXTS, parseBytePiece } from './vocab.js';
import { decodeIds } from './decode-ids.js';

type Json = Record<string, unknown>;

const utf8 = new TextEncoder();

/** Special ids the post-processor puts around a single sequence. */
interface Template { prefix: number[]; suffix: number[] }

function templateOf(spec: unknown, source: string): Template {
  if (spec === null || spec === undefined) return { prefix: [], suffix: [] };
  const o = spec as Json;
  switch (o['type']) {
    case 'ByteLevel': return { prefix: [], suffix: [] }; // only adjusts offsets
    case 'TemplateProcessing': {
      const specials = (o['special_tokens'] ?? {}) as Record<string, { ids?: number[] }>;
      const t: Template = { prefix: [], suffix: [] };
      let seen = false;
      for (const item of (o['single'] as Json[]) ?? []) {
        if (item['Sequence']) { seen = true; continue; }
        const sp = item['SpecialToken'] as { id?: string } | undefined;
        const ids = sp?.id !== undefined ? specials[sp.id]?.ids : undefined;
        if (!ids) throw new ModelFormatError(`${source}: TemplateProcessing names an unknown special token ${JSON.stringify(sp?.id)}`);
        (seen ? t.suffix : t.prefix).push(...ids);
      }
      return t;
    }
    case 'RobertaProcessing':
    case 'BertProcessing': {
      const cls = o['cls'] as [string, number], sep = o['sep'] as [string, number];
      return { prefix: [cls[1]], suffix: [sep[1]] };
    }
    case 'Sequence': {
      const t: Template = { prefix: [], suffix: [] };
      for (const p of (o['processors'] as unknown[]) ?? []) {
        const s = templateOf(p, source);
        t.prefix.push(...s.prefix); t.suffix.push(...s.suffix);
      }
      return t;
    }
    default:
      throw new UnsupportedError(`${source}: tokenizer.json post_processor "${String(o['type'])}" is not supported`);
  }
}

/** How token strings turn back into bytes, from tokenizer.json `decoder`. */
interface DecoderInfo { byteLevel: boolean; space: string | null; stripLeading: number }

function decoderOf(spec: unknown, source: string): DecoderInfo {
  const info: DecoderInfo = { byteLevel: false, space: null, stripLeading: 0 };
  const visit = (d: unknown) => {
    if (d === null || d === undefined) return;
    const o = d as Json;
    switch (o['type']) {
      case 'ByteLevel': info.byteLevel = true; break;
      case 'Metaspace': {
        info.space = String(o['replacement'] ?? '\u2581');
        const scheme = o['prepend_scheme'] ?? (o['add_prefix_space'] === false ? 'never' : 'always');
        if (scheme !== 'never') info.stripLeading = 1;
        break;
      }
      case 'Replace': {
        const pat = (o['pattern'] as Json | undefined)?.['String'];
        if (typeof pat !== 'string' || o['content'] !== ' ') throw new UnsupportedError(`${source}: tokenizer.json Replace decoder other than "x" → " " is not supported`);
        info.space = pat;
        break;
      }
      case 'Strip': {
        if (o['content'] !== ' ' || Number(o['stop'] ?? 0) !== 0) throw new UnsupportedError(`${source}: tokenizer.json Strip decoder other than leading spaces is not supported`);
        info.stripLeading = Number(o['start'] ?? 0);
        break;
      }
      case 'ByteFallback': case 'Fuse': break; // handled by per-token bytes
      case 'Sequence': for (const x of (o['decoders'] as unknown[]) ?? []) visit(x); break;
      default: throw new UnsupportedError(`${source}: tokenizer.json decoder "${String(o['type'])}" is not supported`);
    }
  };
  visit(spec);
  return info;
}

/** The content of a tokenizer_config.json token field (a string or an AddedToken object). */
function configToken(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as Json)['content'] === 'string') return (v as Json)['content'] as string;
  return undefined;
}

/** A tokenizer built from a Hugging Face tokenizer.json. */
export class HfTokenizer implements Tokenizer {
  readonly kind = 'hf' as const;
  readonly vocabSize: number;
  readonly bos: number | null;
  readonly eos: number | null;
  readonly unk: number | null;
  readonly endOfGeneration: ReadonlySet<number>;
  readonly addBos: boolean;
  readonly addEos: boolean;
  private readonly pieces: string[];
  private readonly types: Uint8Array;
  private readonly ids = new Map<string, number>();
  private readonly model: BpeModel;
  private readonly normalizer: Normalizer | null;
  private readonly preTokenizer: PreTokenizer | null;
  private readonly allAdded: AddedTokenMatcher;
  private readonly textAdded: AddedTokenMatcher;
  private readonly normalizedAll: AddedTokenMatcher;
  private readonly normalizedText: AddedTokenMatcher;
  private readonly template: Template;
  private readonly decoder: DecoderInfo;
  private readonly byteFallback: boolean;
  private readonly fuseUnk: boolean;
  private readonly byteIds: Int32Array;
  private readonly bytesCache: (Uint8Array | undefined)[];

  constructor(json: Json, config: Json | null, source: string) {
    const m = json['model'] as Json | undefined;
    if (!m || typeof m !== 'object') throw new ModelFormatError(`${source}: tokenizer.json has no model`);
    if (m['type'] !== 'BPE') throw new UnsupportedError(`${source}: tokenizer.json model "${String(m['type'])}" is not supported (only BPE)`);
    if (m['dropout'] !== null && m['dropout'] !== undefined && m['dropout'] !== 0) throw new UnsupportedError(`${source}: BPE dropout is not supported`);
    for (const k of ['continuing_subword_prefix', 'end_of_word_suffix']) {
      if (m[k] !== null && m[k] !== undefined && m[k] !== '') throw new UnsupportedError(`${source}: BPE ${k} is not supported`);
    }
    const vocab = m['vocab'] as Record<string, number> | undefined;
    if (!vocab || typeof vocab !== 'object') throw new ModelFormatError(`${source}: tokenizer.json model has no vocab`);
    const added: AddedToken[] = ((json['added_tokens'] as Json[]) ?? []).map((a) => ({
      id: Number(a['id']), content: String(a['content']), special: a['special'] === true, lstrip: a['lstrip'] === true,
      rstrip: a['rstrip'] === true, normalized: a['normalized'] === true, singleWord: a['single_word'] === true,
    }));
    let maxId = -1;
    for (const id of Object.values(vocab)) if (id > maxId) maxId = id;
    for (const a of added) if (a.id > maxId) maxId = a.id;
    this.vocabSize = maxId + 1;
    this.pieces = new Array<string>(this.vocabSize).fill('');
    this.types = new Uint8Array(this.vocabSize).fill(TokenType.Undefined);
    for (const [piece, id] of Object.entries(vocab)) {
      if (!Number.isInteger(id) || id < 0) throw new ModelFormatError(`${source}: vocab entry ${JSON.stringify(piece)} has bad id ${id}`);
      this.pieces[id] = piece; this.types[id] = TokenType.Normal; this.ids.set(piece, id);
    }
    for (const a of added) {
      this.pieces[a.id] = a.content;
      this.types[a.id] = a.special ? TokenType.Control : TokenType.UserDefined;
      this.ids.set(a.content, a.id);
    }
    const unkText = typeof m['unk_token'] === 'string' ? m['unk_token'] : null;
    this.unk = unkText !== null ? this.ids.get(unkText) ?? null : null;
    if (this.unk !== null && this.types[this.unk] === TokenType.Normal) this.types[this.unk] = TokenType.Unknown;
    this.byteFallback = m['byte_fallback'] === true;
    this.fuseUnk = m['fuse_unk'] === true;
    this.byteIds = new Int32Array(256).fill(-1);
    for (let b = 0; b < 256; b++) {
      const id = vocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`];
      if (id !== undefined) { this.byteIds[b] = id; if (this.byteFallback && this.types[id] === TokenType.Normal) this.types[id] = TokenType.Byte; }
    }
    const merges: BpeMerge[] = ((m['merges'] as unknown[]) ?? []).map((x) => {
      if (Array.isArray(x) && x.length === 2) return { left: String(x[0]), right: String(x[1]) };
      if (typeof x === 'string') {
        const at = x.indexOf(' ');
        if (at > 0) return { left: x.slice(0, at), right: x.slice(at + 1) };
      }
      throw new ModelFormatError(`${source}: bad BPE merge ${JSON.stringify(x)}`);
    });
    // Only the model's own vocabulary takes part in merges.
    const modelVocab = new Map(Object.entries(vocab));
    this.model = new BpeModel({ vocab: modelVocab, merges, ignoreMerges: m['ignore_merges'] === true });
    this.normalizer = createNormalizer(json['normalizer']);
    this.preTokenizer = createPreTokenizer(json['pre_tokenizer']);
    this.allAdded = new AddedTokenMatcher(added.filter((a) => !a.normalized || !this.normalizer));
    this.textAdded = new AddedTokenMatcher(added.filter((a) => !a.special && (!a.normalized || !this.normalizer)));
    this.normalizedAll = new AddedTokenMatcher(this.normalizer ? added.filter((a) => a.normalized) : []);
    this.normalizedText = new AddedTokenMatcher(this.normalizer ? added.filter((a) => a.normalized && !a.special) : []);
    this.decoder = decoderOf(json['decoder'], source);
    const tpl = templateOf(json['post_processor'], source);
    for (const id of [...tpl.prefix, ...tpl.suffix]) {
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) throw new ModelFormatError(`${source}: post_processor token id ${id} is outside the vocabulary`);
    }
    const lookup = (key: string): number | null => {
      const text = configToken(config?.[key]);
      if (text === undefined) return null;
      const id = this.ids.get(text);
      if (id === undefined) throw new ModelFormatError(`${source}: tokenizer_config ${key} ${JSON.stringify(text)} is not in the vocabulary`);
      return id;
    };
    this.bos = lookup('bos_token') ?? tpl.prefix[0] ?? null;
    this.eos = lookup('eos_token');
    // tokenizer_config add_bos_token / add_eos_token, when given, decide (transformers' Llama/Gemma tokenizers rebuild the template from them).
    if (config?.['add_bos_token'] === true && tpl.prefix.length === 0 && this.bos !== null) tpl.prefix.push(this.bos);
    if (config?.['add_bos_token'] === false) tpl.prefix.length = 0;
    if (config?.['add_eos_token'] === true && tpl.suffix.length === 0 && this.eos !== null) tpl.suffix.push(this.eos);
    if (config?.['add_eos_token'] === false) tpl.suffix.length = 0;
    this.template = tpl;
    this.addBos = tpl.prefix.length > 0;
    this.addEos = tpl.suffix.length > 0;
    const end = new Set<number>();
    if (this.eos !== null) end.add(this.eos);
    for (const a of added) if (END_OF_TURN_TEXTS.has(a.content)) end.add(a.id);
    this.endOfGeneration = end;
    this.bytesCache = new Array(this.vocabSize);
  }

  encode(text: string, opts: EncodeOptions = {}): number[] {
    const out: number[] = [];
    if (opts.addBos ?? this.addBos) {
      if (this.template.prefix.length > 0) out.push(...this.template.prefix);
      else if (this.bos !== null) out.push(this.bos);
      else throw new InvalidOptionError('addBos requested but the tokenizer has no BOS token');
    }
    const raw = (opts.parseSpecial ? this.allAdded : this.textAdded).partition(text);
    const normMatcher = opts.parseSpecial ? this.normalizedAll : this.normalizedText;
    raw.forEach((p, i) => {
      if (p.id !== undefined) { out.push(p.id); return; }
      const norm = this.normalizer ? this.normalizer(p.text) : p.text;
      for (const q of normMatcher.partition(norm)) {
        if (q.id !== undefined) { out.push(q.id); continue; }
        const words = this.preTokenizer ? this.preTokenizer([q.text], i === 0) : [q.text];
        for (const w of words) if (w.length > 0) this.model.encodeWord(w, out, this.unknown);
      }
    });
    if (opts.addEos ?? this.addEos) {
      if (this.template.suffix.length > 0) out.push(...this.template.suffix);
      else if (this.eos !== null) out.push(this.eos);
      else throw new InvalidOptionError('addEos requested but the tokenizer has no EOS token');
    }
    return out;
  }

  /** A character missing from the vocabulary: its UTF-8 byte tokens (byte_fallback), else unk. */
  private readonly unknown = (sym: string, out: number[]): void => {
    if (this.byteFallback) {
      const bytes = utf8.encode(sym);
      const ids = Array.from(bytes, (b) => this.byteIds[b]!);
      if (ids.every((id) => id >= 0)) { out.push(...ids); return; }
    }
    if (this.unk === null) return;
    if (this.fuseUnk && out.length > 0 && out[out.length - 1] === this.unk) return;
    out.push(this.unk);
  };

  piece(id: number): string { this.check(id); return this.pieces[id]!; }
  tokenId(piece: string): number | undefined { return this.ids.get(piece); }
  tokenType(id: number): TokenType { this.check(id); return this.types[id]! as TokenType; }

  tokenBytes(id: number, afterBos = false): Uint8Array {
    this.check(id);
    let b = this.bytesCache[id];
    if (!b) {
      const p = this.pieces[id]!;
      const t = this.types[id];
      if (t === TokenType.Control) b = utf8.encode(p);
      else if (t === TokenType.Byte) b = Uint8Array.of(parseBytePiece(p)!);
      else if (this.decoder.byteLevel) b = fromByteLevel(p) ?? utf8.encode(p);
      else b = utf8.encode(this.decoder.space ? p.replaceAll(this.decoder.space, ' ') : p);
      this.bytesCache[id] = b;
    }
    if (afterBos && this.decoder.stripLeading > 0) {
      let k = 0;
      while (k < this.decoder.stripLeading && b[k] === 0x20) k++;
      return b.subarray(k);
    }
    return b;
  }

  decode(ids: readonly number[], opts: { skipSpecial?: boolean } = {}): string {
    return decodeIds(this, ids, opts.skipSpecial ?? false);
  }

  private check(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) throw new InvalidOptionError(`token id ${id} is outside the vocabulary (${this.vocabSize} tokens)`);
  }
}

function readJson(path: string): Json {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Json;
  } catch (e) {
    throw new ModelFormatError(`${path}: not valid JSON (${(e as Error).message})`);
  }
}

/** Build a tokenizer from parsed tokenizer.json and (optional) tokenizer_config.json objects. */
export function createTokenizerFromHF(json: unknown, config: unknown = null, source = 'tokenizer.json'): HfTokenizer {
  if (!json || typeof json !== 'object') throw new ModelFormatError(`${source}: tokenizer.json is not an object`);
  return new HfTokenizer(json as Json, config && typeof config === 'object' ? (config as Json) : null, source);
}

/**
 * Load a Hugging Face tokenizer from a `tokenizer.json` path or from a directory holding it;
 * `tokenizer_config.json` next to it is read when present.
 */
export function loadHfTokenizer(path: string): HfTokenizer {
  if (!existsSync(path)) throw new ModelFormatError(`tokenizer not found: ${path}`);
  const file = statSync(path).isDirectory() ? join(path, 'tokenizer.json') : path;
  if (!existsSync(file)) throw new ModelFormatError(`${path}: directory has no tokenizer.json`);
  const cfgPath = join(dirname(file), 'tokenizer_config.json');
  const config = existsSync(cfgPath) ? readJson(cfgPath) : null;
  return createTokenizerFromHF(readJson(file), config, file);
}
