/** Test helper: stories260K.gguf with a chat template added to its metadata, written to a temp dir. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeGGUF } from '../../src/format/gguf-writer.js';
import { parseGGUF } from '../../src/format/gguf.js';
import { readWholeFile } from '../../src/format/open.js';
import type { MetaValue } from '../../src/format/model-file.js';
import { TokenType } from '../../src/tokenizer/tokenizer.js';
import { sharedPath } from '../helpers.js';

/** A Llama-2-like template using the vocabulary's <s>/</s>: `<s>[INST] q [/INST] a </s><s>[INST] ...`. */
export const LLAMA2_LIKE_TEMPLATE =
  "{% if messages[0]['role'] == 'system' %}{% set sys = '<<SYS>>\\n' + messages[0]['content'] + '\\n<</SYS>>\\n\\n' %}{% set msgs = messages[1:] %}" +
  "{% else %}{% set sys = '' %}{% set msgs = messages %}{% endif %}" +
  "{% for m in msgs %}{% if m['role'] == 'user' %}{{ bos_token + '[INST] ' + (sys if loop.first else '') + m['content'] + ' [/INST]' }}" +
  "{% elif m['role'] == 'assistant' %}{{ ' ' + m['content'] | trim + ' ' + eos_token }}{% endif %}{% endfor %}";

/**
 * Copy the shared stories260K.gguf into a temp dir, with `tokenizer.chat_template` set to
 * `template` (omitted when null). `specials` turns vocabulary entries into control tokens with the
 * given texts (e.g. [[300, '<|im_end|>']]), for templates whose markup uses such tokens.
 * Returns the new file's path.
 */
export function writeChatModel(template: string | null = LLAMA2_LIKE_TEMPLATE, specials: ReadonlyArray<readonly [number, string]> = []): string {
  const g = parseGGUF(readWholeFile(sharedPath('models', 'stories260K', 'stories260K.gguf')));
  const meta: Array<[string, MetaValue]> = [...g.meta].filter(([k]) => k !== 'tokenizer.chat_template');
  if (template !== null) meta.push(['tokenizer.chat_template', template]);
  if (specials.length) {
    const tokens = [...(g.meta.get('tokenizer.ggml.tokens') as string[])];
    const types = [...(g.meta.get('tokenizer.ggml.token_type') as number[])];
    for (const [id, text] of specials) { tokens[id] = text; types[id] = TokenType.Control; }
    for (const e of meta) {
      if (e[0] === 'tokenizer.ggml.tokens') e[1] = tokens;
      if (e[0] === 'tokenizer.ggml.token_type') e[1] = types;
    }
  }
  const name = 'chat.gguf';
  const path = join(mkdtempSync(join(tmpdir(), 'tl-chat-')), name);
  writeGGUF(path, {
    meta,
    metaTypes: g.metaTypes,
    tensors: [...g.tensors.values()].map((t) => ({ name: t.name, dims: t.dims, type: t.type, data: t.data })),
    alignment: g.alignment,
  });
  return path;
}
