import { test } from 'node:test';
import assert from 'node:assert/strict';
import { needsShared, runCli } from '../helpers.js';

const skip = needsShared();

test('tokenloop inspect --json: one object with every step (top-K raw, stages, cache)', { skip }, () => {
  const r = runCli(['inspect', '--seed', '4', '-n', '5', '--top', '3', '--top-k', '10', '--json', 'Once upon a time']);
  assert.equal(r.code, 0, r.stderr);
  const trace = JSON.parse(r.stdout);
  assert.equal(trace.steps.length, 5);
  assert.equal(trace.chain.seed, 4);
  for (const s of trace.steps) {
    assert.equal(s.raw.top.length, 3);
    assert.deepEqual(s.stages.map((x: { name: string }) => x.name), ['input', 'top-k', 'top-p', 'min-p', 'temperature']);
    assert.ok(s.stages[1].size <= 10);
  }
  assert.deepEqual(trace.steps.map((s: { chosen: { id: number } }) => s.chosen.id), trace.tokens);
  // same seed, same flags → the same tokens as generate
  const g = runCli(['generate', '--seed', '4', '-n', '5', '--top-k', '10', '--json', 'Once upon a time']);
  assert.equal(g.code, 0, g.stderr);
  assert.deepEqual(JSON.parse(g.stdout).tokens, trace.tokens);
});

test('tokenloop inspect prints a table: header, one row per step with position, chosen token, survivors, cache', { skip }, () => {
  const r = runCli(['inspect', '--seed', '4', '-n', '4', '--top', '2', 'Once upon a time']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  const head = lines.findIndex((l) => /\bpos\b.*\bchosen\b.*\bp_raw\b/.test(l));
  assert.ok(head >= 0, r.stdout);
  assert.match(lines[head]!, /kept input→top-k→top-p→min-p→temperature/);
  const rows = lines.slice(head + 1, head + 5);
  rows.forEach((row, i) => {
    assert.match(row, new RegExp(`^\\s*${5 + i}\\s+\\d+ "`), row);
    assert.match(row, /512→40→\d+→\d+→\d+/);
    assert.match(row, /\d+ · [\d.]+ KiB/);
  });
  assert.match(lines.at(-2)!, /^finish: length/);
  assert.match(r.stdout, /chain: top-k\(40\) → top-p\(0\.95\) → min-p\(0\.05\) → temperature\(0\.8\) → dist · seed 4/);
});

test('tokenloop inspect rejects bad flags with one error line', { skip }, () => {
  const r = runCli(['inspect', '--top', '0', 'x']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--top/);
  const b = runCli(['inspect', '--top-p', '0', 'x']);
  assert.equal(b.code, 1);
  assert.match(b.stderr, /topP/);
});
