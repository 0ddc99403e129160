import { test } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { InvalidOptionError } from '../../src/errors.ts';
import { resolveThreads } from '../../src/model/kernels/threads/pool.ts';
import { modelOpenOptions } from '../../src/model/kernels/wasm/select.ts';

// How many threads read a model file and how many compute: readers follow the cores (at most
// four), not the compute threads; the js backend reads with one thread into a plain buffer.

test('modelOpenOptions: wasm reads with one thread per core up to four whatever `threads` is; js with one, no allocator', () => {
  const want = Math.min(4, availableParallelism());
  for (const threads of [1, 2, undefined]) {
    const o = modelOpenOptions({ threads });
    assert.equal(o.readers, want, `threads ${threads}`);
    assert.equal(typeof o.allocate, 'function');
  }
  const js = modelOpenOptions({ backend: 'js', threads: 2 });
  assert.deepEqual(js, { readers: 1 });
});

test('resolveThreads: default the cores, capped at the cores, positive integers only', () => {
  assert.equal(resolveThreads(undefined), availableParallelism());
  assert.equal(resolveThreads(1), 1);
  assert.equal(resolveThreads(1000), availableParallelism());
  for (const bad of [0, -1, 1.5, NaN]) assert.throws(() => resolveThreads(bad), InvalidOptionError);
});
