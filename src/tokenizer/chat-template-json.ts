/**
 * The `tojson` filter exactly as Hugging Face transformers defines it for chat templates:
 * `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)` (Python's
 * json module; see transformers `utils/chat_template_utils.py`). Differences from JSON.stringify
 * that matter: item separator ", " (or "," with an indent), floats printed like Python's repr
 * (`1.0`, `1e-07`, `1e+16`), indent 0 still breaks lines, keys sorted by code point, lone
 * surrogates kept as they are, and values that are not JSON (undefined, functions) raise.
 */
import { TemplateError } from './chat-template-globals.js';

/** A @huggingface/jinja runtime value, as far as JSON needs to see it. */
export interface JsonRuntimeValue {
  type: string;
  value: unknown;
}

/** json.dumps options (Python names). */
export interface PyJsonOptions {
  ensureAscii?: boolean;
  /** Python's indent: null = one line; a number of spaces (<= 0: newlines only); or a string. */
  indent?: number | string | null;
  /** [item separator, key separator]; default depends on indent, as in Python. */
  separators?: [string, string] | null;
  sortKeys?: boolean;
}

/** Python `repr(float)`: shortest round-trip digits, exponent form outside 1e-4 <= |x| < 1e16. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant, expStr] = x.toExponential().split('e') as [string, string];
  const exp = Number(expStr);
  const neg = mant.startsWith('-');
  const digits = mant.replace('-', '').replace('.', '');
  let body: string;
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
      const frac = digits.slice(exp + 1);
      body = `${intPart}.${frac || '0'}`;
    } else {
      body = `0.${'0'.repeat(-exp - 1)}${digits}`;
    }
  } else {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    body = `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return neg ? `-${body}` : body;
}

const ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** A JSON string literal as Python writes it (`ensure_ascii` escapes every non-ASCII UTF-16 unit). */
export function pyJsonString(s: string, ensureAscii: boolean): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const c = s.charCodeAt(i);
    const esc = ESCAPES[ch];
    if (esc !== undefined) out += esc;
    else if (c < 0x20 || (ensureAscii && c > 0x7e)) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

/** Compare strings by Unicode code point, as Python sorts str keys. */
function byCodePoint(a: string, b: string): number {
  const ca = Array.from(a, (c) => c.codePointAt(0)!);
  const cb = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) if (ca[i] !== cb[i]) return ca[i]! - cb[i]!;
  return ca.length - cb.length;
}

/** Serialize a runtime value like Python's `json.dumps` with the given options. */
export function pyJsonDumps(v: JsonRuntimeValue, opts: PyJsonOptions = {}): string {
  const indent = opts.indent ?? null;
  const indentStr = indent === null ? null : typeof indent === 'number' ? ' '.repeat(Math.max(0, indent)) : indent;
  const [itemSep, keySep] = opts.separators ?? (indentStr === null ? [', ', ': '] : [',', ': ']);
  const ensureAscii = opts.ensureAscii ?? false;

  const walk = (x: JsonRuntimeValue, depth: number): string => {
    switch (x.type) {
      case 'NullValue': return 'null';
      case 'BooleanValue': return x.value ? 'true' : 'false';
      case 'IntegerValue': return String(x.value);
      case 'FloatValue': return pyFloatRepr(x.value as number);
      case 'StringValue': return pyJsonString(x.value as string, ensureAscii);
      case 'ArrayValue': case 'TupleValue': {
        const items = (x.value as JsonRuntimeValue[]).map((e) => walk(e, depth + 1));
        return wrap('[', ']', items, depth);
      }
      case 'ObjectValue': {
        let entries = [...(x.value as Map<string, JsonRuntimeValue>).entries()];
        if (opts.sortKeys) entries = entries.sort(([a], [b]) => byCodePoint(a, b));
        const items = entries.map(([k, e]) => pyJsonString(k, ensureAscii) + keySep + walk(e, depth + 1));
        return wrap('{', '}', items, depth);
      }
      default: {
        const pyName = x.type === 'UndefinedValue' ? 'Undefined' : x.type.replace(/Value$/, '');
        throw new TemplateError(`Object of type ${pyName} is not JSON serializable`);
      }
    }
  };
  const wrap = (open: string, close: string, items: string[], depth: number): string => {
    if (items.length === 0) return open + close;
    if (indentStr === null) return open + items.join(itemSep) + close;
    const inner = '\n' + indentStr.repeat(depth + 1);
    return open + inner + items.join(itemSep + inner) + '\n' + indentStr.repeat(depth) + close;
  };
  return walk(v, 0);
}
