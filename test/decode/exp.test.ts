import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expNonPositive } from '../../src/decode/exp.js';
import { logSumExp } from '../../src/decode/logprobs.js';

test('expNonPositive matches Math.exp within 1e-14 relative over (−745, 0]', () => {
  let worst = 0;
  const check = (y: number) => {
    const want = Math.exp(y), got = expNonPositive(y);
    if (want === 0) { assert.equal(got, 0, `e^${y}`); return; }
    // subnormal results keep fewer bits: compare those in absolute terms
    const err = want < 2.2250738585072014e-308 ? Math.abs(got - want) / 4.9e-324 : Math.abs(got - want) / want;
    if (want >= 2.2250738585072014e-308) worst = Math.max(worst, err);
    else assert.ok(err <= 1, `e^${y}: ${got} vs ${want}`);
  };
  let s = 12345;
  const rand = () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648; };
  for (let i = 0; i < 200000; i++) check(-rand() * 745);
  for (let i = 0; i < 100000; i++) check(-rand() * 2);
  for (const y of [-0, -1e-300, -5e-324, -0.34657359027997264, -0.3465735902799727, -0.6931471805599453, -1, -708.3964185322641, -708.4, -744.4, -745, -745.1332191019411]) check(y);
  assert.ok(worst < 1e-14, `worst relative error ${worst}`);
});

test('expNonPositive: exact at 0, 0 at −∞ and below the subnormal range', () => {
  assert.equal(expNonPositive(0), 1);
  assert.equal(expNonPositive(-0), 1);
  assert.equal(expNonPositive(-Infinity), 0);
  assert.equal(expNonPositive(-746), 0);
  assert.equal(expNonPositive(-1e308), 0);
});

test('logSumExp over a 32000-entry vocabulary agrees with a Math.exp sum within 1e-13', () => {
  const x = new Float32Array(32000);
  for (let i = 0; i < x.length; i++) x[i] = Math.sin(i * 0.37) * 12 - (i % 7);
  let m = -Infinity;
  for (const v of x) m = Math.max(m, v);
  let sum = 0;
  for (const v of x) sum += Math.exp(v - m);
  const want = m + Math.log(sum);
  assert.ok(Math.abs(logSumExp(x) - want) < 1e-13, `${logSumExp(x)} vs ${want}`);
  assert.equal(logSumExp(new Float32Array([-Infinity, -Infinity])), -Infinity);
  assert.equal(logSumExp(new Float32Array([0])), 0);
});
