import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, needsShared, sharedPath } from '../helpers.js';
import { writeGGUF } from '../../src/format/gguf-writer.js';

/** Run the CLI from source; returns exit code, stdout and stderr. */
function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(REPO, 'src/cli/main.ts'), 'template', ...args], { cwd: REPO, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface RefCase { template: string; conversation: string; variables: Record<string, unknown> & { messages: unknown[] }; expected?: string; expected_error?: string }

test('template --template renders a shared template exactly; a raising template exits 1 with its message', { skip: needsShared() }, () => {
  const ref = JSON.parse(readFileSync(sharedPath('reference', 'chat-templates', 'rendered.json'), 'utf8')) as { cases: RefCase[] };
  const dir = mkdtempSync(join(tmpdir(), 'tl-cli-template-'));
  const tpl = (name: string) => sharedPath('reference', 'chat-templates', 'templates', `${name}.jinja`);

  // Qwen2.5 with a system prompt and the generation prompt, messages as {"messages": [...]}.
  const ok = ref.cases.find((c) => c.template === 'Qwen-Qwen2.5-7B-Instruct' && c.conversation === 'unicode-and-markup' && c.variables['add_generation_prompt'] === true)!;
  writeFileSync(join(dir, 'chat.json'), JSON.stringify({ messages: ok.variables.messages }));
  const r = cli('--template', tpl(ok.template), '--messages', join(dir, 'chat.json'), '--add-generation-prompt');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, ok.expected);

  // Llama 3 with bos/eos given on the command line, messages as a bare array, no generation prompt.
  const l3 = ref.cases.find((c) => c.template === 'llama3-tokenizer_config' && c.conversation === 'system-multi-turn' && c.variables['add_generation_prompt'] === false)!;
  writeFileSync(join(dir, 'l3.json'), JSON.stringify(l3.variables.messages));
  const r2 = cli('--template', tpl(l3.template), '--messages', join(dir, 'l3.json'),
    '--bos-token', String(l3.variables['bos_token']), '--eos-token', String(l3.variables['eos_token']));
  assert.equal(r2.code, 0, r2.stderr);
  assert.equal(r2.stdout, l3.expected);

  // Gemma raises for a system message: exit 1, one line with the template's own message.
  const bad = ref.cases.find((c) => c.template === 'google-gemma-2-2b-it' && c.expected_error !== undefined)!;
  writeFileSync(join(dir, 'sys.json'), JSON.stringify(bad.variables.messages));
  const r3 = cli('--template', tpl(bad.template), '--messages', join(dir, 'sys.json'));
  assert.equal(r3.code, 1);
  assert.equal(r3.stdout, '');
  assert.equal(r3.stderr, 'tokenloop: error: System role not supported\n');
});

test('template -m reads the GGUF chat template and its BOS/EOS texts; clear errors for bad input', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tl-cli-template-'));
  const model = join(dir, 'chat.gguf');
  writeGGUF(model, {
    meta: [
      ['general.architecture', 'llama'],
      ['tokenizer.ggml.tokens', ['<unk>', '<|begin|>', '<|end|>', 'a']],
      ['tokenizer.ggml.bos_token_id', 1],
      ['tokenizer.ggml.eos_token_id', 2],
      ['tokenizer.chat_template', '{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}'],
    ],
    tensors: [],
  });
  writeFileSync(join(dir, 'm.json'), JSON.stringify([{ role: 'user', content: 'Hi ✓' }]));
  const r = cli('-m', model, '--messages', join(dir, 'm.json'), '--add-generation-prompt');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '<|begin|>[user]Hi ✓<|end|>[assistant]');
  const r2 = cli('-m', model, '--messages', join(dir, 'm.json'), '--bos-token', '');
  assert.equal(r2.stdout, '[user]Hi ✓<|end|>');

  const noTemplate = join(dir, 'plain.gguf');
  writeGGUF(noTemplate, { meta: [['general.architecture', 'llama']], tensors: [] });
  const r3 = cli('-m', noTemplate, '--messages', join(dir, 'm.json'));
  assert.equal(r3.code, 1);
  assert.match(r3.stderr, /^tokenloop: error: model has no chat template.*\n$/);

  const r4 = cli('-m', model, '--messages', join(dir, 'missing.json'));
  assert.equal(r4.code, 1);
  assert.match(r4.stderr, /^tokenloop: error: messages file not found: .*missing\.json\n$/);

  writeFileSync(join(dir, 'bad.json'), '[{"role": "user",');
  const r5 = cli('-m', model, '--messages', join(dir, 'bad.json'));
  assert.equal(r5.code, 1);
  assert.match(r5.stderr, /^tokenloop: error: .*bad\.json: invalid JSON/);
});
