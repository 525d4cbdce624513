// Tabular sources (CSV, Parquet) for TOC datasets: raw typed columns, the label
// specification, and the feature derivations that turn a row into sparse
// column:value pairs (one-hot, min-max, hour of day, weekday, quantile buckets).
// Spec: docs/toc.md, "Dataset files".
import { Fnv1a } from '../../shared/hash.js';
import { seededRandom } from '../../shared/random.js';

/** A column as read from the source. Missing values: NaN (numbers, times) or code -1 (strings). */
export type RawColumn =
  | { name: string; kind: 'number'; values: Float64Array }
  /** Milliseconds since 1970-01-01 of the wall-clock time, read with UTC getters. */
  | { name: string; kind: 'time'; values: Float64Array }
  /** codes[r] indexes levels (first-appearance order); -1 = missing. */
  | { name: string; kind: 'string'; codes: Int32Array; levels: string[] };

export interface RawTable {
  rows: number;
  columns: RawColumn[];
}

/** Interns strings to dense codes in first-appearance order. */
export class CategoryBuilder {
  readonly levels: string[] = [];
  private readonly ids = new Map<string, number>();

  codeOf(value: string): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.levels.length;
      this.ids.set(value, id);
      this.levels.push(value);
    }
    return id;
  }
}

function columnOf(table: RawTable, name: string): RawColumn {
  const column = table.columns.find((c) => c.name === name);
  if (!column) throw new Error(`no column "${name}" (columns: ${table.columns.map((c) => c.name).join(', ')})`);
  return column;
}

// ------------------------------------------------------------------ labels

export type LabelSpec = { kind: 'column'; column: string } | { kind: 'compare'; column: string; op: CompareOp; value: number; text: string };
type CompareOp = '>' | '>=' | '<' | '<=' | '==' | '!=';
const NEGATED: Record<CompareOp, CompareOp> = { '>': '<=', '>=': '<', '<': '>=', '<=': '>', '==': '!=', '!=': '==' };

/**
 * `COLUMN` (its distinct values become the classes) or `COLUMN OP NUMBER` with OP
 * one of > >= < <= == != (a binary label: classes ["COLUMN NOT-OP NUMBER", "COLUMN OP NUMBER"]).
 * A name that is itself a column wins over the comparison reading.
 */
export function parseLabel(text: string, columnNames: readonly string[]): LabelSpec {
  if (columnNames.includes(text)) return { kind: 'column', column: text };
  const m = /^(.+?)\s*(>=|<=|==|!=|>|<)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)$/.exec(text.trim());
  if (m && columnNames.includes(m[1]!.trim())) {
    const column = m[1]!.trim();
    const op = m[2] as CompareOp;
    return { kind: 'compare', column, op, value: Number(m[3]), text: `${column}${op}${m[3]}` };
  }
  throw new Error(`--label "${text}": not a column nor COLUMN OP NUMBER (columns: ${columnNames.join(', ')})`);
}

export interface Labels {
  classes: string[];
  /** Class of each row, -1 when the label is missing (the row is dropped). */
  of: Int32Array;
}

export function computeLabels(table: RawTable, spec: LabelSpec): Labels {
  const column = columnOf(table, spec.column);
  const of = new Int32Array(table.rows).fill(-1);
  if (spec.kind === 'compare') {
    if (column.kind === 'string') throw new Error(`--label ${spec.text}: column "${spec.column}" is not numeric`);
    const test = compare(spec.op, spec.value);
    for (let r = 0; r < table.rows; r++) {
      const v = column.values[r]!;
      if (!Number.isNaN(v)) of[r] = test(v) ? 1 : 0;
    }
    return { classes: [`${spec.column}${NEGATED[spec.op]}${spec.value}`, spec.text], of };
  }
  if (column.kind === 'string') {
    const sorted = column.levels.map((level, code) => ({ level, code })).sort((a, b) => compareStrings(a.level, b.level));
    const remap = new Int32Array(column.levels.length);
    sorted.forEach(({ code }, i) => (remap[code] = i));
    for (let r = 0; r < table.rows; r++) if (column.codes[r]! >= 0) of[r] = remap[column.codes[r]!]!;
    return { classes: sorted.map((s) => s.level), of };
  }
  const distinct = sortedDistinct(column.values);
  const index = new Map(Array.from(distinct, (v, i) => [v, i]));
  for (let r = 0; r < table.rows; r++) {
    const v = column.values[r]!;
    if (!Number.isNaN(v)) of[r] = index.get(v)!;
  }
  return { classes: Array.from(distinct, (v) => String(v)), of };
}

function compare(op: CompareOp, x: number): (v: number) => boolean {
  switch (op) {
    case '>':
      return (v) => v > x;
    case '>=':
      return (v) => v >= x;
    case '<':
      return (v) => v < x;
    case '<=':
      return (v) => v <= x;
    case '==':
      return (v) => v === x;
    case '!=':
      return (v) => v !== x;
  }
}

