import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Conversation } from '../../src/chat/conversation.js';
import { loadLanguageModel } from '../../src/generate/language-model.js';
import { REPO, needsShared, sharedPath } from '../helpers.js';
import { writeChatModel } from '../chat/chat-model.js';

const skip = needsShared();

/** Run `tokenloop chat ARGS` with `input` piped to stdin. */
function chat(args: string[], input: string) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(REPO, 'src', 'cli', 'main.ts'), 'chat', ...args], {
    cwd: REPO, encoding: 'utf8', input, timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('chat: piped user lines get one streamed answer each, equal to the library\'s greedy answers', { skip }, async () => {
  const model = writeChatModel();
  const r = chat(['-m', model, '--temperature', '0', '-n', '20', '--system', 'Be brief.', '--verbose'], 'Tell me a story.\n\nAnd then?\n');
  assert.equal(r.code, 0, r.stderr);
  const c = new Conversation(loadLanguageModel({ model }), { system: 'Be brief.' });
  const a1 = await c.reply('Tell me a story.', { temperature: 0, maxTokens: 20 });
  const a2 = await c.reply('And then?', { temperature: 0, maxTokens: 20 });
  assert.ok(a1.text.trim() && a2.text.trim());
  assert.equal(r.stdout, `${a1.text}\n${a2.text}\n`);
  // --verbose: one stats line per turn; the second turn reuses the first turn's prompt.
  const stats = [...r.stderr.matchAll(/prompt (\d+) tokens, (\d+) prefilled \((\d+) reused\)/g)].map((m) => m.slice(1).map(Number));
  assert.equal(stats.length, 2, r.stderr);
  assert.deepEqual(stats[0], [a1.promptTokens.length, a1.promptTokens.length, 0]);
  assert.deepEqual(stats[1], [a2.promptTokens.length, a2.timings.prefillTokens, a2.promptTokens.length - a2.timings.prefillTokens]);
  assert.ok(stats[1]![2]! >= a1.promptTokens.length);
});

test('chat: /reset forgets the conversation, /exit quits; unknown commands are not sent', { skip }, () => {
  const model = writeChatModel();
  const r = chat(['-m', model, '--temperature', '0', '-n', '8'], 'Hello there.\n/reset\nHello there.\n/bogus\n/exit\nnever read\n');
  assert.equal(r.code, 0, r.stderr);
  const answers = r.stdout.split('\n');
  assert.equal(answers.length, 3, JSON.stringify(r.stdout)); // two answers and the final empty string
  assert.equal(answers[0], answers[1], 'after /reset the same question gets the same greedy answer');
  assert.match(r.stderr, /\[conversation cleared\]/);
  assert.match(r.stderr, /unknown command \/bogus/);
});

test('chat: a model without a template is an error unless --template is given', { skip }, () => {
  const plain = writeChatModel(null);
  const r = chat(['-m', plain], 'Hi\n');
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^tokenloop: error: model has no chat template \(tokenizer\.chat_template is not in its metadata\); pass --template FILE\n$/);

  const ckpt = chat(['-m', sharedPath('models', 'stories260K', 'stories260K.bin')], 'Hi\n');
  assert.equal(ckpt.code, 1);
  assert.match(ckpt.stderr, /no chat template \(a llama2\.c checkpoint has none\)/);

  const tpl = join(dirname(plain), 'tpl.jinja');
  writeFileSync(tpl, '{% for m in messages %}{{ bos_token }}Q: {{ m.content }}\nA:{% endfor %}');
  const ok = chat(['-m', plain, '--template', tpl, '--temperature', '0', '-n', '5'], 'Hi\n');
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(ok.stdout.length > 1 && ok.stdout.endsWith('\n'));
});

test('chat: a message that cannot fit the context is reported, the chat goes on, exit status 1', { skip }, () => {
  const model = writeChatModel();
  const r = chat(['-m', model, '--temperature', '0', '-n', '8', '-c', '64'], `${'word '.repeat(100)}\nHi\n`);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^tokenloop: error: the message does not fit the context/m);
  assert.equal(r.stdout.split('\n').length, 2, 'the second line was still answered');
});
