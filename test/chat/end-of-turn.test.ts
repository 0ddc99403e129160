import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Conversation } from '../../src/chat/conversation.js';
import { endOfTurnIds, templateEndOfTurnId } from '../../src/chat/end-of-turn.js';
import { loadLanguageModel } from '../../src/generate/language-model.js';
import { ChatTemplate } from '../../src/tokenizer/chat-template.js';
import { needsShared, sharedPath } from '../helpers.js';
import { LLAMA2_LIKE_TEMPLATE, writeChatModel } from './chat-model.js';

const skip = needsShared();
const sharedTemplate = (name: string) => new ChatTemplate(readFileSync(sharedPath('reference', 'chat-templates', 'templates', `${name}.jinja`), 'utf8'));

// Vocabulary entries repurposed as the control tokens of real templates (ids above the byte tokens).
const SPECIALS = [
  [300, '<|im_start|>'], [301, '<|im_end|>'],
  [302, '<start_of_turn>'], [303, '<end_of_turn>'],
  [304, '<|start_header_id|>'], [305, '<|end_header_id|>'], [306, '<|eot_id|>'],
  [307, '<|turn|>'], [308, '<|turn_end|>'],
] as const;

test('the template\'s end-of-turn marker is found for real templates (Qwen2.5, Gemma 2, Llama 3.1, Llama-2-like)', { skip }, () => {
  const lm = loadLanguageModel({ model: writeChatModel(null, SPECIALS) });
  const vars = { bos_token: '<s>', eos_token: '</s>' };
  assert.equal(templateEndOfTurnId(lm.tokenizer, sharedTemplate('Qwen-Qwen2.5-7B-Instruct'), vars), 301);
  assert.equal(templateEndOfTurnId(lm.tokenizer, sharedTemplate('google-gemma-2-2b-it'), vars), 303);
  assert.equal(templateEndOfTurnId(lm.tokenizer, sharedTemplate('meta-llama-Llama-3.1-8B-Instruct'), vars), 306);
  assert.equal(templateEndOfTurnId(lm.tokenizer, new ChatTemplate(LLAMA2_LIKE_TEMPLATE), vars), lm.tokenizer.eos);
  // Plain-text turn ends are not tokens: no marker.
  assert.equal(templateEndOfTurnId(lm.tokenizer, new ChatTemplate('{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}'), vars), null);
  // A template that raises for the probe conversation gives no marker (no crash).
  assert.equal(templateEndOfTurnId(lm.tokenizer, new ChatTemplate('{{ raise_exception("nope") }}'), vars), null);
});

test('a template end marker unknown to the tokenizer loaders still ends the answer', { skip }, async () => {
  const template = '{% for m in messages %}<|turn|>{{ m.role }}\n{{ m.content }}<|turn_end|>\n{% endfor %}{% if add_generation_prompt %}<|turn|>assistant\n{% endif %}';
  const lm = loadLanguageModel({ model: writeChatModel(template, SPECIALS) });
  assert.ok(!lm.endOfGeneration.has(308), 'the loaders do not know <|turn_end|>');
  assert.deepEqual([...endOfTurnIds(lm, new ChatTemplate(template))].sort(), [...lm.endOfGeneration, 308].sort());
  const c = new Conversation(lm);
  assert.ok(c.endOfTurn.has(308));
  const done = await c.reply('Hello', { temperature: 0, maxTokens: 30, logitBias: { 308: 100 } });
  assert.deepEqual(done.stop, { kind: 'eog', token: 308 });
  assert.deepEqual(done.tokens, [308]);
  // The next prompt closes every message, the empty answer included, with the marker as markup.
  const next = c.promptTokens([...c.messages, { role: 'user', content: 'again' }]);
  assert.equal(next.filter((t) => t === 308).length, 3);
});