/** Code-unit order, so the class order does not depend on the locale. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedDistinct(values: Float64Array): Float64Array {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort();
  let n = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[n - 1]) sorted[n++] = sorted[i]!;
  return sorted.slice(0, n);
}

// ------------------------------------------------------------------ features

export type DerivationKind = 'auto' | 'onehot' | 'minmax' | 'hour' | 'weekday' | 'bucket';

export interface Derivation {
  kind: DerivationKind;
  column: string;
  /** Number of quantile buckets (bucket only). */
  buckets?: number;
}

/** A block of consecutive feature columns; each row puts at most `width` pairs in it. */
interface Block {
  names: string[];
  describe: string;
  /** Appends the row's pairs (columns relative to the block) in increasing order. */
  emit(row: number, cols: number[], vals: number[]): void;
}

export interface FeaturePlan {
  columns: number;
  names: string[];
  /** One line per derivation, for the manifest's description and the log. */
  summary: string[];
  /**
   * The row's non-zero pairs, columns strictly increasing, values float32-exact
   * (cols and vals are cleared first). Returns the number of pairs.
   */
  rowPairs(row: number, cols: number[], vals: number[]): number;
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const DAY_MS = 86_400_000;

/**
 * Derivations in the given order; then every other column (but `exclude`) with
 * 'auto': numbers and times min-max scaled, strings one-hot.
 */
export function planFeatures(table: RawTable, derivations: Derivation[], exclude: ReadonlySet<string>): FeaturePlan {
  const named = new Set(derivations.map((d) => d.column));
  const all = [...derivations];
  for (const c of table.columns) if (!named.has(c.name) && !exclude.has(c.name)) all.push({ kind: 'auto', column: c.name });
  const blocks = all.map((d) => makeBlock(columnOf(table, d.column), d));
  const offsets: number[] = [];
  let columns = 0;
  for (const b of blocks) {
    offsets.push(columns);
    columns += b.names.length;
  }
  if (columns === 0) throw new Error('no feature columns left');
  return {
    columns,
    names: blocks.flatMap((b) => b.names),
    summary: blocks.map((b) => b.describe),
    rowPairs(row, cols, vals) {
      cols.length = 0;
      vals.length = 0;
      for (let b = 0; b < blocks.length; b++) {
        const start = cols.length;
        blocks[b]!.emit(row, cols, vals);
        for (let k = start; k < cols.length; k++) cols[k]! += offsets[b]!;
      }
      return cols.length;
    },
  };
}

function makeBlock(column: RawColumn, d: Derivation): Block {
  const kind = d.kind === 'auto' ? (column.kind === 'string' ? 'onehot' : 'minmax') : d.kind;
  switch (kind) {
    case 'onehot':
      return oneHot(column);
    case 'minmax':
      return minMax(column);
    case 'hour':
    case 'weekday':
      return timePart(column, kind);
    case 'bucket':
      return buckets(column, d.buckets ?? 10);
    default:
      throw new Error(`unknown derivation ${kind}`);
  }
}

function oneHot(column: RawColumn): Block {
  const { name } = column;
  if (column.kind === 'string') {
    const order = column.levels.map((level, code) => ({ level, code })).sort((a, b) => compareStrings(a.level, b.level));
    const remap = new Int32Array(column.levels.length);
    order.forEach(({ code }, i) => (remap[code] = i));
    return {
      names: order.map((o) => `${name}=${o.level}`),
      describe: `${name}: one-hot, ${order.length} values`,
      emit(row, cols, vals) {
        const code = column.codes[row]!;
        if (code >= 0) {
          cols.push(remap[code]!);
          vals.push(1);
        }
      },
    };
  }
  const distinct = sortedDistinct(column.values);
  const index = new Map(Array.from(distinct, (v, i) => [v, i]));
  return {
    names: Array.from(distinct, (v) => `${name}=${v}`),
    describe: `${name}: one-hot, ${distinct.length} values`,
    emit(row, cols, vals) {
      const v = column.values[row]!;
      if (!Number.isNaN(v)) {
        cols.push(index.get(v)!);
        vals.push(1);
      }
    },
  };
}

function minMax(column: RawColumn): Block {
  if (column.kind === 'string') throw new Error(`column "${column.name}" is not numeric; cannot min-max scale it`);
  let min = Infinity;
  let max = -Infinity;
  for (const v of column.values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const range = max - min;
  const values = column.values;
  return {
    names: [column.name],
    describe: `${column.name}: min-max scaled from [${min}, ${max}] to [0, 1], missing -> 0`,
    emit(row, cols, vals) {
      const v = values[row]!;
      if (Number.isNaN(v) || !(range > 0)) return;
      const scaled = Math.fround((v - min) / range);
      if (scaled !== 0) {
        cols.push(0);
        vals.push(scaled);
      }
    },
  };
}

/** Milliseconds of each row (times as they are; strings parsed as ISO dates, per level). */
function timesOf(column: RawColumn): (row: number) => number {
  if (column.kind === 'time') return (row) => column.values[row]!;
  if (column.kind === 'number') throw new Error(`column "${column.name}" holds numbers, not dates or times`);
  const ms = column.levels.map((level) => {
    const t = parseDateTime(level);
    if (Number.isNaN(t)) throw new Error(`column "${column.name}": "${level}" is not a date (YYYY-MM-DD[ HH:MM[:SS]])`);
    return t;
  });
  return (row) => (column.codes[row]! < 0 ? NaN : ms[column.codes[row]!]!);
}

/** YYYY-MM-DD[(T| )HH:MM[:SS]] as wall-clock milliseconds (no time zone is applied). */
export function parseDateTime(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(text.trim());
  if (!m) return NaN;
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0));
}

