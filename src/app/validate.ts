// Checks for every value a person can enter, in a field or a URL parameter.
// Each returns the parsed value or a reason written for the person, shown
// beside the field; a run never starts with a value that failed.

import { ECHO_MODES, type EchoMode } from '../pipeline/api.js';
import { EVAL_MODES, type EvalMode } from '../train/trainer.js';
import { MODEL_INPUT_SIDE } from '../pcr/manifest.js';

export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const bad = <T>(reason: string): Checked<T> => ({ ok: false, reason });

/** Limits of the lab's numeric controls. */
const LIMITS = {
  batchSize: { min: 1, max: 1024 },
  echoFactor: { min: 1, max: 16 },
  learningRate: { min: 1e-6, max: 1 },
  evalEvery: { min: 1, max: 100_000 },
  scanGroup: { min: 1, max: 64 },
  seed: { min: 0, max: 2 ** 32 - 1 },
  cacheLimitMb: { min: 0, max: 65_536 },
  shuffleBuffer: { min: 1, max: 65_536 },
  readers: { min: 1, max: 16 },
  requestsInFlight: { min: 1, max: 16 },
  shares: { min: 1, max: 1024 },
  imageSide: MODEL_INPUT_SIDE,
} as const;

/** A plain decimal number: no hex, no blanks, no "1e" halves, nothing after it. */
function parseNumber(text: string): number | undefined {
  const t = text.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

function integerIn(text: string, what: string, { min, max }: { min: number; max: number }): Checked<number> {
  const n = parseNumber(text);
  if (n === undefined || !Number.isInteger(n) || n < min || n > max)
    return bad(`${what} must be a whole number from ${min} to ${max}${text.trim() ? `, not "${text.trim()}"` : ''}`);
  return ok(n);
}

function numberIn(text: string, what: string, { min, max }: { min: number; max: number }): Checked<number> {
  const n = parseNumber(text);
  if (n === undefined || n < min || n > max) return bad(`${what} must be a number from ${min} to ${max}${text.trim() ? `, not "${text.trim()}"` : ''}`);
  return ok(n);
}

export const checkBatchSize = (text: string) => integerIn(text, 'batch size', LIMITS.batchSize);
export const checkEchoFactor = (text: string) => numberIn(text, 'echo factor', LIMITS.echoFactor);
export const checkLearningRate = (text: string) => numberIn(text, 'learning rate', LIMITS.learningRate);
export const checkEvalEvery = (text: string) => integerIn(text, 'evaluation interval', LIMITS.evalEvery);
export const checkSeed = (text: string) => integerIn(text, 'seed', LIMITS.seed);
export const checkCacheLimit = (text: string) => integerIn(text, 'cache size (MiB)', LIMITS.cacheLimitMb);
export const checkShuffleBuffer = (text: string) => integerIn(text, 'shuffle buffer', LIMITS.shuffleBuffer);
export const checkReaders = (text: string) => integerIn(text, 'readers', LIMITS.readers);
export const checkRequestsInFlight = (text: string) => integerIn(text, 'reads in flight', LIMITS.requestsInFlight);

/** The model's input size for an image dataset: "32" (square) or "64x48" (width x height), each side 8 to 1024 pixels. */
export function checkImageSize(text: string): Checked<{ width: number; height: number }> {
  const t = text.trim();
  const m = /^(\d+)(?:x(\d+))?$/.exec(t);
  const { min, max } = LIMITS.imageSide;
  const [width, height] = m ? [Number(m[1]), Number(m[2] ?? m[1])] : [NaN, NaN];
  if (!(width >= min && width <= max && height >= min && height <= max))
    return bad(`image size must be a side or width x height (like 32 or 64x48), each ${min} to ${max} pixels${t ? `, not "${t}"` : ''}`);
  return ok({ width, height });
}

/**
 * This tab's share of the training records when several tabs or machines train on one dataset: "i/n", the i-th of n
 * (1-based), each reading disjoint records (docs/pipeline.md, "Readers"). Returned 0-based, as a pipeline partition.
 */
export function checkShare(text: string): Checked<{ rank: number; count: number }> {
  const t = text.trim();
  const m = /^(\d+)\/(\d+)$/.exec(t);
  const [i, n] = m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
  if (!(n >= 1 && n <= LIMITS.shares.max && i >= 1 && i <= n))
    return bad(`share must be i/n, the i-th of n shares (1 <= i <= n <= ${LIMITS.shares.max}), like 1/2${t ? `, not "${t}"` : ''}`);
  return ok({ rank: i - 1, count: n });
}

/** A value from a fixed list (a select's options, or its URL parameter). */
const oneOf =
  <T extends string>(values: readonly T[], what: string) =>
  (text: string): Checked<T> =>
    (values as readonly string[]).includes(text) ? ok(text as T) : bad(`${what} must be one of ${values.join(', ')}, not "${text}"`);

export const checkEchoMode = oneOf<EchoMode>(ECHO_MODES, 'echo mode');
export const checkEvalMode = oneOf<EvalMode>(EVAL_MODES, 'evaluation mode');

export function checkScanGroup(text: string, groups: number = LIMITS.scanGroup.max): Checked<number> {
  return integerIn(text, 'scan group', { min: 1, max: groups });
}

/**
 * A manifest URL as typed: empty means "use the dataset list"; otherwise an
 * http(s) URL, absolute or relative to the page, resolved to absolute.
 */
export function checkManifestUrl(text: string, page: string): Checked<string | undefined> {
  const t = text.trim();
  if (!t) return ok(undefined);
  let url: URL;
  try {
    url = new URL(t, page);
  } catch {
    return bad(`"${t}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return bad(`manifest URL must be http or https, not ${url.protocol.replace(':', '')}`);
  // Chrome blocks it as mixed content, failing as an unreachable server would; loopback hosts are trustworthy and exempt.
  if (new URL(page).protocol === 'https:' && url.protocol === 'http:' && !LOOPBACK.test(url.hostname)) {
    return bad(`an https page cannot read an http manifest (mixed content): serve the dataset over https`);
  }
  // A fetch to such a port fails at once, as an unreachable server's does: without this the page would wait for it forever.
  if (url.port && BAD_PORTS.has(Number(url.port)))
    return bad(`port ${url.port} is one browsers never fetch from (a "bad port" of the Fetch standard): serve the dataset on another`);
  return ok(url.href);
}

const LOOPBACK = /^(localhost|.*\.localhost|127(\.\d+){3}|\[::1\])$/;

/** The Fetch standard's bad ports (https://fetch.spec.whatwg.org/#bad-port), which Chrome blocks for http and https. */
const BAD_PORTS = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137,
  139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** URL parameters the page reads; any other is reported, so a typo is not silently ignored. */
const URL_PARAMS = [
  'dataset',
  'manifest',
  'model',
  'batch',
  'group',
  'echo',
  'lr',
  'evalEvery',
  'evalMode',
  'seed',
  'cache',
  'shuffle',
  'echoMode',
  'autoEcho',
  'readers',
  'inflight',
  'share',
  'size',
  'autostart',
] as const;

/** A sweep: what varies, its values (comma-separated, at most 8, each checked as its own field is), and the steps each run trains. */
export function checkSweep(kind: string, values: string, steps: string, groups: number): Checked<{ kind: 'group' | 'echo'; values: number[]; steps: number }> {
  if (kind !== 'group' && kind !== 'echo') return bad(`a sweep varies the scan group or the echo factor, not "${kind}"`);
  const parts = values.trim() ? values.split(',').map((v) => v.trim()) : [];
  if (parts.length < 1 || parts.length > 8) return bad(`a sweep takes 1 to 8 values, comma-separated, not "${values.trim()}"`);
  // "1,,2" or "6,": a value left out, not a value to skip silently.
  if (parts.includes('')) return bad(`a sweep's values are numbers between commas; "${values.trim()}" has an empty one`);
  const out: number[] = [];
  for (const part of parts) {
    const r = kind === 'group' ? checkScanGroup(part, groups) : checkEchoFactor(part);
    if (!r.ok) return r;
    out.push(r.value);
  }
  const n = integerIn(steps, 'steps per run', LIMITS.evalEvery);
  if (!n.ok) return n;
  return ok({ kind, values: out, steps: n.value });
}

export function unknownParams(params: URLSearchParams): string[] {
  return [...new Set(params.keys())].filter((k) => !(URL_PARAMS as readonly string[]).includes(k));
}

/** Names a person may guess for a parameter, from the page's words for its control. */
const PARAM_GUESSES: Record<string, (typeof URL_PARAMS)[number]> = {
  fidelity: 'group',
  scan: 'group',
  scangroup: 'group',
  learningrate: 'lr',
  rate: 'lr',
  batchsize: 'batch',
  echofactor: 'echo',
  data: 'dataset',
  url: 'manifest',
  shufflebuffer: 'shuffle',
};

/**
 * Restricted Damerau-Levenshtein (optimal string alignment) distance: letters inserted, deleted, changed, or two side by
 * side swapped, each 1 ("modle" is 1 from "model").
 */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The parameter a misspelt name is closest to: within 1 edit where either name has at most 4 letters (2 edits would make
 * "seed" of "size"), else 2; matched against the parameters and the longer guesses ("fidelty"), not the short ones ("date"
 * is not "rate"). Of two as close, the first in the README's order ("shafle" is 2 from shuffle and from share: shuffle).
 */
function closestParam(key: string): string | undefined {
  const words: [string, string][] = [
    ...URL_PARAMS.map((p): [string, string] => [p.toLowerCase(), p]),
    ...Object.entries(PARAM_GUESSES).filter(([w]) => w.length > 4),
  ];
  let best: { d: number; param: string } | undefined;
  for (const [word, param] of words) {
    const d = editDistance(key, word);
    if (d <= (Math.min(key.length, word.length) <= 4 ? 1 : 2) && d < (best?.d ?? Infinity)) best = { d, param };
  }
  return best?.param;
}

/** What the page says of a parameter it does not read: ignored, and the one meant where it can tell (a case slip, the control's name, a typo). */
export function unknownParamMessage(name: string): string {
  const key = name.toLowerCase().replace(/[-_\s]/g, '');
  const meant = URL_PARAMS.find((p) => p.toLowerCase() === key) ?? PARAM_GUESSES[key] ?? closestParam(key);
  const hint = meant ? `; did you mean ${meant}=?` : ' (the README lists those it reads)';
  return `URL parameter "${name}" is not one the lab reads: ignored${hint}`;
}

/** Parameters the URL gives more than once, with their values: the page reads the first. */
export function repeatedParams(params: URLSearchParams): [name: string, values: string[]][] {
  return [...new Set(params.keys())].map((k) => [k, params.getAll(k)] as [string, string[]]).filter(([, values]) => values.length > 1);
}

/** A flag parameter (autoEcho, autostart): on when present bare or as 1/true/on, off as 0/false/off. */
export function checkFlag(name: string, text: string): Checked<boolean> {
  const t = text.trim().toLowerCase();
  if (['', '1', 'true', 'on', 'yes'].includes(t)) return ok(true);
  if (['0', 'false', 'off', 'no'].includes(t)) return ok(false);
  return bad(`${name} is on when present (or 1, true), off when absent (or 0, false), not "${text}"`);
}
