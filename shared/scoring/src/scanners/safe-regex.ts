/**
 * A linear-time regular-expression matcher for patterns we do not control (policy
 * `scanners_config.regex`, regexes written in rule descriptions). JavaScript's RegExp backtracks,
 * so one hostile pattern such as `(a+)+$` can hang the process; this compiles the pattern to a
 * Thompson NFA and simulates it (Pike VM): time is O(text length x program size), and a step
 * budget bounds even that.
 *
 * Supported: literals, `.`, classes `[...]` (ranges, negation, \d \w \s inside), escapes
 * \d \D \w \W \s \S \b \B \t \n \r \f \v \0 \xHH \uHHHH, anchors ^ $, groups `( )` `(?: )`
 * `(?<name> )` (captures are not reported), alternation, quantifiers * + ? {n} {n,} {n,m} and
 * their lazy forms (same matches; spans are leftmost-longest). Flags: i, m, s (g, u, y ignored).
 * Rejected with SafeRegexError: backreferences, lookaround, patterns over 1000 characters or
 * compiling to more than 4000 instructions.
 */

export class SafeRegexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SafeRegexError';
  }
}

export interface RegexMatch {
  start: number;
  end: number;
}

/** Thread steps left for a group of scans (e.g. every regex of one request); spent by each call. */
export interface RegexBudget {
  steps: number;
}

export interface SafeRegex {
  readonly source: string;
  readonly flags: string;
  /** Non-overlapping leftmost-longest matches, at most `limit`; `budget` caps the steps and is charged for them. */
  findAll(text: string, limit?: number, budget?: RegexBudget): RegexMatch[];
  test(text: string, budget?: RegexBudget): boolean;
}

export const SAFE_REGEX_LIMITS = {
  maxPatternLength: 1000,
  maxProgramSize: 4000,
  maxRepeat: 200,
  /** Thread steps per findAll call: ~100 ms of work. Beyond it the scan stops (matches so far are kept). */
  stepBudget: 4_000_000,
  /**
   * Thread steps for all the regexes of one request (the engine passes one RegexBudget to every
   * call). Per call alone, 100 policy patterns over a 200 KB text and its decoded variants could
   * spend 100 x 9 x stepBudget steps (minutes); shared, all regex matching stays within ~0.3 s.
   */
  requestStepBudget: 8_000_000,
} as const;

// ---------------------------------------------------------------------------------------------
// Character sets

interface CharSet {
  ranges: number[]; // flat [lo, hi, lo, hi, ...]
  negate: boolean;
}

const DIGIT: number[] = [0x30, 0x39];
const WORD: number[] = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
const SPACE: number[] = [
  0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f,
  0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff,
];

function complement(ranges: number[]): number[] {
  const sorted: Array<[number, number]> = [];
  for (let i = 0; i < ranges.length; i += 2) sorted.push([ranges[i] ?? 0, ranges[i + 1] ?? 0]);
  sorted.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  let next = 0;
  for (const [lo, hi] of sorted) {
    if (lo > next) out.push(next, lo - 1);
    next = Math.max(next, hi + 1);
  }
  if (next <= 0xffff) out.push(next, 0xffff);
  return out;
}

function inRanges(ranges: number[], c: number): boolean {
  for (let i = 0; i < ranges.length; i += 2)
    if (c >= (ranges[i] ?? 0) && c <= (ranges[i + 1] ?? -1)) return true;
  return false;
}

function otherCase(c: number): number {
  if (c >= 0x41 && c <= 0x5a) return c + 32;
  if (c >= 0x61 && c <= 0x7a) return c - 32;
  if (c < 0x80) return c;
  const s = String.fromCharCode(c);
  const l = s.toLowerCase();
  if (l !== s && l.length === 1) return l.charCodeAt(0);
  const u = s.toUpperCase();
  if (u !== s && u.length === 1) return u.charCodeAt(0);
  return c;
}

function setMatches(set: CharSet, c: number, ci: boolean): boolean {
  let hit = inRanges(set.ranges, c);
  if (!hit && ci) {
    const o = otherCase(c);
    if (o !== c) hit = inRanges(set.ranges, o);
  }
  return hit !== set.negate;
}

