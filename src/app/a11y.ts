// What the page needs beyond its native controls to work with a screen reader:
// the fidelity slider's spoken value, the charts' text, and announcements of the run's state and of
// failures. The announcements watch the elements the page already writes (the
// state badge, the log, the WebGPU error), so main.ts only writes them as before.
import type { DatasetInfo } from '../pipeline/api.js';

/** The slider's aria-valuetext, e.g. "scan group 3 of 6, 333 bytes per image" (bytes once the dataset is open). */
export function fidelityValueText(group: number, groups: number, info?: Pick<DatasetInfo, 'kind' | 'bytesPerLevel' | 'examples'>): string {
  if (info?.kind === 'tabular') return `one fidelity: TOC is lossless, ${(info.bytesPerLevel[0]! / info.examples).toFixed(1)} bytes per row`;
  const bytes = info?.bytesPerLevel[group - 1];
  const perImage = bytes === undefined || !info?.examples ? '' : `, ${(bytes / info.examples).toFixed(0)} bytes per image`;
  return `scan group ${group} of ${groups}${perImage}`;
}

/** The element that says what is wrong with a field, placed after it, announced, and tied to it (aria-describedby). */
export function attachFieldError(input: HTMLInputElement): HTMLElement {
  const error = document.createElement('span');
  error.className = 'field-error';
  error.id = `${input.id}-error`;
  error.setAttribute('role', 'alert');
  input.setAttribute('aria-describedby', [input.getAttribute('aria-describedby'), error.id].filter(Boolean).join(' '));
  input.insertAdjacentElement('afterend', error);
  return error;
}

/** A screen reader gets a fresh chart summary at most this often: the data changes every frame. */
const SUMMARY_MS = 2000;

/**
 * How long a chart's new point waits to be summarised, given when its text was last written and whether that said "no data
 * yet": then at once (after the current burst: a continued run's history arrives all together), else within SUMMARY_MS.
 */
export function summaryDelay(summarisedAt: number, summarisedEmpty: boolean, now: number): number {
  return summarisedEmpty ? 0 : Math.max(0, summarisedAt + SUMMARY_MS - now);
}

/** A chart's text alternative: "training loss chart: step 1 to 120, latest 0.421", or that there is nothing yet. */
export function chartSummary(title: string, xLabel: string, xs: readonly number[], ys: readonly number[]): string {
  const n = xs.length;
  if (!n) return `${title} chart: no data yet`;
  return `${title} chart: ${xLabel} ${xs[0]} to ${xs[n - 1]}, latest ${Number(ys[n - 1]!.toPrecision(3))}`;
}

/** Writes `text` into a live region; a quick succession keeps only the newest, and the same text twice is spoken twice. */
function speaker(region: HTMLElement): (text: string) => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (text) => {
    clearTimeout(timer);
    region.textContent = '';
    // Screen readers speak a change of the region's text: empty it first, then fill it.
    timer = setTimeout(() => (region.textContent = text), 100);
  };
}

/**
 * Run states go to the polite region (not the flips between running and
 * evaluating every few steps, which would drown everything else); errors in the
 * log and the WebGPU error go to the assertive one.
 */
export function setupAnnouncements(els: { state: HTMLElement; log: HTMLElement; gpuError: HTMLElement; polite: HTMLElement; assertive: HTMLElement }): void {
  const say = speaker(els.polite);
  const alert = speaker(els.assertive);
  let previous = els.state.dataset.state ?? 'idle';
  new MutationObserver(() => {
    const state = els.state.dataset.state ?? 'idle';
    const from = previous;
    previous = state;
    if (state === from || state === 'idle' || state === 'failed') return; // a failure is announced from the log
    if (state === 'evaluating' || (state === 'running' && from === 'evaluating')) return;
    say(`run ${els.state.textContent ?? state}`);
  }).observe(els.state, { attributes: true, attributeFilter: ['data-state'] });

  new MutationObserver((records) => {
    const errors = records.flatMap((r) => [...r.addedNodes]).filter((n): n is HTMLElement => n instanceof HTMLElement && n.classList.contains('error'));
    if (errors.length) alert(errors.map((e) => e.textContent).join('. '));
  }).observe(els.log, { childList: true });

  new MutationObserver(() => {
    if (!els.gpuError.hidden && els.gpuError.textContent) alert(`WebGPU is unavailable: ${els.gpuError.textContent}`);
  }).observe(els.gpuError, { attributes: true, attributeFilter: ['hidden'], childList: true, characterData: true, subtree: true });
}
