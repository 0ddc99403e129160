/**
 * The global functions Hugging Face transformers gives chat templates (`raise_exception`,
 * `strftime_now`, plus Jinja's `range` and the Python-style literals), and a strftime that
 * formats like Python's `datetime.strftime` in the C locale.
 *
 * Source: transformers `utils/chat_template_utils.py` (`_compile_jinja_template`), Python
 * `time.strftime` / C `strftime(3)` directives.
 */
import { TokenloopError } from '../errors.js';

/** A chat template raised (its own `raise_exception`), or could not be parsed or evaluated. */
export class TemplateError extends TokenloopError {}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/**
 * Format a date like C/Python strftime in the C locale, using the date's local time (Python's
 * `datetime.now()` is naive local time). Directives: %a %A %b %B %d %e %H %I %j %m %M %p %S %y %Y
 * %Z (empty: naive time) %z (empty) %%, and the glibc `%-X` "no padding" flag. Unknown directives
 * are kept as written, as glibc does.
 */
export function strftime(date: Date, format: string): string {
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const startOfYear = new Date(date.getFullYear(), 0, 1);
  const dayOfYear = Math.round((new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime() - startOfYear.getTime()) / 86_400_000) + 1;
  const hour12 = date.getHours() % 12 === 0 ? 12 : date.getHours() % 12;
  return format.replace(/%(-?)([a-zA-Z%])/g, (whole, noPad: string, d: string) => {
    const num = (n: number, w = 2) => (noPad ? String(n) : pad(n, w));
    switch (d) {
      case 'a': return DAYS[date.getDay()]!.slice(0, 3);
      case 'A': return DAYS[date.getDay()]!;
      case 'b': case 'h': return MONTHS[date.getMonth()]!.slice(0, 3);
      case 'B': return MONTHS[date.getMonth()]!;
      case 'd': return num(date.getDate());
      case 'e': return noPad ? String(date.getDate()) : String(date.getDate()).padStart(2, ' ');
      case 'H': return num(date.getHours());
      case 'I': return num(hour12);
      case 'j': return num(dayOfYear, 3);
      case 'm': return num(date.getMonth() + 1);
      case 'M': return num(date.getMinutes());
      case 'p': return date.getHours() < 12 ? 'AM' : 'PM';
      case 'S': return num(date.getSeconds());
      case 'y': return num(date.getFullYear() % 100);
      case 'Y': return String(date.getFullYear());
      case 'Z': case 'z': return '';
      case '%': return '%';
      default: return whole;
    }
  });
}

/** Python's `range(stop)` / `range(start, stop[, step])` as a list. */
export function pyRange(a: number, b?: number, step = 1): number[] {
  const [start, stop] = b === undefined ? [0, a] : [a, b];
  if (!Number.isInteger(start) || !Number.isInteger(stop) || !Number.isInteger(step)) {
    throw new TemplateError('range() arguments must be integers');
  }
  if (step === 0) throw new TemplateError('range() arg 3 must not be zero');
  const out: number[] = [];
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
  return out;
}

/**
 * The globals transformers adds to the template environment. `now` supplies the time
 * `strftime_now` formats (injectable so tests are deterministic).
 */
export function chatTemplateGlobals(now: () => Date): Record<string, unknown> {
  return {
    true: true, false: false, none: null, True: true, False: false, None: null,
    range: pyRange,
    // transformers raises jinja2.exceptions.TemplateError(message): the message is the template's own.
    raise_exception: (message: unknown) => { throw new TemplateError(String(message)); },
    strftime_now: (format: unknown) => strftime(now(), String(format)),
  };
}
