/**
 * A @huggingface/jinja interpreter adjusted to behave like Python Jinja2 as transformers uses it
 * (ImmutableSandboxedEnvironment, default `Undefined`), where the JS port differs on real templates:
 * - iterating an undefined value yields nothing (Jinja2's Undefined is an empty iterable);
 * - `select`/`reject`/`selectattr`/`rejectattr`/`map` of none or undefined yield an empty list
 *   (Jinja2 guards them with `if value:`), and `list`/`length`/`count`/`join`/`items` of undefined
 *   act on an empty sequence;
 * - arithmetic on an undefined name raises Jinja2's message (`'functions' is undefined`);
 * - `tojson` is transformers' `json.dumps(...)` (see chat-template-json.ts).
 * Everything else is the library's own behaviour.
 */
import * as jinja from '@huggingface/jinja';
import { TemplateError } from './chat-template-globals.js';
import { pyJsonDumps, type JsonRuntimeValue, type PyJsonOptions } from './chat-template-json.js';

/** A runtime value of @huggingface/jinja (IntegerValue, StringValue, ObjectValue, ...). */
export interface JinjaValue {
  type: string;
  value: unknown;
}
/** The parts of @huggingface/jinja's Environment used here. */
export interface JinjaEnvironment {
  set(name: string, value: unknown): JinjaValue;
  lookupVariable(name: string): JinjaValue;
}
interface JinjaInterpreter {
  evaluate(node: object | undefined, env: JinjaEnvironment): JinjaValue;
  run(program: object): JinjaValue;
}
/*
 * The package's .d.ts files use extensionless relative imports, which NodeNext resolution cannot
 * follow, so its classes type as `any`; these casts give them the small shapes used here.
 */
/** @huggingface/jinja's Environment (a variable scope). */
export const Environment = jinja.Environment as unknown as new (parent?: JinjaEnvironment) => JinjaEnvironment;
const BaseInterpreter = jinja.Interpreter as unknown as new (env?: JinjaEnvironment) => JinjaInterpreter;
/** Parse template source into a program (lexer options as in Jinja2). */
export const parseTemplate = (source: string, opts: { lstrip_blocks: boolean; trim_blocks: boolean }): object =>
  jinja.parse(jinja.tokenize(source, opts)) as object;

type Node = object;
type Value = JinjaValue;
type Environment = JinjaEnvironment;
/** The AST fields read here (the library's node classes are not exported). */
interface LooseNode {
  type: string;
  value?: unknown;
  iterable?: LooseNode;
  lhs?: LooseNode;
  operand?: LooseNode;
  filter?: LooseNode;
  callee?: LooseNode;
  args?: LooseNode[];
  key?: LooseNode;
  left?: LooseNode;
  right?: LooseNode;
  operator?: { value: string };
  object?: LooseNode;
  property?: LooseNode;
  computed?: boolean;
}

/** Convert a plain JS value into a runtime value (the library's converter, via Environment.set). */
function runtime(x: unknown): Value {
  return new Environment().set('v', x);
}

const NULLISH_TO_EMPTY = new Set(['select', 'reject', 'selectattr', 'rejectattr', 'map']);
const UNDEFINED_TO_EMPTY = new Set(['list', 'length', 'count', 'join', 'items']);

function filterName(f: LooseNode | undefined): string | undefined {
  if (!f) return undefined;
  if (f.type === 'Identifier') return f.value as string;
  if (f.type === 'CallExpression' && f.callee?.type === 'Identifier') return f.callee.value as string;
  return undefined;
}

/** Python's type name of a runtime value, for Jinja2's "'dict object' has no attribute" message. */
function pyTypeName(v: Value): string {
  switch (v.type) {
    case 'ObjectValue': return 'dict';
    case 'ArrayValue': return 'list';
    case 'TupleValue': return 'tuple';
    case 'StringValue': return 'str';
    case 'IntegerValue': return 'int';
    case 'FloatValue': return 'float';
    case 'BooleanValue': return 'bool';
    case 'NullValue': return 'NoneType';
    default: return v.type;
  }
}

/** Interpreter with Jinja2/transformers semantics where the JS port differs (see file comment). */
export class HfInterpreter extends BaseInterpreter {
  /** Expression nodes whose undefined (or, for `nullish`, also none) value counts as an empty list. */
  private readonly emptyIfUndefined = new WeakSet<object>();
  private readonly emptyIfNullish = new WeakSet<object>();

