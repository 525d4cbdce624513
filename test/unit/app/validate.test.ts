import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  checkBatchSize,
  checkEchoFactor,
  checkEvalEvery,
  checkImageSize,
  checkLearningRate,
  checkManifestUrl,
  checkRequestsInFlight,
  checkShare,
  checkScanGroup,
  checkSeed,
  checkEvalMode,
  repeatedParams,
  unknownParamMessage,
  unknownParams,
  checkFlag,
} from '../../../src/app/validate.js';

const reason = (r: { ok: boolean; reason?: string }) => (r.ok ? undefined : r.reason);

describe('field checks', () => {
  it('batch size: whole numbers 1..1024', () => {
    expect(checkBatchSize('32')).toEqual({ ok: true, value: 32 });
    for (const bad of ['0', '100000', '-1', '2.5', 'abc', '', ' ', '0x10', '1e']) expect(checkBatchSize(bad).ok, bad).toBe(false);
    expect(reason(checkBatchSize('0'))).toBe('batch size must be a whole number from 1 to 1024, not "0"');
  });

  it('echo factor: 1..16, fractions allowed', () => {
    expect(checkEchoFactor('1.5')).toEqual({ ok: true, value: 1.5 });
    for (const bad of ['0', '0.5', '1000', '17', 'NaN', 'Infinity', '']) expect(checkEchoFactor(bad).ok, bad).toBe(false);
  });

  it('learning rate: a positive number up to 1', () => {
    expect(checkLearningRate('0.005')).toEqual({ ok: true, value: 0.005 });
    expect(checkLearningRate('1e-3')).toEqual({ ok: true, value: 0.001 });
    for (const bad of ['abc', '0', '-0.1', '2', '', '0.1.2']) expect(checkLearningRate(bad).ok, bad).toBe(false);
    expect(reason(checkLearningRate('abc'))).toContain('learning rate must be a number');
  });

  it('evaluation interval, seed and scan group', () => {
    expect(checkEvalEvery('50').ok).toBe(true);
    expect(checkEvalEvery('0').ok).toBe(false);
    expect(checkSeed('0').ok).toBe(true);
    expect(checkSeed('-1').ok).toBe(false);
    expect(checkSeed('x').ok).toBe(false);
    expect(checkScanGroup('3', 6)).toEqual({ ok: true, value: 3 });
    expect(reason(checkScanGroup('99', 6))).toBe('scan group must be a whole number from 1 to 6, not "99"');
  });

  it('reads in flight: whole numbers 1..16', () => {
    expect(checkRequestsInFlight('8')).toEqual({ ok: true, value: 8 });
    for (const bad of ['0', '17', '2.5', 'many', '']) expect(checkRequestsInFlight(bad).ok, bad).toBe(false);
    expect(reason(checkRequestsInFlight('0'))).toBe('reads in flight must be a whole number from 1 to 16, not "0"');
  });

  it('share: i/n, 1 <= i <= n <= 1024, given back 0-based', () => {
    expect(checkShare('2/3')).toEqual({ ok: true, value: { rank: 1, count: 3 } });
    expect(checkShare('1/1')).toEqual({ ok: true, value: { rank: 0, count: 1 } });
    for (const bad of ['0/2', '3/2', '1/0', '1/2000', '1', 'half', '', '1/2/3', '-1/2']) expect(checkShare(bad).ok, bad).toBe(false);
    expect(reason(checkShare('3/2'))).toBe('share must be i/n, the i-th of n shares (1 <= i <= n <= 1024), like 1/2, not "3/2"');
  });

  it('evaluation mode: live or deferred', () => {
    expect(checkEvalMode('live')).toEqual({ ok: true, value: 'live' });
    expect(checkEvalMode('deferred')).toEqual({ ok: true, value: 'deferred' });
    expect(reason(checkEvalMode('later'))).toBe('evaluation mode must be one of live, deferred, not "later"');
  });

  it('image size: a side or width x height, 8 to 1024 pixels each', () => {
    expect(checkImageSize('32')).toEqual({ ok: true, value: { width: 32, height: 32 } });
    expect(checkImageSize(' 64x48 ')).toEqual({ ok: true, value: { width: 64, height: 48 } });
    for (const bad of ['', '7', '2048', '32x', 'x32', '32x4', '32 x 32', '32X32', '3.5', '-32', '0x20', 'abc']) expect(checkImageSize(bad).ok, bad).toBe(false);
    expect(reason(checkImageSize('4'))).toBe('image size must be a side or width x height (like 32 or 64x48), each 8 to 1024 pixels, not "4"');
  });

  it('manifest URL: empty, or http(s) resolved against the page', () => {
    const page = 'http://localhost:5173/?a=1';
    expect(checkManifestUrl('', page)).toEqual({ ok: true, value: undefined });
    expect(checkManifestUrl('data/x/manifest.json', page)).toEqual({ ok: true, value: 'http://localhost:5173/data/x/manifest.json' });
    expect(reason(checkManifestUrl('ftp://host/manifest.json', page))).toBe('manifest URL must be http or https, not ftp');
    expect(checkManifestUrl('http://[bad', page).ok).toBe(false);
    // Ports browsers refuse to fetch from are named at once, not retried as a server that is down.
    expect(reason(checkManifestUrl('http://127.0.0.1:1/manifest.json', page))).toBe(
      'port 1 is one browsers never fetch from (a "bad port" of the Fetch standard): serve the dataset on another',
    );
    expect(checkManifestUrl('http://127.0.0.1:6000/m.json', page).ok).toBe(false);
    expect(checkManifestUrl('https://host:443/m.json', page).ok).toBe(true); // the scheme's own port: URL drops it
    expect(checkManifestUrl('http://host:8080/m.json', page).ok).toBe(true);
    // A lab served over https reads no http manifest but a loopback one (Chrome's mixed-content rule).
    const secure = 'https://lab.example/';
    expect(reason(checkManifestUrl('http://data.example/m.json', secure))).toBe(
      'an https page cannot read an http manifest (mixed content): serve the dataset over https',
    );
    for (const host of ['localhost:8080', '127.0.0.1', 'data.localhost', '[::1]:9000']) expect(checkManifestUrl(`http://${host}/m.json`, secure).ok).toBe(true);
    expect(checkManifestUrl('https://data.example/m.json', secure).ok).toBe(true);
  });

  it('names URL parameters the lab does not read', () => {
    expect(unknownParams(new URLSearchParams('model=mlp&bach=3&autostart'))).toEqual(['bach']);
    // The page names the parameter meant where it can tell: the control's own word, or a slip of case.
    expect(unknownParamMessage('fidelity')).toBe('URL parameter "fidelity" is not one the lab reads: ignored; did you mean group=?');
    expect(unknownParamMessage('evalevery')).toContain('did you mean evalEvery=?');
    expect(unknownParamMessage('batch_size')).toContain('did you mean batch=?');
    expect(unknownParamMessage('utm_source')).toBe('URL parameter "utm_source" is not one the lab reads: ignored (the README lists those it reads)');
  });

  it('names the parameter a typo meant: letters swapped, missing, extra or wrong, 1 of them in a short name, 2 in a longer one', () => {
    // ?dataset=birdstrikes&modle=svm only said "ignored (the README lists those it reads)".
    expect(unknownParamMessage('modle')).toBe('URL parameter "modle" is not one the lab reads: ignored; did you mean model=?');
    const meant: [string, string][] = [
      ['Modle', 'model'],
      ['bach', 'batch'],
      ['sed', 'seed'],
      ['lx', 'lr'],
      ['grup', 'group'],
      ['cahce', 'cache'],
      ['shuffel', 'shuffle'],
      ['evalevry', 'evalEvery'],
      ['eval_mod', 'evalMode'],
      ['autostrat', 'autostart'],
      ['inflihgt', 'inflight'],
      ['dataste', 'dataset'],
      ['manfest', 'manifest'],
      ['fidelty', 'group'], // a typo of the control's word
      ['learningrat', 'lr'],
    ];
    for (const [typed, param] of meant) expect(unknownParamMessage(typed), typed).toContain(`did you mean ${param}=?`);
    // Too far to tell: 2 edits in a short name ("grp", "seed" of "size"), a short guess word misspelt ("date" is not "rate").
    for (const typed of ['grp', 'x', 'page', 'set', 'date', 'cash', 'lrate'])
      expect(unknownParamMessage(typed), typed).toContain('(the README lists those it reads)');
  });

  it('names URL parameters given more than once, with their values', () => {
    expect(repeatedParams(new URLSearchParams('batch=32&echo=2&batch=64&echo=3&echo=2&seed=1'))).toEqual([
      ['batch', ['32', '64']],
      ['echo', ['2', '3', '2']],
    ]);
  });

  it('flags (autoEcho, autostart): on bare or as 1/true, off as 0/false (autostart=0 started a run), anything else refused', () => {
    for (const on of ['', '1', 'true', 'TRUE', 'on']) expect(checkFlag('autoEcho', on)).toEqual({ ok: true, value: true });
    for (const off of ['0', 'false', 'off']) expect(checkFlag('autostart', off)).toEqual({ ok: true, value: false });
    expect(checkFlag('autoEcho', 'maybe')).toEqual({
      ok: false,
      reason: 'autoEcho is on when present (or 1, true), off when absent (or 0, false), not "maybe"',
    });
  });

  it('knows every parameter the README documents', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const documented = [...readme.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]!);
    expect(documented.length).toBeGreaterThan(10);
    expect(unknownParams(new URLSearchParams(documented.map((p) => `${p}=1`).join('&')))).toEqual([]);
  });
});
