/**
 * Chat templates: render a model's Jinja chat template exactly as Hugging Face transformers does
 * (`apply_chat_template`: Jinja2 ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks,
 * loopcontrols; globals raise_exception / strftime_now; transformers' tojson), using
 * @huggingface/jinja with the fixes in chat-template-interpreter.ts. Also: where templates come
 * from (GGUF metadata, HF tokenizer_config.json, .jinja files), and turning a conversation into
 * prompt token ids without letting message content inject control tokens.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { MetaValue } from '../format/model-file.js';
import { InvalidOptionError } from '../errors.js';
import { TemplateError, chatTemplateGlobals } from './chat-template-globals.js';
import { Environment, HfInterpreter, parseTemplate } from './chat-template-interpreter.js';
import { TokenType, type Tokenizer } from './tokenizer.js';

export { TemplateError } from './chat-template-globals.js';

/** One chat message. `content` is a string, or a list of parts ({type: 'text', text}, ...). */
export interface ChatMessage {
  role: string;
  content?: string | Array<Record<string, unknown>> | null;
  [key: string]: unknown;
}

/** The variables a chat template sees. Unset (undefined) keys stay undefined in the template. */
export interface ChatTemplateVariables {
  messages: ChatMessage[];
  add_generation_prompt?: boolean;
  bos_token?: string;
  eos_token?: string;
  tools?: unknown[];
  documents?: unknown[];
  [key: string]: unknown;
}

export interface RenderOptions {
  /** The clock `strftime_now` reads (default: the current time). */
  now?: () => Date;
}

/** A parsed chat template; parse once, render many times. */
export class ChatTemplate {
  readonly source: string;
  private readonly program: object;

