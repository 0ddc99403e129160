/**
 * A trace as a compact text table, one row per step: position, chosen token (id and piece), its
 * raw probability (and rank), how many candidates survive each stage of the chain, the KV cache
 * after the step, and the top raw candidates with their probabilities.
 */
import type { Trace, TraceStep } from './trace.js';

/** A token piece made visible: quoted, with newlines/tabs escaped, cut to `max` characters. */
export function showPiece(piece: string, max = 14): string {
  const q = JSON.stringify(piece);
  return q.length <= max ? q : `${q.slice(0, max - 2)}…"`;
}

/** Bytes as B / KiB / MiB. */
export function showBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

function pad(s: string, w: number, right = false): string {
  return right ? s.padStart(w) : s.padEnd(w);
}

/** Survivors per stage, e.g. `512→40→3→2→2`. */
function survivors(s: TraceStep): string {
  return s.stages.map((st) => String(st.size)).join('→');
}

/** The whole table (header with the chain, one row per step, a footer with the result). */
export function formatTraceTable(trace: Trace, top = trace.top): string {
  const lines: string[] = [];
  const stageNames = trace.steps[0]?.stages.map((s) => s.name).join('→') ?? 'input';
  const chain = trace.chain;
  const chainText = chain ? [...chain.processors.map((p) => `${p.name}${Object.keys(p.params).length ? `(${Object.values(p.params).map((v) => JSON.stringify(v)).join(', ')})` : ''}`), chain.sampler.name].join(' → ') : '?';
  lines.push(`prompt: ${trace.prompt.tokens.length} tokens · prefill ${trace.prefill.ms.toFixed(2)} ms · cache ${trace.prefill.cacheLength} pos / ${showBytes(trace.prefill.cacheBytes)}`);
  lines.push(`chain: ${chainText} · seed ${chain?.seed ?? '?'}`);
  const seqCol = trace.steps.some((s) => s.sequence > 0);
  const header = [
    ...(seqCol ? [pad('seq', 3, true)] : []),
    pad('pos', 5, true), pad('chosen', 22), pad('p_raw', 7, true), pad('rank', 4, true), pad('p_sel', 7, true),
    pad(`kept ${stageNames}`, 26), pad('cache', 18), `top-${top} raw candidates`,
  ];
  lines.push(header.join('  '));
  for (const s of trace.steps) {
    const after = s.cache.after ?? s.cache.before;
    const cache = `${after.length} · ${showBytes(after.bytes)}`;
    const tops = s.raw.top.slice(0, top).map((c) => `${showPiece(c.piece, 12)} ${c.prob.toFixed(3)}`).join('  ');
    const row = [
      ...(seqCol ? [pad(String(s.sequence), 3, true)] : []),
      pad(String(s.position), 5, true), pad(`${s.chosen.id} ${showPiece(s.chosen.piece)}`, 22), pad(s.chosen.prob.toFixed(4), 7, true),
      pad(String(s.chosen.rawRank), 4, true), pad(s.chosen.processedProb.toFixed(4), 7, true),
      pad(survivors(s), 26), pad(cache, 18), tops,
    ];
    lines.push(row.join('  '));
  }
  const u = trace.usage;
  lines.push(`finish: ${trace.finishReason ?? '?'}${trace.stop ? ` (${trace.stop.kind})` : ''} · ${u ? `${u.completionTokens} tokens` : ''}`);
  lines.push(`text: ${JSON.stringify(trace.text)}`);
  return lines.join('\n') + '\n';
}
