import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QueueAbortError, SerialQueue } from '../../src/server/queue.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

test('jobs run one at a time, in arrival order', async () => {
  const q = new SerialQueue();
  const log: string[] = [];
  const job = (name: string) => async () => { log.push(`${name}+`); await tick(); await tick(); log.push(`${name}-`); return name; };
  const never = new AbortController().signal;
  const results = await Promise.all([q.run(never, job('a')), q.run(never, job('b')), q.run(never, job('c'))]);
  assert.deepEqual(results, ['a', 'b', 'c']);
  assert.deepEqual(log, ['a+', 'a-', 'b+', 'b-', 'c+', 'c-']);
  assert.deepEqual(q.stats, { active: 0, waiting: 0 });
});

test('a waiting job whose signal aborts leaves the queue without running; a failing job frees it', async () => {
  const q = new SerialQueue();
  const never = new AbortController().signal;
  let release!: () => void;
  const first = q.run(never, () => new Promise<void>((r) => { release = r; }));
  const ac = new AbortController();
  let ran = false;
  const second = q.run(ac.signal, async () => { ran = true; });
  const third = q.run(never, async () => { throw new Error('boom'); });
  await tick();
  assert.deepEqual(q.stats, { active: 1, waiting: 2 });
  ac.abort();
  await assert.rejects(second, QueueAbortError);
  assert.deepEqual(q.stats, { active: 1, waiting: 1 });
  release();
  await first;
  await assert.rejects(third, /boom/);
  assert.equal(ran, false);
  assert.deepEqual(q.stats, { active: 0, waiting: 0 });
  await assert.rejects(q.run(ac.signal, async () => 1), QueueAbortError, 'an already aborted job is refused');
});
