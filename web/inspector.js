// The inspector page: posts the form to /inspect/run and steps through the returned trace
// (src/inspect/trace.ts): raw top-K probabilities, the candidates after each processor (the set
// that reaches the sampler highlighted), the chosen token, and the KV cache growing per step.
// Plain DOM, no build step; all model text goes through textContent.

const $ = (id) => document.getElementById(id);
let trace = null;
let current = 0;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function showPiece(p) {
  return JSON.stringify(p).slice(1, -1) || '∅';
}

function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1048576) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1048576).toFixed(1)} MiB`;
}

function numberField(id) {
  const v = $(id).value.trim();
  return v === '' ? undefined : Number(v);
}

async function run(ev) {
  ev.preventDefault();
  const body = { prompt: $('prompt').value };
  for (const k of ['max_tokens', 'temperature', 'top_k', 'top_p', 'min_p', 'seed', 'top']) {
    const v = numberField(k);
    if (v !== undefined) body[k] = v;
  }
  const status = $('status');
  status.className = '';
  status.textContent = 'running…';
  $('run').disabled = true;
  try {
    const res = await fetch('/inspect/run', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = await res.json();
    if (!res.ok) throw new Error(json.error ? `${json.error.param ? json.error.param + ': ' : ''}${json.error.message}` : `HTTP ${res.status}`);
    trace = json;
    status.textContent = '';
    show(0);
  } catch (e) {
    status.className = 'error';
    status.textContent = String(e.message || e);
  } finally {
    $('run').disabled = false;
  }
}

function show(i) {
  if (!trace) return;
  $('result').hidden = false;
  const n = trace.steps.length;
  current = Math.max(0, Math.min(i, n - 1));
  const chain = trace.chain ? [...trace.chain.processors.map((p) => p.name), trace.chain.sampler.name].join(' → ') : '';
  $('summary').textContent = `${trace.model} · ${trace.prompt.tokens.length} prompt tokens (prefill ${trace.prefill.ms.toFixed(1)} ms) · ${n} steps · ${trace.finishReason} · chain: ${chain} · seed ${trace.chain ? trace.chain.seed : '?'}`;
  renderTokens();
  const slider = $('step');
  slider.max = String(Math.max(0, n - 1));
  slider.value = String(current);
  $('step-label').textContent = n ? `step ${current + 1} / ${n}` : 'no steps';
  if (!n) { $('chosen').textContent = 'nothing was generated'; $('stages').replaceChildren(); $('cache').replaceChildren(); return; }
  const s = trace.steps[current];
  renderChosen(s);
  renderStages(s);
  renderCache();
}

function renderTokens() {
  const box = $('tokens');
  box.replaceChildren();
  trace.prompt.pieces.forEach((p, i) => {
    const t = el('span', 'tok', showPiece(p));
    t.title = `prompt token ${trace.prompt.tokens[i]}`;
    box.append(t);
  });
  trace.steps.forEach((s, i) => {
    const t = el('span', `tok gen${i === current ? ' current' : ''}`, showPiece(s.chosen.piece));
    t.title = `step ${i + 1}: id ${s.chosen.id}, p_raw ${s.chosen.prob.toFixed(4)}`;
    t.addEventListener('click', () => show(i));
    box.append(t);
  });
}

function renderChosen(s) {
  const c = $('chosen');
  c.replaceChildren();
  c.append('position ', String(s.position), ' · chose ');
  c.append(el('b', '', `"${showPiece(s.chosen.piece)}"`));
  c.append(` (id ${s.chosen.id}) by ${s.sampler} · raw p ${s.chosen.prob.toFixed(4)} (rank ${s.chosen.rawRank + 1} of ${s.raw.vocab})` +
    ` · p where sampled ${s.chosen.processedProb.toFixed(4)} · select ${s.timings.selectMs.toFixed(2)} ms` +
    (s.timings.forwardMs !== null ? ` · forward ${s.timings.forwardMs.toFixed(2)} ms` : ''));
}

function renderStages(s) {
  const box = $('stages');
  box.replaceChildren();
  s.stages.forEach((st, k) => {
    const card = el('div', 'stage');
    const h = el('h3', '', k === 0 ? 'raw (softmax of logits)' : st.name);
    const params = Object.entries(st.params).map(([a, b]) => `${a}=${JSON.stringify(b)}`).join(' ');
    h.append(el('span', '', `${params ? params + ' · ' : ''}${st.size} live`));
    card.append(h);
    for (const c of st.top) {
      // c.kept: the token is still live where the sampler chose (it survived every processor).
      const row = el('div', `row${c.kept ? ' survives' : ' removed'}${c.id === s.chosen.id ? ' is-chosen' : ''}`);
      row.title = `id ${c.id} · logit ${c.logit.toFixed(4)} · p ${c.prob.toExponential(3)}`;
      row.append(el('span', 'piece', `"${showPiece(c.piece)}"`));
      const track = el('span', 'track');
      const fill = el('span', 'fill');
      fill.style.display = 'block';
      fill.style.width = `${Math.max(0.5, 100 * c.prob)}%`;
      track.append(fill);
      row.append(track, el('span', 'p', c.prob.toFixed(4)));
      card.append(row);
    }
    box.append(card);
  });
  const legend = el('div', 'legend', 'dark bars: candidates that reach the sampler · grey: removed by a later stage · orange: the chosen token');
  box.append(legend);
}

function renderCache() {
  const box = $('cache');
  box.replaceChildren();
  const steps = trace.steps;
  const lengths = steps.map((s) => (s.cache.after || s.cache.before).length);
  const maxLen = Math.max(trace.prefill.cacheLength, ...lengths);
  const col = (len, title, cls) => {
    const c = el('div', `col${cls ? ' ' + cls : ''}`);
    c.style.height = `${(100 * len) / Math.max(1, maxLen)}%`;
    c.title = title;
    return c;
  };
  box.append(col(trace.prefill.cacheLength, `after prefill: ${trace.prefill.cacheLength} positions, ${bytes(trace.prefill.cacheBytes)}`, ''));
  steps.forEach((s, i) => {
    const a = s.cache.after || s.cache.before;
    box.append(col(a.length, `step ${i + 1}: ${a.length} positions, ${bytes(a.bytes)}${s.cache.after ? '' : ' (no forward: generation ended)'}`, i === current ? 'current' : ''));
  });
  const s = steps[current];
  const a = s.cache.after || s.cache.before;
  const legend = box.nextElementSibling && box.nextElementSibling.classList.contains('legend') ? box.nextElementSibling : null;
  const text = `step ${current + 1}: ${s.cache.before.length} → ${a.length} positions · ${bytes(a.bytes)} (prefill: ${trace.prefill.cacheLength} positions)`;
  if (legend) legend.textContent = text;
  else box.after(el('div', 'legend', text));
}

$('run-form').addEventListener('submit', run);
$('prev').addEventListener('click', () => show(current - 1));
$('next').addEventListener('click', () => show(current + 1));
$('step').addEventListener('input', (e) => show(Number(e.target.value)));
document.addEventListener('keydown', (e) => {
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement) return;
  if (e.key === 'ArrowLeft') show(current - 1);
  if (e.key === 'ArrowRight') show(current + 1);
});

// A link can carry the settings (?prompt=...&temperature=...&run=1): fill the form, and run when asked.
const params = new URLSearchParams(location.search);
for (const k of ['prompt', 'max_tokens', 'temperature', 'top_k', 'top_p', 'min_p', 'seed', 'top']) {
  if (params.has(k)) $(k).value = params.get(k);
}
if (params.get('run') === '1') $('run-form').requestSubmit();