  constructor(source: string) {
    this.source = source;
    // Jinja2 normalizes every newline sequence to "\n" (newline_sequence) before lexing; the
    // library strips the single trailing newline itself (keep_trailing_newline=False).
    const normalized = source.replace(/\r\n|\r/g, '\n');
    try {
      this.program = parseTemplate(normalized, { lstrip_blocks: true, trim_blocks: true });
    } catch (e) {
      throw new TemplateError(`chat template syntax error: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Render with transformers' environment. A template that raises gives a TemplateError with its own message. */
  render(vars: ChatTemplateVariables, opts: RenderOptions = {}): string {
    if (!Array.isArray(vars.messages)) throw new InvalidOptionError('chat template: messages must be an array');
    const env = new Environment();
    // Caller variables override globals, as keyword arguments to Template.render do in Jinja2.
    const all: Record<string, unknown> = { ...chatTemplateGlobals(opts.now ?? (() => new Date())) };
    for (const [k, v] of Object.entries(vars)) if (v !== undefined) all[k] = v;
    if (all['add_generation_prompt'] === undefined) all['add_generation_prompt'] = false;
    for (const [k, v] of Object.entries(all)) env.set(k, v);
    try {
      const out = new HfInterpreter(env).run(this.program);
      return String(out.value ?? '');
    } catch (e) {
      if (e instanceof TemplateError) throw e;
      throw new TemplateError(e instanceof Error ? e.message : String(e));
    }
  }
}

/** Render a conversation with a template (source text or a parsed ChatTemplate). */
export function renderChat(template: string | ChatTemplate, vars: ChatTemplateVariables, opts: RenderOptions = {}): string {
  return (typeof template === 'string' ? new ChatTemplate(template) : template).render(vars, opts);
}

/**
 * The chat template stored in GGUF metadata: `tokenizer.chat_template`, or the named
 * `tokenizer.chat_template.<name>` when `name` is given (llama.cpp's convention).
 */
export function chatTemplateFromMetadata(meta: ReadonlyMap<string, MetaValue>, name?: string): string {
  const key = name && name !== 'default' ? `tokenizer.chat_template.${name}` : 'tokenizer.chat_template';
  const v = meta.get(key);
  if (v === undefined) {
    const named = [...meta.keys()].filter((k) => k.startsWith('tokenizer.chat_template.')).map((k) => k.slice(24));
    throw new TemplateError(`model has no chat template (${key} is not in its metadata${named.length ? `; named templates: ${named.join(', ')}` : ''})`);
  }
  if (typeof v !== 'string') throw new TemplateError(`${key} is not a string`);
  return v;
}

/**
 * The chat template of a HF tokenizer_config.json object: `chat_template` is a string, or a list
 * of {name, template} (pick `name`, default "default").
 */
export function chatTemplateFromTokenizerConfig(config: unknown, name?: string): string {
  const ct = (config as { chat_template?: unknown } | null)?.chat_template;
  if (ct === undefined || ct === null) throw new TemplateError('tokenizer_config.json has no chat_template');
  if (typeof ct === 'string') {
    if (name && name !== 'default') throw new TemplateError(`tokenizer_config.json has no chat template named "${name}"`);
    return ct;
  }
  if (!Array.isArray(ct)) throw new TemplateError('tokenizer_config.json: chat_template must be a string or a list of {name, template}');
  const want = name ?? 'default';
  const hit = ct.find((t) => (t as { name?: unknown })?.name === want) as { template?: unknown } | undefined;
  if (!hit || typeof hit.template !== 'string') {
    const names = ct.map((t) => String((t as { name?: unknown })?.name)).join(', ');
    throw new TemplateError(`tokenizer_config.json has no chat template named "${want}" (has: ${names})`);
  }
  return hit.template;
}

/**
 * Read a chat template from a file: a `.jinja` file as is, or a tokenizer_config.json (a
 * `chat_template.jinja` next to it takes precedence, as in transformers, which saves templates there).
 */
export function loadChatTemplateFile(path: string, name?: string): string {
  const read = (p: string): string => {
    try {
      return readFileSync(p, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new InvalidOptionError(code === 'ENOENT' ? `template file not found: ${p}` : `cannot read ${p}: ${(e as Error).message}`);
    }
  };
  const text = read(path);
  if (!path.toLowerCase().endsWith('.json')) return text;
  const sibling = join(dirname(path), 'chat_template.jinja');
  if ((!name || name === 'default') && existsSync(sibling)) return read(sibling);
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (e) {
    throw new InvalidOptionError(`${path}: invalid JSON (${(e as Error).message})`);
  }
  return chatTemplateFromTokenizerConfig(config, name);
}

/** The text of the GGUF vocabulary's BOS or EOS token (`tokenizer.ggml.tokens[tokenizer.ggml.<which>_token_id]`). */
export function ggufSpecialTokenText(meta: ReadonlyMap<string, MetaValue>, which: 'bos' | 'eos'): string | undefined {
  const id = meta.get(`tokenizer.ggml.${which}_token_id`);
  const tokens = meta.get('tokenizer.ggml.tokens');
  if (typeof id !== 'number' || !Array.isArray(tokens)) return undefined;
  const t = tokens[id];
  return typeof t === 'string' ? t : undefined;
}

/**
 * Double-BOS avoidance: whether encoding the rendered prompt must prepend BOS. Many templates
 * write `{{ bos_token }}` themselves; adding the tokenizer's BOS as well would give two. Adds BOS
 * only when the vocabulary asks for it and the text does not already start with BOS's text.
 */
export function shouldAddBos(rendered: string, tokenizer: Tokenizer): boolean {
  if (!tokenizer.addBos || tokenizer.bos === null) return false;
  const bosText = tokenizer.piece(tokenizer.bos);
  return !(bosText.length > 0 && rendered.startsWith(bosText));
}

/** A span of rendered text: template markup, or (a transform of) one message's content. */
export interface ChatSegment {
  text: string;
  markup: boolean;
}

/** Sentinel delimiters: private-use characters no real template touches. */
const SENTINEL_CANDIDATES = ['\u{F0000}', '\u{F0100}', '\u{F0200}', '\u{10F000}'];

/**
 * Render, then split the rendered text into markup and message content. Every message content
 * string (and every `text` of a content part) is replaced by a unique sentinel and the template
 * rendered again; the sentinel rendering gives the exact markup pieces. The real rendering must
 * then be those markup pieces with each sentinel replaced by its content (or the content trimmed,
 * for templates that `| trim` it). Returns null when the template transforms content otherwise.
 */
export function renderChatSegments(
  template: string | ChatTemplate, vars: ChatTemplateVariables, opts: RenderOptions = {},
): { text: string; segments: ChatSegment[] | null } {
  const tpl = typeof template === 'string' ? new ChatTemplate(template) : template;
  const text = tpl.render(vars, opts);
  const everything = JSON.stringify(vars) ?? '';
  const mark = SENTINEL_CANDIDATES.find((c) => !everything.includes(c) && !tpl.source.includes(c));
  if (mark === undefined) return { text, segments: null };
  const contents: string[] = [];
  const sentinel = (s: string): string => `${mark}${contents.push(s) - 1}${mark}`;
  const messages = vars.messages.map((m) => {
    if (typeof m.content === 'string') return { ...m, content: sentinel(m.content) };
    if (Array.isArray(m.content)) {
      return { ...m, content: m.content.map((p) => (typeof p['text'] === 'string' ? { ...p, text: sentinel(p['text']) } : p)) };
    }
    return m;
  });
  let withSentinels: string;
  try {
    withSentinels = tpl.render({ ...vars, messages }, opts);
  } catch {
    return { text, segments: null };
  }
  const parts = withSentinels.split(mark); // markup, index, markup, index, ..., markup
  const segments: ChatSegment[] = [];
  let cur = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (i % 2 === 0) {
      if (!text.startsWith(part, cur)) return { text, segments: null };
      if (part) segments.push({ text: part, markup: true });
      cur += part.length;
      continue;
    }
    const content = contents[Number(part)];
    if (content === undefined) return { text, segments: null };
    const next = parts[i + 1] ?? '';
    const pick = [content, content.trim()].find((c) => text.startsWith(c, cur) && text.startsWith(next, cur + c.length));
    if (pick === undefined) return { text, segments: null };
    if (pick) segments.push({ text: pick, markup: false });
    cur += pick.length;
  }
  return cur === text.length ? { text, segments } : { text, segments: null };
}

/** Where the control/user-defined tokens of a markup string sit, as [start, end, id]. */
function specialSpans(markup: string, tokenizer: Tokenizer): Array<[number, number, number]> {
  const spans: Array<[number, number, number]> = [];
  let cur = 0;
  for (const id of tokenizer.encode(markup, { parseSpecial: true, addBos: false, addEos: false })) {
    const t = tokenizer.tokenType(id);
    if (t !== TokenType.Control && t !== TokenType.UserDefined) continue;
    const piece = tokenizer.piece(id);
    const at = piece ? markup.indexOf(piece, cur) : -1;
    if (at < 0) continue;
    spans.push([at, at + piece.length, id]);
    cur = at + piece.length;
  }
  return spans;
}

/**
 * Prompt token ids for a conversation. Special-token text is parsed only in the template's
 * markup, never in message content, so a user typing `<|im_end|>` cannot end the turn: the text
 * is cut at the markup's special tokens and every piece between them is encoded as plain text
 * (parseSpecial false). When the content cannot be located exactly (renderChatSegments returned
 * null), special tokens whose text occurs in any message string are not parsed anywhere (safe,
 * though the prompt may then lack that marker). BOS is prepended only per shouldAddBos.
 */
export function chatPromptTokens(
  tokenizer: Tokenizer, template: string | ChatTemplate, vars: ChatTemplateVariables, opts: RenderOptions = {},
): number[] {
  const { text, segments } = renderChatSegments(template, vars, opts);
  const spans: Array<[number, number, number]> = [];
  if (segments) {
    let off = 0;
    for (const s of segments) {
      if (s.markup) for (const [a, b, id] of specialSpans(s.text, tokenizer)) spans.push([off + a, off + b, id]);
      off += s.text.length;
    }
  } else {
    const userText = JSON.stringify(vars.messages);
    const allowed = new Map<string, number>();
    for (const [a, b, id] of specialSpans(text, tokenizer)) {
      const piece = text.slice(a, b);
      if (!userText.includes(JSON.stringify(piece).slice(1, -1))) allowed.set(piece, id);
    }
    let cur = 0;
    for (const [a, b, id] of specialSpans(text, tokenizer)) {
      if (a >= cur && allowed.get(text.slice(a, b)) === id) { spans.push([a, b, id]); cur = b; }
    }
  }
  const ids: number[] = shouldAddBos(text, tokenizer) ? [tokenizer.bos!] : [];
  let cur = 0;
  const plain = (s: string) => { if (s) ids.push(...tokenizer.encode(s, { parseSpecial: false, addBos: false, addEos: false })); };
  for (const [a, b, id] of spans) {
    plain(text.slice(cur, a));
    ids.push(id);
    cur = b;
  }
  plain(text.slice(cur));
  return ids;
}