function timePart(column: RawColumn, part: 'hour' | 'weekday'): Block {
  const time = timesOf(column);
  const { name } = column;
  if (part === 'hour') {
    return {
      names: Array.from({ length: 24 }, (_, h) => `${name}:hour=${String(h).padStart(2, '0')}`),
      describe: `${name}: hour of day, one-hot (24)`,
      emit(row, cols, vals) {
        const t = time(row);
        if (Number.isNaN(t)) return;
        cols.push(Math.floor((((t % DAY_MS) + DAY_MS) % DAY_MS) / 3_600_000));
        vals.push(1);
      },
    };
  }
  return {
    names: WEEKDAYS.map((d) => `${name}:weekday=${d}`),
    describe: `${name}: day of week, one-hot (7, Sun..Sat)`,
    emit(row, cols, vals) {
      const t = time(row);
      if (Number.isNaN(t)) return;
      cols.push((((Math.floor(t / DAY_MS) + 4) % 7) + 7) % 7); // 1970-01-01 was a Thursday
      vals.push(1);
    },
  };
}

/**
 * Quantile buckets: thresholds at the k-quantiles of the non-missing values
 * (duplicates merged, so heavy ties give fewer buckets); bucket i holds
 * thresholds[i-1] <= v < thresholds[i]. One-hot; missing -> no bucket.
 */
function buckets(column: RawColumn, k: number): Block {
  if (column.kind === 'string') throw new Error(`column "${column.name}" is not numeric; cannot bucket it`);
  const sorted = column.values.filter((v) => !Number.isNaN(v)).sort();
  if (sorted.length === 0) throw new Error(`column "${column.name}" has no values to bucket`);
  const thresholds: number[] = [];
  for (let i = 1; i < k; i++) {
    const t = sorted[Math.floor((i * sorted.length) / k)]!;
    if (t > sorted[0]! && t !== thresholds[thresholds.length - 1]) thresholds.push(t);
  }
  const edges = [sorted[0]!, ...thresholds, sorted[sorted.length - 1]!];
  const names = thresholds.concat(Infinity).map((_, i) => `${column.name}=[${edges[i]},${edges[i + 1]}${i === thresholds.length ? ']' : ')'}`);
  const values = column.values;
  return {
    names,
    describe: `${column.name}: ${names.length} quantile buckets, one-hot, edges ${edges.join(' ')}`,
    emit(row, cols, vals) {
      const v = values[row]!;
      if (Number.isNaN(v)) return;
      let lo = 0;
      let hi = thresholds.length; // first threshold > v
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (thresholds[mid]! <= v) lo = mid + 1;
        else hi = mid;
      }
      cols.push(lo);
      vals.push(1);
    },
  };
}

// ------------------------------------------------------------------ rows

const hashF64 = new Float64Array(1);
const hashU32 = new Uint32Array(hashF64.buffer);

/** FNV-1a over the row's values: the same row always lands in the same split. */
export function rowHash(table: RawTable, row: number): number {
  const h = new Fnv1a();
  for (const c of table.columns) {
    if (c.kind === 'string') {
      const code = c.codes[row]!;
      const s = code < 0 ? '\u0000missing' : c.levels[code]!;
      for (let i = 0; i < s.length; i++) h.u32(s.charCodeAt(i));
      h.u32(0xffff);
    } else {
      hashF64[0] = c.values[row]!;
      h.u32(hashU32[0]!).u32(hashU32[1]!);
    }
  }
  return h.value;
}

/** Row order: 0..n-1, or a seeded Fisher-Yates permutation of it. */
export function rowOrder(n: number, seed: number | undefined, random?: () => number): Uint32Array {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  if (seed === undefined) return order;
  const next = random ?? seededRandom(seed);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  return order;
}