// ---------------------------------------------------------------------------------------------
// Parser: pattern -> AST

type Node =
  | { t: 'set'; set: CharSet }
  | { t: 'any' }
  | { t: 'assert'; kind: 'bol' | 'eol' | 'wordb' | 'nwordb' }
  | { t: 'cat'; items: Node[] }
  | { t: 'alt'; items: Node[] }
  | { t: 'rep'; node: Node; min: number; max: number } // max = -1: unbounded
  | { t: 'empty' };

class Parser {
  private pos = 0;
  constructor(private readonly src: string) {}

  parse(): Node {
    const node = this.parseAlt();
    if (this.pos < this.src.length) throw new SafeRegexError(`unexpected ")" at ${this.pos}`);
    return node;
  }

  private peek(): string | undefined {
    return this.src[this.pos];
  }

  private parseAlt(): Node {
    const items: Node[] = [this.parseCat()];
    while (this.peek() === '|') {
      this.pos++;
      items.push(this.parseCat());
    }
    return items.length === 1 ? (items[0] ?? { t: 'empty' }) : { t: 'alt', items };
  }

  private parseCat(): Node {
    const items: Node[] = [];
    while (this.pos < this.src.length) {
      const c = this.peek();
      if (c === '|' || c === ')') break;
      let atom = this.parseAtom();
      atom = this.parseQuantifiers(atom);
      items.push(atom);
    }
    if (items.length === 0) return { t: 'empty' };
    return items.length === 1 ? (items[0] ?? { t: 'empty' }) : { t: 'cat', items };
  }

  private parseQuantifiers(atom: Node): Node {
    for (;;) {
      const c = this.peek();
      let min: number;
      let max: number;
      if (c === '*') {
        min = 0;
        max = -1;
        this.pos++;
      } else if (c === '+') {
        min = 1;
        max = -1;
        this.pos++;
      } else if (c === '?') {
        min = 0;
        max = 1;
        this.pos++;
      } else if (c === '{') {
        const m = /^\{(\d{1,4})(?:(,)(\d{0,4}))?\}/.exec(this.src.slice(this.pos, this.pos + 12));
        if (!m) return atom; // a literal "{", as JavaScript treats it
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === '' || m[3] === undefined ? -1 : Number(m[3]);
        if (max !== -1 && max < min)
          throw new SafeRegexError('numbers out of order in {} quantifier');
        if (min > SAFE_REGEX_LIMITS.maxRepeat || max > SAFE_REGEX_LIMITS.maxRepeat) {
          throw new SafeRegexError(`repetition count above ${SAFE_REGEX_LIMITS.maxRepeat}`);
        }
        this.pos += m[0].length;
      } else {
        return atom;
      }
      if (this.peek() === '?') this.pos++; // lazy: same match set
      if (atom.t === 'assert' || atom.t === 'empty') throw new SafeRegexError('nothing to repeat');
      atom = { t: 'rep', node: atom, min, max };
    }
  }

  private parseAtom(): Node {
    const c = this.src[this.pos++];
    switch (c) {
      case '(': {
        if (this.src.startsWith('?:', this.pos)) this.pos += 2;
        else if (
          this.src.startsWith('?<', this.pos) &&
          /^\?<[A-Za-z_$][\w$]*>/.test(this.src.slice(this.pos))
        ) {
          this.pos = this.src.indexOf('>', this.pos) + 1;
        } else if (this.peek() === '?') {
          throw new SafeRegexError('lookaround and inline modifiers are not supported');
        }
        const inner = this.parseAlt();
        if (this.peek() !== ')') throw new SafeRegexError('unterminated group');
        this.pos++;
        return inner;
      }
      case '[':
        return { t: 'set', set: this.parseClass() };
      case '.':
        return { t: 'any' };
      case '^':
        return { t: 'assert', kind: 'bol' };
      case '$':
        return { t: 'assert', kind: 'eol' };
      case '\\':
        return this.parseEscape(false);
      case '*':
      case '+':
      case '?':
        throw new SafeRegexError('nothing to repeat');
      case undefined:
        throw new SafeRegexError('unexpected end of pattern');
      default: {
        const code = c.charCodeAt(0);
        return { t: 'set', set: { ranges: [code, code], negate: false } };
      }
    }
  }

