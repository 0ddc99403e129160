/**
 * Which token ids end an assistant turn. The tokenizer loaders already collect eos, the GGUF
 * `tokenizer.ggml.eot_token_id` / `eom_token_id` and well-known end-of-turn texts (vocab.ts);
 * this adds the marker the chat template itself writes after an assistant message, so a model
 * whose template closes turns with a special token the loaders do not know still stops there.
 */
import type { LanguageModel } from '../generate/language-model.js';
import { renderChatSegments, type ChatTemplate, type ChatTemplateVariables } from '../tokenizer/chat-template.js';
import { TokenType, type Tokenizer } from '../tokenizer/tokenizer.js';

/** Probe texts unlikely to be rewritten by a template (no whitespace to trim, no markup). */
const PROBE_USER = 'Hello';
const PROBE_ASSISTANT = 'Hi';

/**
 * The special token the template writes right after an assistant message's content (e.g.
 * `<|im_end|>`, `<end_of_turn>`, `<|eot_id|>`, `</s>`), or null when the markup there starts with
 * plain text or the template cannot be probed (it raises for the probe conversation, or the
 * message content cannot be located in its output).
 */
export function templateEndOfTurnId(tokenizer: Tokenizer, template: ChatTemplate, vars: Omit<ChatTemplateVariables, 'messages'> = {}): number | null {
  let segments;
  try {
    segments = renderChatSegments(template, {
      ...vars,
      messages: [{ role: 'user', content: PROBE_USER }, { role: 'assistant', content: PROBE_ASSISTANT }],
      add_generation_prompt: false,
    }).segments;
  } catch {
    return null;
  }
  if (!segments) return null;
  const at = segments.findIndex((s, i) => !s.markup && s.text === PROBE_ASSISTANT && segments.slice(0, i).some((p) => !p.markup && p.text === PROBE_USER));
  const after = at >= 0 ? segments[at + 1] : undefined;
  if (!after?.markup) return null;
  // Only a special token that the markup *starts* with (after optional whitespace) marks the end:
  // a later one may belong to the next turn's header.
  const trimmed = after.text.replace(/^[ \t]+/, '');
  const ids = tokenizer.encode(trimmed, { parseSpecial: true, addBos: false, addEos: false });
  const first = ids[0];
  if (first === undefined) return null;
  const type = tokenizer.tokenType(first);
  if (type !== TokenType.Control && type !== TokenType.UserDefined) return null;
  return trimmed.startsWith(tokenizer.piece(first)) ? first : null;
}

/** The model's end-of-generation ids plus the template's end-of-turn token, when it has one. */
export function endOfTurnIds(lm: Pick<LanguageModel, 'tokenizer' | 'endOfGeneration'>, template: ChatTemplate, vars: Omit<ChatTemplateVariables, 'messages'> = {}): Set<number> {
  const ids = new Set(lm.endOfGeneration);
  const marker = templateEndOfTurnId(lm.tokenizer, template, vars);
  if (marker !== null) ids.add(marker);
  return ids;
}