  override evaluate(statement: Node | undefined, environment: Environment): Value {
    if (!statement) return super.evaluate(statement, environment);
    const node = statement as unknown as LooseNode;
    switch (node.type) {
      case 'For': {
        const it = node.iterable!;
        this.emptyIfUndefined.add(it.type === 'SelectExpression' ? it.lhs! : it);
        return this.guarded(statement, environment);
      }
      case 'FilterExpression': {
        const name = filterName(node.filter);
        if (name === 'tojson') return this.toJson(node, environment);
        if (name && NULLISH_TO_EMPTY.has(name)) this.emptyIfNullish.add(node.operand!);
        else if (name && UNDEFINED_TO_EMPTY.has(name)) this.emptyIfUndefined.add(node.operand!);
        return this.guarded(statement, environment);
      }
      case 'BinaryExpression':
        try {
          return this.guarded(statement, environment);
        } catch (e) {
          throw this.undefinedOperandError(node, environment) ?? e;
        }
      default:
        return this.guarded(statement, environment);
    }
  }

  /** Evaluate, turning undefined (or none) into [] where Jinja2 would iterate an empty sequence. */
  private guarded(statement: Node, environment: Environment): Value {
    const v = super.evaluate(statement, environment);
    if ((v.type === 'UndefinedValue' && (this.emptyIfUndefined.has(statement) || this.emptyIfNullish.has(statement))) ||
        (v.type === 'NullValue' && this.emptyIfNullish.has(statement))) {
      return runtime([]);
    }
    return v;
  }

  /** Jinja2's UndefinedError message for an operand of a failed binary operation, if one is undefined. */
  private undefinedOperandError(node: LooseNode, env: Environment): TemplateError | undefined {
    for (const side of [node.left, node.right]) {
      if (!side) continue;
      try {
        if (side.type === 'Identifier' && env.lookupVariable(side.value as string).type === 'UndefinedValue') {
          return new TemplateError(`'${side.value as string}' is undefined`);
        }
        if (side.type === 'MemberExpression' && super.evaluate(side as unknown as Node, env).type === 'UndefinedValue') {
          const obj = super.evaluate(side.object as unknown as Node, env);
          const prop = side.computed ? super.evaluate(side.property as unknown as Node, env).value : side.property!.value;
          return new TemplateError(`'${pyTypeName(obj)} object' has no attribute '${String(prop)}'`);
        }
      } catch {
        // The re-evaluation itself failed: keep the original error.
      }
    }
    return undefined;
  }

  /** transformers' tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False). */
  private toJson(node: LooseNode, env: Environment): Value {
    const operand = this.evaluate(node.operand as unknown as Node, env) as JsonRuntimeValue;
    const params = ['ensure_ascii', 'indent', 'separators', 'sort_keys'];
    const given = new Map<string, JsonRuntimeValue>();
    const args = node.filter!.type === 'CallExpression' ? node.filter!.args ?? [] : [];
    args.forEach((a, i) => {
      if (a.type === 'KeywordArgumentExpression') {
        given.set(a.key!.value as string, this.evaluate(a.value as unknown as Node, env) as JsonRuntimeValue);
      } else {
        const p = params[i];
        if (p === undefined) throw new TemplateError('tojson() takes at most 4 arguments');
        given.set(p, this.evaluate(a as unknown as Node, env) as JsonRuntimeValue);
      }
    });
    const opts: PyJsonOptions = {};
    for (const [k, v] of given) {
      if (k === 'ensure_ascii') opts.ensureAscii = Boolean(v.value);
      else if (k === 'sort_keys') opts.sortKeys = Boolean(v.value);
      else if (k === 'indent') {
        if (v.type === 'NullValue' || v.type === 'UndefinedValue') opts.indent = null;
        else if (v.type === 'IntegerValue' || v.type === 'StringValue') opts.indent = v.value as number | string;
        else throw new TemplateError('tojson(): indent must be an integer, a string or none');
      } else if (k === 'separators') {
        if (v.type === 'NullValue') opts.separators = null;
        else if ((v.type === 'ArrayValue' || v.type === 'TupleValue') && (v.value as JsonRuntimeValue[]).length === 2 &&
                 (v.value as JsonRuntimeValue[]).every((s) => s.type === 'StringValue')) {
          const [a, b] = (v.value as JsonRuntimeValue[]).map((s) => s.value as string);
          opts.separators = [a!, b!];
        } else throw new TemplateError('tojson(): separators must be a pair of strings');
      } else throw new TemplateError(`tojson() got an unexpected keyword argument '${k}'`);
    }
    return runtime(pyJsonDumps(operand, opts));
  }
}