  /** After a backslash. Inside a class, \b is a backspace and assertions are not allowed. */
  private parseEscape(inClass: boolean): Node {
    const c = this.src[this.pos++];
    const lit = (code: number): Node => ({
      t: 'set',
      set: { ranges: [code, code], negate: false },
    });
    switch (c) {
      case 'd':
        return { t: 'set', set: { ranges: DIGIT, negate: false } };
      case 'D':
        return { t: 'set', set: { ranges: DIGIT, negate: true } };
      case 'w':
        return { t: 'set', set: { ranges: WORD, negate: false } };
      case 'W':
        return { t: 'set', set: { ranges: WORD, negate: true } };
      case 's':
        return { t: 'set', set: { ranges: SPACE, negate: false } };
      case 'S':
        return { t: 'set', set: { ranges: SPACE, negate: true } };
      case 'b':
        return inClass ? lit(0x08) : { t: 'assert', kind: 'wordb' };
      case 'B':
        if (inClass) throw new SafeRegexError('\\B inside a class');
        return { t: 'assert', kind: 'nwordb' };
      case 't':
        return lit(0x09);
      case 'n':
        return lit(0x0a);
      case 'r':
        return lit(0x0d);
      case 'f':
        return lit(0x0c);
      case 'v':
        return lit(0x0b);
      case '0':
        return lit(0);
      case 'x': {
        const m = /^[0-9a-fA-F]{2}/.exec(this.src.slice(this.pos, this.pos + 2));
        if (!m) return lit(0x78);
        this.pos += 2;
        return lit(parseInt(m[0], 16));
      }
      case 'u': {
        const m = /^[0-9a-fA-F]{4}/.exec(this.src.slice(this.pos, this.pos + 4));
        if (!m) return lit(0x75);
        this.pos += 4;
        return lit(parseInt(m[0], 16));
      }
      case undefined:
        throw new SafeRegexError('pattern ends with a backslash');
      default:
        if (/[1-9]/.test(c) || c === 'k')
          throw new SafeRegexError('backreferences are not supported');
        return lit(c.charCodeAt(0));
    }
  }

  private parseClass(): CharSet {
    let negate = false;
    if (this.peek() === '^') {
      negate = true;
      this.pos++;
    }
    const ranges: number[] = [];
    let first = true;
    for (;;) {
      const c = this.src[this.pos];
      if (c === undefined) throw new SafeRegexError('unterminated character class');
      if (c === ']' && !first) {
        this.pos++;
        break;
      }
      first = false;
      const lo = this.classAtom(ranges);
      if (lo === null) continue;
      if (
        this.peek() === '-' &&
        this.src[this.pos + 1] !== ']' &&
        this.src[this.pos + 1] !== undefined
      ) {
        this.pos++;
        const hi = this.classAtom(ranges);
        if (hi === null) {
          ranges.push(lo, lo, 0x2d, 0x2d);
          continue;
        }
        if (hi < lo) throw new SafeRegexError('range out of order in character class');
        ranges.push(lo, hi);
      } else {
        ranges.push(lo, lo);
      }
    }
    return { ranges, negate };
  }

  /** One class member: a code point, or null after appending a class escape (\d, \w, ...) to `ranges`. */
  private classAtom(ranges: number[]): number | null {
    const c = this.src[this.pos++];
    if (c !== '\\') return (c ?? '').charCodeAt(0);
    const node = this.parseEscape(true);
    if (node.t !== 'set') throw new SafeRegexError('invalid escape in character class');
    const r = node.set.negate ? complement(node.set.ranges) : node.set.ranges;
    if (r.length === 2 && r[0] === r[1] && !node.set.negate) return r[0] ?? 0;
    for (const x of r) ranges.push(x);
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Compiler: AST -> program

const enum Op {
  Set,
  Any,
  Split,
  Jmp,
  Assert,
  Match,
}

interface Inst {
  op: Op;
  set?: CharSet;
  x: number;
  y: number;
  kind?: 'bol' | 'eol' | 'wordb' | 'nwordb';
}

class Compiler {
  readonly prog: Inst[] = [];

  private emit(inst: Inst): number {
    if (this.prog.length >= SAFE_REGEX_LIMITS.maxProgramSize)
      throw new SafeRegexError('pattern too complex');
    this.prog.push(inst);
    return this.prog.length - 1;
  }

  private at(pc: number): Inst {
    const inst = this.prog[pc];
    if (!inst) throw new SafeRegexError('internal compiler error');
    return inst;
  }

  compile(node: Node): void {
    switch (node.t) {
      case 'empty':
        return;
      case 'set':
        this.emit({ op: Op.Set, set: node.set, x: 0, y: 0 });
        return;
      case 'any':
        this.emit({ op: Op.Any, x: 0, y: 0 });
        return;
      case 'assert':
        this.emit({ op: Op.Assert, kind: node.kind, x: 0, y: 0 });
        return;
      case 'cat':
        for (const item of node.items) this.compile(item);
        return;
      case 'alt': {
        const jumps: number[] = [];
        for (let k = 0; k < node.items.length; k++) {
          const item = node.items[k] ?? { t: 'empty' };
          if (k < node.items.length - 1) {
            const split = this.emit({ op: Op.Split, x: 0, y: 0 });
            this.at(split).x = this.prog.length;
            this.compile(item);
            jumps.push(this.emit({ op: Op.Jmp, x: 0, y: 0 }));
            this.at(split).y = this.prog.length;
          } else {
            this.compile(item);
          }
        }
        for (const j of jumps) this.at(j).x = this.prog.length;
        return;
      }
      case 'rep': {
        for (let k = 0; k < node.min; k++) this.compile(node.node);
        if (node.max === -1) {
          // L: split body, out; body; jmp L
          const split = this.emit({ op: Op.Split, x: 0, y: 0 });
          this.at(split).x = this.prog.length;
          this.compile(node.node);
          this.emit({ op: Op.Jmp, x: split, y: 0 });
          this.at(split).y = this.prog.length;
        } else {
          const splits: number[] = [];
          for (let k = node.min; k < node.max; k++) {
            const split = this.emit({ op: Op.Split, x: 0, y: 0 });
            this.at(split).x = this.prog.length;
            splits.push(split);
            this.compile(node.node);
          }
          for (const s of splits) this.at(s).y = this.prog.length;
        }
        return;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Pike VM

function isWordCode(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || (c >= 0x61 && c <= 0x7a)
  );
}

class ThreadList {
  readonly pcs: Int32Array;
  readonly starts: Int32Array;
  size = 0;
  constructor(n: number) {
    this.pcs = new Int32Array(n);
    this.starts = new Int32Array(n);
  }
}

class CompiledRegex implements SafeRegex {
  private readonly ci: boolean;
  private readonly multiline: boolean;
  private readonly dotAll: boolean;

  constructor(
    readonly source: string,
    readonly flags: string,
    private readonly prog: Inst[],
  ) {
    this.ci = flags.includes('i');
    this.multiline = flags.includes('m');
    this.dotAll = flags.includes('s');
  }

  test(text: string, budget?: RegexBudget): boolean {
    return this.findAll(text, 1, budget).length > 0;
  }

  findAll(text: string, limit = 50, shared?: RegexBudget): RegexMatch[] {
    const out: RegexMatch[] = [];
    const allowed = Math.min(SAFE_REGEX_LIMITS.stepBudget, shared?.steps ?? Infinity);
    const budget = { steps: allowed };
    let from = 0;
    while (from <= text.length && out.length < limit && budget.steps > 0) {
      const m = this.findFrom(text, from, budget);
      if (!m) break;
      out.push(m);
      from = m.end > m.start ? m.end : m.end + 1;
    }
    if (shared) shared.steps -= allowed - budget.steps;
    return out;
  }

  private assertHolds(kind: Inst['kind'], text: string, pos: number): boolean {
    const n = text.length;
    switch (kind) {
      case 'bol':
        return pos === 0 || (this.multiline && text.charCodeAt(pos - 1) === 0x0a);
      case 'eol':
        return pos === n || (this.multiline && text.charCodeAt(pos) === 0x0a);
      case 'wordb':
      case 'nwordb': {
        const a = pos > 0 && isWordCode(text.charCodeAt(pos - 1));
        const b = pos < n && isWordCode(text.charCodeAt(pos));
        return (a !== b) === (kind === 'wordb');
      }
      default:
        return false;
    }
  }

  private findFrom(text: string, from: number, budget: { steps: number }): RegexMatch | null {
    const prog = this.prog;
    const size = prog.length + 1;
    let clist = new ThreadList(size);
    let nlist = new ThreadList(size);
    const mark = new Int32Array(size).fill(-1);
    const stack = new Int32Array(size * 2 + 2);
    let generation = 0;
    let bestStart = -1;
    let bestEnd = -1;
    const n = text.length;

    const add = (list: ThreadList, pc0: number, pos: number, start: number): void => {
      let sp = 0;
      stack[sp++] = pc0;
      while (sp > 0) {
        const pc = stack[--sp] ?? 0;
        if (mark[pc] === generation) continue;
        mark[pc] = generation;
        budget.steps--;
        const inst = prog[pc];
        if (!inst) {
          // pc === prog.length: the match state
          list.pcs[list.size] = pc;
          list.starts[list.size++] = start;
          continue;
        }
        switch (inst.op) {
          case Op.Jmp:
            stack[sp++] = inst.x;
            break;
          case Op.Split:
            stack[sp++] = inst.y;
            stack[sp++] = inst.x;
            break;
          case Op.Assert:
            if (this.assertHolds(inst.kind, text, pos)) stack[sp++] = pc + 1;
            break;
          default:
            list.pcs[list.size] = pc;
            list.starts[list.size++] = start;
        }
      }
    };

    for (let i = from; i <= n; i++) {
      if (budget.steps <= 0) break;
      // Closure at position i: existing threads were added while stepping from i-1 with
      // generation `i`; the new start thread joins the same generation with lower priority.
      if (bestStart < 0) add(clist, 0, i, i);
      generation++;
      if (clist.size === 0) {
        if (bestStart >= 0) break;
        continue; // the start thread died on an assertion: try the next position
      }
      const c = i < n ? text.charCodeAt(i) : -1;
      for (let k = 0; k < clist.size; k++) {
        const pc = clist.pcs[k] ?? 0;
        const start = clist.starts[k] ?? 0;
        if (bestStart >= 0 && start > bestStart) continue;
        const inst = prog[pc];
        if (!inst) {
          if (bestStart < 0 || start < bestStart || (start === bestStart && i > bestEnd)) {
            bestStart = start;
            bestEnd = i;
          }
          continue;
        }
        if (c < 0) continue;
        budget.steps--;
        let ok: boolean;
        if (inst.op === Op.Any)
          ok = this.dotAll || (c !== 0x0a && c !== 0x0d && c !== 0x2028 && c !== 0x2029);
        else ok = inst.set !== undefined && setMatches(inst.set, c, this.ci);
        if (ok) add(nlist, pc + 1, i + 1, start);
      }
      const t = clist;
      clist = nlist;
      nlist = t;
      nlist.size = 0;
    }
    return bestStart >= 0 ? { start: bestStart, end: bestEnd } : null;
  }
}

export function compileSafeRegex(pattern: string, flags = ''): SafeRegex {
  if (pattern.length > SAFE_REGEX_LIMITS.maxPatternLength) {
    throw new SafeRegexError(
      `pattern longer than ${SAFE_REGEX_LIMITS.maxPatternLength} characters`,
    );
  }
  if (/[^gimsuy]/.test(flags)) throw new SafeRegexError(`unsupported flags "${flags}"`);
  const ast = new Parser(pattern).parse();
  const compiler = new Compiler();
  compiler.compile(ast);
  return new CompiledRegex(pattern, flags, compiler.prog);
}

/** Compile or explain why not, for validation messages. */
export function checkSafeRegex(pattern: string, flags = ''): string | null {
  try {
    compileSafeRegex(pattern, flags);
    return null;
  } catch (e) {
    return e instanceof SafeRegexError ? e.message : String(e);
  }
}
