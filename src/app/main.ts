// The page: wires controls, charts and the sample grid to one LabSession at a
// time. Every value a person enters (field or URL parameter) is checked where it
// is entered, and a run starts only when all of them are good. A run's events
// reach the screen only while that run is the current one.
// URL parameters: dataset, manifest, model, batch, group, echo, lr, evalEvery, evalMode, seed, cache, shuffle, echoMode, autoEcho, readers, inflight,
// share, size, autostart (README).
import './style.css';
import * as tf from '@tensorflow/tfjs';
import { adapterDescription, webgpuBackend } from '../gpu/backend.js';
import { kernelBufferCount } from '../gpu/tfjs-kernel.js';
import { DEFAULT_REQUESTS_IN_FLIGHT, type DatasetInfo, type EchoMode } from '../pipeline/api.js';
import { liveWorkerCount, startPipelineWorker } from '../pipeline/client.js';
import { isMissingLocal, localIdOf, localManifestUrl, LOCAL_PREFIX } from '../storage/local-datasets.js';
import type { Checkpoint } from '../train/checkpoint.js';
import type { ModelState, StepMetrics } from '../train/trainer.js';
import { MODELS, modelById, modelsFor } from '../train/models/registry.js';
import type { RunRecord } from '../train/run-record.js';
import { LIVE_STATES, type RunState } from '../train/run-state.js';
import { LabSession, STALL_MS, newRunId, type SessionListener } from '../train/session.js';
import { attachFieldError, fidelityValueText, setupAnnouncements } from './a11y.js';
import { setupBuildPanel } from './build-panel.js';
import { setupCachePanel } from './cache-panel.js';
import { holdRunLock } from './run-lock.js';
import { setupResumePanel } from './resume-panel.js';
import { setupRunsPanel } from './runs-panel.js';
import { setupSweepPanel, type SweepPanel } from './sweep-panel.js';
import { setupModelPanel } from './model-panel.js';
import { freshOptimizerState } from '../train/model-file.js';
import { setupMetricsView } from './metrics-view.js';
import { builtDataFolders, DATASETS, MANIFEST_READ_TIMEOUT_MS, probeDataset, probeOwnDataset, type DatasetProbe, type GroupCosts } from './datasets.js';
import { clearSamples, drawSamples } from './samples.js';
import { count } from './format.js';
import type { LabSnapshot } from './test-api.js';
import {
  checkBatchSize,
  checkFlag,
  checkEchoFactor,
  checkCacheLimit,
  checkEchoMode,
  checkReaders,
  checkRequestsInFlight,
  checkShuffleBuffer,
  checkEvalEvery,
  checkEvalMode,
  checkImageSize,
  checkShare,
  checkLearningRate,
  checkManifestUrl,
  checkScanGroup,
  checkSeed,
  repeatedParams,
  unknownParamMessage,
  unknownParams,
  type Checked,
} from './validate.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const params = new URLSearchParams(location.search);
/** autostart as the URL gives it: checked once, read as the page opens (start or not) and as the URL is written (kept or not). */
const autostartParam = params.has('autostart') ? checkFlag('autostart', params.get('autostart')!) : undefined;
/** Set once the URL's parameters are in their controls (the dataset list read): from then on the URL follows the controls, and Start may read them. */
let paramsApplied = false;

const ui = {
  backend: $('backend'),
  state: $('state'),
  gpuError: $('gpu-error'),
  paramError: $('param-error'),
  dataset: $<HTMLSelectElement>('dataset'),
  manifestUrl: $<HTMLInputElement>('manifest-url'),
  model: $<HTMLSelectElement>('model'),
  batchSize: $<HTMLInputElement>('batch-size'),
  learningRate: $<HTMLInputElement>('learning-rate'),
  evalEvery: $<HTMLInputElement>('eval-every'),
  evalMode: $<HTMLSelectElement>('eval-mode'),
  cacheLimit: $<HTMLInputElement>('cache-limit'),
  readers: $<HTMLInputElement>('readers'),
  requestsInFlight: $<HTMLInputElement>('requests-in-flight'),
  echoAuto: $<HTMLInputElement>('echo-auto'),
  echoMode: $<HTMLSelectElement>('echo-mode'),
  shuffleBuffer: $<HTMLInputElement>('shuffle-buffer'),
  echoUse: $<HTMLButtonElement>('echo-use'),
  cacheUsage: $('cache-usage'),
  cacheClear: $<HTMLButtonElement>('cache-clear'),
  cacheBusy: $('cache-busy'),
  start: $<HTMLButtonElement>('start'),
  pause: $<HTMLButtonElement>('pause'),
  stop: $<HTMLButtonElement>('stop'),
  startHint: $('start-hint'),
  fidelity: $<HTMLInputElement>('fidelity'),
  fidelityLabel: $('fidelity-label'),
  fidelityTable: $<HTMLTableElement>('fidelity-table'),
  echo: $<HTMLInputElement>('echo'),
  datasetInfo: $('dataset-info'),
  log: $<HTMLOListElement>('log'),
  samples: $<HTMLCanvasElement>('samples'),
  samplesCaption: $('samples-caption'),
  lastRunNote: $('last-run-note'),
  features: $('features'),
  batchHint: $('batch-hint'),
  sweepStart: $<HTMLButtonElement>('sweep-start'),
  sweepStop: $<HTMLButtonElement>('sweep-stop'),
};

setupAnnouncements({ state: ui.state, log: ui.log, gpuError: ui.gpuError, polite: $('announce'), assertive: $('alert') });

const metrics = setupMetricsView(() => ({ auto: ui.echoAuto.checked, factor: Number(ui.echo.value) }));

// ---------------------------------------------------------------- fields

/** A field and its check; the reason shows beside it and blocks Start while it stands. */
interface Field {
  input: HTMLInputElement;
  error: HTMLElement;
  /** The URL parameter that fills it. */
  param: string;
  /** Checks the field's text, or `text` (a value kept aside, as the batch size while a TOC dataset's rows stand there). */
  check(text?: string): Checked<unknown>;
}

function field(input: HTMLInputElement, param: string, check: (text: string) => Checked<unknown>): Field {
  const error = attachFieldError(input);
  const f: Field = { input, error, param, check: (text = input.value) => check(text) };
  input.addEventListener('input', () => {
    clearParamError(param); // the person is fixing it here now
    showCheck(f);
    refreshControls();
  });
  return f;
}

/** A field whose value the dataset fixes (a TOC dataset's batch rows) is not the person's to get right. */
const fixedByDataset = (f: Field) => f.input.dataset.fixed === 'true';

function showCheck(f: Field): boolean {
  const r = fixedByDataset(f) ? ({ ok: true } as const) : f.check();
  f.error.textContent = r.ok ? '' : r.reason;
  f.input.setAttribute('aria-invalid', String(!r.ok));
  return r.ok;
}

const fields = {
  batchSize: field(ui.batchSize, 'batch', checkBatchSize),
  learningRate: field(ui.learningRate, 'lr', checkLearningRate),
  evalEvery: field(ui.evalEvery, 'evalEvery', checkEvalEvery),
  cacheLimit: field(ui.cacheLimit, 'cache', checkCacheLimit),
  shuffleBuffer: field(ui.shuffleBuffer, 'shuffle', checkShuffleBuffer),
  readers: field(ui.readers, 'readers', checkReaders),
  requestsInFlight: field(ui.requestsInFlight, 'inflight', checkRequestsInFlight),
  echo: field(ui.echo, 'echo', checkEchoFactor),
  manifestUrl: field(ui.manifestUrl, 'manifest', (text) => {
    const r = checkManifestUrl(text, location.href);
    if (r.ok && r.value && r.value === manifestProbe?.url && !manifestProbe.result.ok) return { ok: false, reason: manifestProbe.result.reason };
    return r;
  }),
};

// ---------------------------------------------------------------- datasets and models

/** What each served dataset's manifest said, by its URL (the page probes them all at load). */
const probes = new Map<string, DatasetProbe>();
/** The probe of the typed manifest URL, and the URL it read (the person may have typed on since). */
let manifestProbe: { url: string; result: DatasetProbe } | undefined;
/** How dataset= names a dataset built in this browser: local:<its id>. */
const LOCAL_PARAM = 'local:';
/** Errors in the URL the page was opened with, shown above the page until the person fixes the control. */
const paramErrors = new Map<string, string>();
/** Parameters that name something, and autoEcho (no field holds their bad value): they block Start while they stand. */
const NAMING_PARAMS = new Set(['dataset', 'model', 'manifest', 'group', 'seed', 'echoMode', 'evalMode', 'size', 'share', 'autoEcho']);

/**
 * The address's errors above the page. size=, group=, batch= and echoMode= do nothing for a table (its one fidelity is
 * lossless, its batches and their echo its own): their errors wait until an image dataset is chosen, and say so while a
 * table is (they read as keeping Start off).
 */
function showParamErrors(): void {
  const lines = [...paramErrors].map(([k, m]) => (waitsForImages(k) ? `${m} (not used by a table; it keeps Start off once an image dataset is chosen)` : m));
  ui.paramError.hidden = lines.length === 0;
  // Redrawn only when it says something else (refreshControls calls this at every change of the controls).
  if (lines.join('\n') === [...ui.paramError.children].map((d) => d.textContent).join('\n')) return;
  ui.paramError.replaceChildren(...lines.map((m) => Object.assign(document.createElement('div'), { textContent: m })));
}
const IMAGE_ONLY_PARAMS = new Set(['size', 'group', 'batch', 'echoMode']);
/** The error of an image-only parameter while a table is chosen: it neither keeps Start off nor holds the address bar. */
const waitsForImages = (param: string) => IMAGE_ONLY_PARAMS.has(param) && selectedKind() === 'tabular';

function clearParamError(name: string): void {
  if (paramErrors.delete(name)) showParamErrors();
}

/** A run is open or on its way (a sweep's included): what it is built from cannot change under it. */
const runOpen = () => (sweepPanel?.running ?? false) || starting || LIVE_STATES.has(session?.state ?? 'idle');

const buildPanel = setupBuildPanel({
  selected: () => ui.dataset.value,
  selectedName: () => ui.dataset.selectedOptions[0]?.text,
  busy: runOpen,
  log: (m, kind) => log(m, kind),
  onBuilt(r) {
    // Chosen now, and the address bar says so; not under an open run (the list and the address named it while the run read another).
    const choose = !runOpen();
    if (!choose) log(`"${r.name}" is in the dataset list: choose it once this run ends`);
    void listDatasets(choose ? r.manifestUrl : undefined).then(() => paramsApplied && writeUrl());
  },
  onDeleted: () => {
    void listDatasets().then(() => paramsApplied && writeUrl()); // not a dataset= that names nothing now
    void resumePanel.refresh(); // a saved run on it cannot be continued now
  },
});

/** Served datasets that exist, those a script can build (disabled, with its command), and those built in this browser. */
async function listDatasets(select?: string): Promise<void> {
  const unprobed = DATASETS.filter((d) => !probes.has(d.manifest));
  const built = unprobed.length ? await builtDataFolders(location.href) : undefined;
  await Promise.all(unprobed.map(async (d) => probes.set(d.manifest, await probeOwnDataset(d, location.href, built))));
  const served = document.createElement('optgroup');
  served.label = 'Served';
  const unbuilt = document.createElement('optgroup');
  unbuilt.label = 'Not built yet';
  for (const d of DATASETS) {
    const p = probes.get(d.manifest)!;
    const o = new Option(p.ok ? d.label : `${d.label}: ${d.build ? `not built, run ${d.build}` : p.reason}`, d.manifest);
    o.title = d.about;
    o.disabled = !p.ok;
    (p.ok ? served : unbuilt).append(o);
  }
  const local = await buildPanel.list().catch(() => []);
  // A dataset built in this browser is read like a served one: its scan groups' costs under the slider before a run.
  const localUrls = local.map((d) => localManifestUrl(d.id)).filter((url) => !probes.has(url));
  await Promise.all(localUrls.map(async (url) => probes.set(url, await probeDataset(url))));
  const mine = document.createElement('optgroup');
  mine.label = 'Built in this browser';
  for (const d of local) {
    const o = new Option(`${d.name} (${(d.bytes / 1024).toFixed(0)} KiB)`, localManifestUrl(d.id));
    o.title = d.name; // its name in the runs table, without the size the list shows
    mine.append(o);
  }
  const current = urlShown() ? setAside : ui.dataset.value;
  ui.dataset.replaceChildren(served, ...(local.length ? [mine] : []), ...(unbuilt.children.length ? [unbuilt] : []));
  const usable = (v: string | undefined) => !!v && [...ui.dataset.options].some((o) => o.value === v && !o.disabled);
  ui.dataset.value = [select, current, served.querySelector('option')?.value].find(usable) ?? '';
  if (select && ui.dataset.value === select) emptyManifestField(); // a dataset just built is chosen: it is what a run reads
  showListSetAside();
  listModels(ui.model.value);
  previewDataset();
  buildPanel.refresh(); // its Download and Delete act on the chosen dataset, if it is one built here
}

/** What reading the manifest of the dataset a run would read now found, if it was read and is good. */
function selectedProbe(): Extract<DatasetProbe, { ok: true }> | undefined {
  const p = chosenProbe();
  return p?.ok ? p : undefined;
}

/** What reading the manifest of the dataset a run would read now found, good or bad; undefined while it is unread. */
function chosenProbe(): DatasetProbe | undefined {
  if (!ui.manifestUrl.value.trim()) return probes.get(ui.dataset.value);
  const url = checkManifestUrl(ui.manifestUrl.value, location.href);
  return url.ok && url.value === manifestProbe?.url ? manifestProbe?.result : undefined; // a read of what the field says now
}

/** The manifest a run would read now: the typed URL, else the listed dataset's (call with a good typed URL or none). */
function chosenManifestUrl(): string {
  const typed = checkManifestUrl(ui.manifestUrl.value, location.href);
  if (typed.ok && typed.value) return typed.value;
  return ui.dataset.value.startsWith(LOCAL_PREFIX) ? ui.dataset.value : new URL(ui.dataset.value, location.href).href;
}

/** The listed dataset's full name (its option's tooltip; the option's text is cut short to fit). */
function listedName(): string | undefined {
  const option = ui.dataset.selectedOptions[0];
  return option && (option.title || option.text);
}

/** The kind of the dataset a run would read now, if known. */
function selectedKind(): DatasetInfo['kind'] | undefined {
  if (ui.manifestUrl.value.trim()) return selectedProbe()?.kind;
  if (ui.dataset.value.startsWith(LOCAL_PREFIX)) return 'image';
  return selectedProbe()?.kind ?? DATASETS.find((d) => d.manifest === ui.dataset.value)?.kind;
}

/**
 * The model to offer first once the person has chosen a dataset: the URL's, if it was refused for the dataset the page
 * opened with and reads this one (then it is no longer an error), else the one chosen now.
 */
function modelForChosenDataset(): string {
  const asked = params.get('model');
  const kind = selectedKind();
  if (!paramErrors.has('model') || !asked || !kind || !modelsFor(kind).some((m) => m.id === asked)) return ui.model.value;
  clearParamError('model');
  return asked;
}

/** The model last chosen for each kind of dataset: chosen again when the list comes back to that kind. */
const chosenModels = new Map<DatasetInfo['kind'], string>();
let listedKind: DatasetInfo['kind'] | undefined;

/** Offers only the models that can read the chosen dataset (all of them while a typed URL is unread). */
function listModels(preferred?: string): void {
  if (listedKind && ui.model.value) chosenModels.set(listedKind, ui.model.value);
  const kind = selectedKind();
  listedKind = kind;
  const models = kind ? modelsFor(kind) : MODELS;
  ui.model.replaceChildren(...models.map((m) => new Option(m.label, m.id)));
  const pick = [preferred, kind && chosenModels.get(kind)].find((id) => id && models.some((m) => m.id === id));
  if (pick) ui.model.value = pick;
  const tabular = kind === 'tabular';
  ui.batchHint.hidden = !tabular;
  const rows = selectedProbe()?.batchRows;
  ui.batchHint.textContent = rows
    ? `This TOC dataset is compressed in mini-batches of ${rows} rows: it sets the size, not this field.`
    : 'TOC datasets are compressed in fixed mini-batches: the dataset sets the size.';
  ui.batchSize.dataset.fixed = String(tabular); // TOC batches are fixed by the dataset
  showFixedBatch(tabular ? rows : undefined);
  refreshControls();
}

/**
 * While a TOC dataset is chosen the (disabled) batch field shows the rows of its mini-batches, which a run uses and
 * its record names; the person's own choice is kept aside and comes back with an image dataset (and stays in the URL).
 */
let fixedBatch: { rows: number; chosen: string } | undefined;

function showFixedBatch(rows: number | undefined): void {
  const chosen = fixedBatch?.chosen ?? ui.batchSize.value;
  fixedBatch = rows === undefined ? undefined : { rows, chosen };
  ui.batchSize.value = rows === undefined ? chosen : String(rows);
  // A bad size from the URL is not this dataset's to refuse: it waits aside (said above the page as waiting, see
  // showParamErrors), and is refused under the field with an image dataset.
  showCheck(fields.batchSize);
}

/** Puts a batch size in the field, or aside while a TOC dataset's rows stand there. */
function putBatch(text: string): void {
  if (fixedBatch) fixedBatch.chosen = text;
  else ui.batchSize.value = text;
}

let probeSeq = 0;
/** The read of the typed manifest URL last begun (Start waits for it). */
let typedManifestRead: Promise<void> = Promise.resolve();
function probeTypedManifest(): Promise<void> {
  typedManifestRead = readTypedManifest();
  return typedManifestRead;
}

/** A typed manifest whose server did not answer is read again this often, while the field says the same. */
const MANIFEST_RETRY_MS = 5_000;

async function readTypedManifest(): Promise<void> {
  const seq = ++probeSeq;
  manifestProbe = undefined;
  delete ui.manifestUrl.dataset.probing; // this read is the one that counts now, whatever it finds
  const url = checkManifestUrl(ui.manifestUrl.value, location.href);
  if (url.ok && url.value) {
    ui.manifestUrl.dataset.probing = 'true';
    refreshControls();
    const limit = AbortSignal.timeout(MANIFEST_READ_TIMEOUT_MS);
    let result = await probeDataset(url.value, limit);
    if (seq !== probeSeq) return; // the person typed again meanwhile: that read counts
    if (!result.ok && limit.aborted) result = { ok: false, reason: `${url.value}: no answer in ${MANIFEST_READ_TIMEOUT_MS / 1000} s` };
    // A server that is down now may be up soon (a restart): read again until it answers, or the field changes.
    if (!result.ok && (limit.aborted || result.reason.includes('could not reach the server'))) {
      result = { ok: false, reason: `${result.reason}; trying again every ${MANIFEST_RETRY_MS / 1000} s` };
      const again = () => {
        const now = checkManifestUrl(ui.manifestUrl.value, location.href);
        if (seq !== probeSeq || !now.ok || now.value !== url.value) return; // typed over
        // Not under the person's hands: a read rewrites the model list and the URL.
        if (document.activeElement === ui.manifestUrl || document.hidden) setTimeout(again, MANIFEST_RETRY_MS);
        else void probeTypedManifest();
      };
      setTimeout(again, MANIFEST_RETRY_MS);
    }
    if (result.ok) clearParamError('manifest'); // the URL's manifest reads now (its server was down, say)
    // "notaurl" is a fine relative URL; when nothing is there, say how it was read.
    const typed = ui.manifestUrl.value.trim();
    if (!result.ok && !/^([a-z][a-z\d+.-]*:|\/\/)/i.test(typed)) {
      result = { ok: false, reason: `${result.reason} ("${typed}" has no http:// or https://, so it was read as a path on this page's server)` };
    }
    manifestProbe = { url: url.value, result };
    delete ui.manifestUrl.dataset.probing;
  }
  showCheck(fields.manifestUrl);
  listModels(modelForChosenDataset());
  previewDataset();
  if (paramsApplied) writeUrl(); // the model may have changed with the dataset's kind (while the URL is read, it is written after)
}

// ---------------------------------------------------------------- the run

let session: LabSession | undefined;
/** From a click on Start until the previous run has ended and the new one exists. */
let starting = false;
/**
 * Set in the sweeps' part of this file (refreshControls runs before it). While a sweep is under way, Start and what a run is
 * built from stay off between its runs (a Start there broke the sweep).
 */
let sweepPanel: SweepPanel | undefined;
const openSessions = new Set<LabSession>();
let backend = 'none';
let adapter = '';
let gpuError: string | undefined;
let info: DatasetInfo | undefined;
/** What the open (or last) run's dataset is, as the line under the setup says it. */
let datasetLine = '';
let fidelityTouched = false;
/** The slider's group is the address's group=, not yet moved by the person. */
let groupFromUrl = false;

function log(message: string, kind: 'info' | 'warning' | 'error' = 'info'): void {
  const li = document.createElement('li');
  li.className = kind;
  li.textContent = message;
  ui.log.append(li);
  ui.log.scrollTop = ui.log.scrollHeight;
}

/** Why Start is refused right now, or nothing. */
function startBlockers(): string[] {
  if (gpuError) return ['WebGPU is unavailable'];
  // Before, the controls are not yet what the address asks for (a run would open on the defaults); nothing else is said yet.
  if (!paramsApplied) return ['the address and the dataset list are still being read'];
  const reasons: string[] = [];
  // The image-only parameters wait for an image dataset (showParamErrors).
  const blocking = [...paramErrors.keys()].filter((k) => NAMING_PARAMS.has(k) && !waitsForImages(k));
  const refused = Object.values(fields).flatMap((f) => {
    const r = fixedByDataset(f) ? { ok: true } : f.check();
    return r.ok ? [] : [{ param: f.param, reason: (r as { reason: string }).reason }];
  });
  // A parameter whose field shows the same error is said once, by its field.
  const named = blocking.filter((k) => !refused.some((f) => f.param === k)).map((k) => `${k}=`);
  if (named.length) reasons.push(`the address's ${named.join(', ')} ${named.length > 1 ? 'are' : 'is'} refused (see above)`);
  reasons.push(...refused.map((f) => f.reason));
  if (!ui.manifestUrl.value.trim() && !ui.dataset.value) reasons.push('choose a dataset');
  if (!ui.model.value) reasons.push('choose a model');
  // A share past the split's records would open, then fail with nothing to read.
  const share = params.has('share') ? checkShare(params.get('share')!) : undefined;
  const records = selectedProbe()?.costs?.records;
  if (share?.ok && records !== undefined && share.value.rank >= records) {
    reasons.push(`share=${params.get('share')} holds no records: this dataset's training split has ${count(records, 'record')}`);
  }
  return reasons;
}

/** Choosing from the list chooses the list: a manifest URL in the field would otherwise still be what a run reads. */
function emptyManifestField(): void {
  if (!ui.manifestUrl.value.trim()) return;
  log(`the dataset list's choice is read now; the manifest URL field (${ui.manifestUrl.value.trim()}) was emptied`, 'info');
  ui.manifestUrl.value = '';
  void probeTypedManifest(); // as an emptied field is read: a read of the old URL still going counts for nothing
}

/** What the dataset list shows while a manifest URL in the field is what a run reads. With it, any choice from the list is a change,
 * the one the list showed before included (choosing the option already shown fired nothing, so the URL stayed in force). */
const urlInForce = Object.assign(new Option('(the manifest URL below)', ''), {
  hidden: true,
  disabled: true,
  title: 'not read: the manifest URL is read instead (choose here to read a listed dataset)',
});
/** The list's choice while a manifest URL is in force: chosen again once the field is emptied. */
let setAside = '';

/** Whether the list shows urlInForce now (an option taken out of the list by a new list stays selected, alone). */
const urlShown = () => urlInForce.parentElement === ui.dataset && urlInForce.selected;

function showListSetAside(): void {
  const superseded = ui.manifestUrl.value.trim() !== '';
  if (superseded && !urlShown()) {
    setAside = ui.dataset.value;
    ui.dataset.prepend(urlInForce);
    urlInForce.selected = true;
  } else if (!superseded && urlInForce.parentElement === ui.dataset) {
    const restore = urlInForce.selected; // not when a choice from the list emptied the field
    urlInForce.remove();
    if (restore) ui.dataset.value = setAside;
  }
  ui.dataset.classList.toggle('superseded', superseded);
  ui.dataset.title = ui.dataset.selectedOptions[0]?.title ?? '';
}

/** The run button that takes the keyboard's focus once it is on: Start and Stop are disabled by their own press. */
let focusNext: HTMLButtonElement | undefined;

/** A pressed Start, Stop, Continue, Run sweep or Stop sweep that turns off hands focus to the button that acts next, not to the page (it fell to <body>). */
function handOnFocus(had: Element | null): void {
  if (had === ui.start && ui.start.disabled) focusNext = ui.pause;
  else if (had === ui.stop && ui.stop.disabled) focusNext = ui.start;
  else if (had?.id === 'resume-go' && starting)
    focusNext = ui.pause; // Continue, hidden once the run opens
  else if (had === ui.sweepStart && ui.sweepStart.disabled) focusNext = ui.sweepStop;
  else if (had === ui.sweepStop && ui.sweepStop.disabled) focusNext = ui.sweepStart;
  const lost = !document.activeElement || document.activeElement === document.body || (document.activeElement as HTMLButtonElement).disabled;
  if (!lost) {
    if (document.activeElement !== had) focusNext = undefined; // the person has moved on
    return;
  }
  if (focusNext && !focusNext.disabled) {
    focusNext.focus();
    focusNext = undefined;
  }
}

function refreshControls(): void {
  const had = document.activeElement;
  const state: RunState = session?.state ?? 'idle';
  const live = LIVE_STATES.has(state);
  const busy = starting || live || (sweepPanel?.running ?? false);
  showListSetAside(); // first: a field emptied brings the list's choice back, which Start's blockers read
  const blockers = startBlockers();
  showParamErrors(); // the image-only parameters say whether they keep Start off, for the dataset chosen now
  ui.start.disabled = busy || blockers.length > 0;
  // While the typed manifest is read, Start stays on: a click (which itself leaves the field and so begins the read) waits for it.
  const reading = ui.manifestUrl.dataset.probing ? 'reading the manifest…' : '';
  ui.startHint.textContent = busy || !blockers.length ? reading : `Start is off: ${blockers.join('; ')}`;
  // Pause during an evaluation is taken once it ends (seconds on a slow device): the button says it was heard. It stays
  // enabled (a click then does nothing), so a keyboard's focus stays on it for the Resume that follows.
  const pausing = session?.pausing ?? false;
  ui.pause.setAttribute('aria-disabled', String(pausing));
  ui.pause.disabled = starting || !(state === 'running' || state === 'paused' || state === 'evaluating');
  ui.pause.textContent = state === 'paused' ? 'Resume' : pausing ? 'Pausing…' : 'Pause';
  ui.pause.title = pausing ? 'the run pauses once this evaluation ends' : '';
  ui.stop.disabled = !live || state === 'stopping';
  // What a run is built from cannot change under it; fidelity and echo stay live.
  // The learning rate stays live like fidelity and echo.
  for (const el of [ui.dataset, ui.manifestUrl, ui.model, ui.evalEvery, ui.evalMode, ui.readers, ui.cacheLimit, ui.cacheClear]) el.disabled = busy;
  ui.cacheBusy.hidden = !busy; // the cache's controls are off for a reason the others' (what the run is built from) do not say
  ui.batchSize.disabled = busy || ui.batchSize.dataset.fixed === 'true';
  sweepPanel?.refresh(busy, blockers);
  buildPanel.refresh(); // Delete waits for the run to end
  handOnFocus(had);
}

function showState(state: RunState, detail?: string): void {
  modelPanel.refresh(state, detail);
  stallShown = false;
  // Paused: the step under way ends, its loss (and those read back late before it) comes in, and the checkpoint is taken;
  // said until then, as the step count still moves (before: "paused" while it rose by two).
  if (state === 'paused' && !detail && session?.unsaved) detail = PAUSE_SAVING;
  ui.state.textContent = detail ? `${state}: ${detail}` : state;
  ui.state.dataset.state = state;
  refreshControls();
  if (state === 'failed') log(`training failed: ${detail}`, 'error');
  if (!LIVE_STATES.has(state)) {
    metrics.hideSuggestion(); // a suggestion for a run that has ended
    void showCacheUsage();
  }
}

let stallShown = false;
/** The session's warnings when its last step was shown: those since may say why no batch comes. */
let warningsAtStep = 0;
const PAUSE_SAVING = 'saving the run at its last step';

/**
 * Ticks every second: while the trainer waits for data longer than it has been waiting (LabSession.stalledForMs: a server
 * gone, a stalled link), the state, waiting and speed tiles say so; until then they describe the last steps.
 */
function showStall(): void {
  const ms = session?.stalledForMs ?? 0;
  const first = session && session.steps.length === 0 ? session.waitingForDataMs : 0; // no step yet: nothing to be stale
  // The gist of the latest warning since the last step, here: "see the log" pointed 4,000 px down the page at phone width.
  const latest = session && session.warnings.total > warningsAtStep ? session.warnings.last() : undefined;
  const why = latest ? `: ${gist(latest)} (the log has more)` : '';
  if (first >= STALL_MS) {
    stallShown = true;
    ui.state.textContent = `running: waiting for the first batch, ${Math.round(first / 1000)} s${why}`;
  } else if (ms > 0) {
    stallShown = true;
    ui.state.textContent = `running: no batch for ${Math.round(ms / 1000)} s, waiting for data${why}`;
    metrics.stalled(ms);
  } else if (stallShown) {
    stallShown = false;
    if (session) ui.state.textContent = session.state; // the next step's figures replace the tiles'
  }
}
/** A warning's first clause, for a line that has room for one ("the dataset's server stopped answering"). */
function gist(warning: string): string {
  const first = warning.split(/ \(|; /)[0]!;
  return first.length > 80 ? `${first.slice(0, 79)}…` : first;
}
setInterval(() => {
  showStall();
  // A pause's checkpoint that needed no write (the run saved as it is already) sends no word: the line catches up here.
  if (session?.state === 'paused' && !session.unsaved && ui.state.textContent === `paused: ${PAUSE_SAVING}`) showState('paused');
}, 1000);

/** Clears everything the previous run drew: tiles, charts, dataset info, fidelity table, samples, log. */
function resetView(): void {
  metrics.reset();
  warningsAtStep = 0;
  ui.lastRunNote.hidden = true;
  ui.log.replaceChildren();
  ui.datasetInfo.textContent = datasetLine = '';
  ui.fidelityTable.replaceChildren();
  ui.features.replaceChildren();
  ui.samplesCaption.textContent = '';
  clearSamples(ui.samples);
  info = undefined;
}

/** What the scan groups cost: the live run's reading, else what the selected dataset's manifest says, else the last run's. */
function shownCosts(): GroupCosts | undefined {
  const p = chosenProbe();
  const manifest = p?.ok ? p.costs : undefined;
  // An open run's reading, or until it has one its dataset's manifest (the selection cannot change under a run).
  if (session && !session.ended) return info ?? manifest;
  // A dataset the page knows about (served or typed): its manifest's figures, or none (not the last run's, of another dataset).
  return p ? manifest : info;
}

/** The person's echo mode, kept aside while a table's "each whole batch" stands in the list (as the batch size is). */
let echoModeAside: string | undefined;
/** Puts an echo mode in the list, or aside while a table's stands there. */
function putEchoMode(mode: string): void {
  if (echoModeAside !== undefined) echoModeAside = mode;
  else ui.echoMode.value = mode;
}

/** The controls a dataset's kind rules: a TOC table is lossless (one fidelity) and echoes whole batches whatever is chosen. */
function showKindControls(tabular: boolean): void {
  ui.fidelity.disabled = tabular;
  ui.echoMode.disabled = tabular;
  ui.echoMode.title = tabular ? 'TOC tables echo whole batches' : '';
  // The list shows what a table does (it read "each example, before the random flip", disabled); the choice comes back after.
  if (tabular && echoModeAside === undefined) {
    echoModeAside = ui.echoMode.value;
    ui.echoMode.value = 'batches';
  } else if (!tabular && echoModeAside !== undefined) {
    ui.echoMode.value = echoModeAside;
    echoModeAside = undefined;
  }
  sweepPanel?.forTable(tabular);
}

/** Before a run opens it, the slider's range, its label, the group table and the controls its kind rules follow the selected dataset. */
function previewDataset(): void {
  if (session && !session.ended) return;
  showKindControls(selectedKind() === 'tabular');
  ui.dataset.title = ui.dataset.selectedOptions[0]?.title ?? ''; // the closed list shows the short label only
  // The samples, confusion matrix and dataset line stay the last run's: said so once another dataset is chosen.
  const last = session?.config.manifestUrl;
  const chosen = ui.manifestUrl.value.trim() || ui.dataset.value ? chosenManifestUrl() : undefined;
  ui.lastRunNote.hidden = !last || !chosen || last === chosen;
  ui.lastRunNote.textContent = `From the last run, on ${info?.name ?? last}; a run on the chosen dataset shows its own.`;
  // Under the dataset list, the line is about the dataset chosen there: the last run's (another, or one deleted since) says so.
  ui.datasetInfo.textContent = datasetLine && !ui.lastRunNote.hidden ? `The last run's dataset: ${datasetLine}` : datasetLine;
  const costs = shownCosts();
  ui.fidelityTable.replaceChildren();
  metrics.hideTocWork(); // the last run's reading, not the selected dataset's
  if (costs) {
    if (costs.kind === 'image') showGroups(costs.fidelityLevels);
    drawFidelityTable(costs);
  }
  updateFidelityLabel();
}

/**
 * The slider spans an image dataset's scan groups: the person's group where the dataset has it, else its last. A TOC
 * table's one fidelity leaves the (disabled) slider alone, so the group chosen for images is still there after one.
 */
function showGroups(levels: number): void {
  const group = ui.fidelity.value; // before the range input cuts it down to its new max
  ui.fidelity.max = String(levels);
  if (groupFromUrl) {
    // The address's group=, checked against each image dataset chosen as the same address on it would be: refused where it
    // has fewer groups (a table before it let the group wait; it was cut down without a word), in force again where it fits.
    const text = params.get('group')!;
    const r = checkScanGroup(text, levels);
    const had = paramErrors.get('group');
    if (r.ok) paramErrors.delete('group');
    else paramErrors.set('group', `URL parameter group=${text}: ${r.reason}`);
    ui.fidelity.value = String(r.ok ? r.value : levels);
    if (paramErrors.get('group') !== had) refreshControls(); // Start, off for it or on again
    return;
  }
  const past = fidelityTouched && Number(group) > levels;
  if (past) log(`scan group ${group} is past this dataset's ${levels}: group ${levels}, the whole of each record, is chosen`, 'info');
  if (!fidelityTouched || past) ui.fidelity.value = String(levels);
}

/** One row per scan group: bytes per image, share of the full record, MS-SSIM. */
function drawFidelityTable(i: GroupCosts): void {
  const full = i.bytesPerLevel[i.fidelityLevels - 1]!;
  const head = `<tr><th>group</th><th>B/image</th><th>bytes</th>${i.msssim ? '<th>MS-SSIM</th>' : ''}</tr>`;
  const rows = i.bytesPerLevel.map((b, g) => {
    const cells = [g + 1, (b / i.examples).toFixed(0), `${((100 * b) / full).toFixed(0)}%`, ...(i.msssim ? [i.msssim[g]!.toFixed(3)] : [])];
    return `<tr data-group="${g + 1}">${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
  });
  ui.fidelityTable.innerHTML = i.kind === 'image' ? head + rows.join('') : '';
}

function updateFidelityLabel(): void {
  for (const row of ui.fidelityTable.querySelectorAll('tr[data-group]'))
    row.classList.toggle('current', (row as HTMLElement).dataset.group === ui.fidelity.value);
  const g = Number(ui.fidelity.value);
  const max = Number(ui.fidelity.max);
  const info = shownCosts();
  ui.fidelity.setAttribute('aria-valuetext', fidelityValueText(g, max, info)); // what a screen reader says as it moves
  if (!info) {
    ui.fidelityLabel.textContent = `scan group ${g} of ${max}`;
    return;
  }
  if (info.kind === 'tabular') {
    ui.fidelityLabel.textContent = `TOC is lossless: one fidelity, ${(info.bytesPerLevel[0]! / info.examples).toFixed(1)} bytes per row`;
    return;
  }
  const bytes = info.bytesPerLevel[g - 1]!;
  const full = info.bytesPerLevel[max - 1]!;
  const ssim = info.msssim ? `, MS-SSIM ${info.msssim[g - 1]!.toFixed(3)}` : '';
  ui.fidelityLabel.textContent =
    `scan group ${g} of ${max}: ${(bytes / info.examples).toFixed(0)} bytes/image, ${((100 * bytes) / full).toFixed(0)}% of ` + `full${ssim}`;
}

async function refreshSamples(run: LabSession): Promise<void> {
  const s = await run.samples(64).catch(() => undefined);
  if (!s || run !== session || run.ended) return; // a late answer from a run that is no longer shown
  drawSamples(ui.samples, s, info?.classes);
  ui.samplesCaption.textContent = `as decoded at scan group ${s.group}; point at one for its class`;
}

/** Reads every setup control; undefined (with the reasons shown) if one is bad. */
function readConfig(): LabSession['config'] | undefined {
  const all = Object.values(fields).map(showCheck);
  if (!all.every(Boolean) || startBlockers().length) return undefined;
  const value = <T>(r: Checked<T>) => (r as { value: T }).value;
  const model = MODELS.find((m) => m.id === ui.model.value);
  if (!model) return undefined;
  return {
    manifestUrl: chosenManifestUrl(),
    model,
    // A TOC dataset sets its batches (a manifest that does not say how big: the field, or its default, only names the run).
    batchSize: fixedBatch?.rows ?? value(checkBatchSize(ui.batchSize.value)) ?? Number(ui.batchSize.defaultValue),
    learningRate: value(checkLearningRate(ui.learningRate.value)),
    // Until the person moves the slider, a run starts at the dataset's full fidelity (the pipeline clamps).
    fidelity: fidelityTouched && selectedKind() !== 'tabular' ? Number(ui.fidelity.value) : Infinity,
    echoFactor: value(checkEchoFactor(ui.echo.value)),
    evalEvery: value(checkEvalEvery(ui.evalEvery.value)),
    evalMode: value(checkEvalMode(ui.evalMode.value)),
    cacheLimitBytes: value(checkCacheLimit(ui.cacheLimit.value)) * 2 ** 20,
    echoMode: value(checkEchoMode(ui.echoMode.value)),
    shuffleBuffer: value(checkShuffleBuffer(ui.shuffleBuffer.value)),
    autoEcho: ui.echoAuto.checked,
    readers: value(checkReaders(ui.readers.value)),
    requestsInFlight: value(checkRequestsInFlight(ui.requestsInFlight.value)),
    seed: params.has('seed') ? value(checkSeed(params.get('seed')!)) : 1,
    ...(params.has('size') ? { imageSize: value(checkImageSize(params.get('size')!)) } : {}),
    ...(params.has('share') ? { share: value(checkShare(params.get('share')!)) } : {}),
  };
}

/** Shows a dataset (by its manifest's absolute URL) and a model in the controls: the list's entry, or the URL typed. */
function showDatasetAndModel(manifestUrl: string, modelId: string): void {
  const entry = [...ui.dataset.options].find((o) => o.value && new URL(o.value, location.href).href === manifestUrl);
  if (entry) {
    ui.dataset.value = entry.value;
    ui.manifestUrl.value = '';
  } else {
    ui.manifestUrl.value = manifestUrl;
  }
  listModels(modelId);
}

/** The controls a loaded model moves to its own dataset and model (showDatasetAndModel, and its image size). */
interface DatasetSetup {
  dataset: string;
  manifest: string;
  model: string;
  size: string | null;
  sizeError: string | undefined;
}

/** What the controls chose before a model was loaded, while its run has not trained a step: a run that fails before it puts them back. */
let setupBeforeLoad: { run: LabSession | undefined; setup: DatasetSetup; opened?: boolean } | undefined;

function currentSetup(): DatasetSetup {
  return { dataset: ui.dataset.value, manifest: ui.manifestUrl.value, model: ui.model.value, size: params.get('size'), sizeError: paramErrors.get('size') };
}

/** The person's dataset, model and size again, after a loaded model's run that never trained (its dataset unreadable, say). */
function restoreSetup(s: DatasetSetup): void {
  const typedBefore = ui.manifestUrl.value;
  ui.dataset.value = s.dataset;
  ui.manifestUrl.value = s.manifest;
  if (ui.manifestUrl.value !== typedBefore) void probeTypedManifest(); // the kind of the typed dataset decides the models listed
  listModels(s.model);
  if (s.size === null) params.delete('size');
  else params.set('size', s.size);
  if (s.sizeError === undefined) paramErrors.delete('size');
  else paramErrors.set('size', s.sizeError);
  showParamErrors();
  previewDataset();
  buildPanel.refresh();
  writeUrl();
}

/** The settings of a saved run, shown in the controls, as the config that continues it. */
function configFrom(cp: Checkpoint): LabSession['config'] {
  const k = cp.controls;
  showDatasetAndModel(cp.config.manifestUrl, cp.config.modelId);
  // A TOC run's batches are its dataset's (shown once its manifest is read): only an image run's size goes in the field.
  if (modelById(cp.config.modelId).input === 'image') putBatch(String(cp.config.batchSize));
  ui.evalEvery.value = String(cp.config.evalEvery);
  ui.readers.value = String(cp.config.readers);
  ui.learningRate.value = String(k.learningRate);
  ui.echo.value = String(k.echoFactor);
  if (modelById(cp.config.modelId).input === 'image') putEchoMode(k.echoMode); // a table's is "batches", not the person's
  ui.shuffleBuffer.value = String(k.shuffleBuffer);
  ui.requestsInFlight.value = String(k.requestsInFlight ?? DEFAULT_REQUESTS_IN_FLIGHT);
  ui.echoAuto.checked = k.autoEcho;
  echoSetByAuto(k.autoEcho);
  // A run at full fidelity goes on at full fidelity: the slider goes to the dataset's last group, untouched.
  fidelityTouched = Number.isFinite(k.fidelity);
  groupFromUrl = false; // the continued run's group, not the address's
  ui.fidelity.value = fidelityTouched ? String(k.fidelity) : ui.fidelity.max;
  updateFidelityLabel();
  return {
    manifestUrl: cp.config.manifestUrl,
    model: modelById(cp.config.modelId),
    batchSize: cp.config.batchSize,
    learningRate: k.learningRate,
    fidelity: k.fidelity,
    echoFactor: k.echoFactor,
    evalEvery: cp.config.evalEvery,
    // Not part of a checkpoint: a continued run evaluates as the page says now.
    evalMode: ui.evalMode.value === 'deferred' ? 'deferred' : 'live',
    seed: cp.config.seed,
    cacheLimitBytes: cp.config.cacheLimitBytes,
    resume: cp,
  };
}

/** A saved run goes on with its own share of the records (its stream depends on it): what to say when the URL asks another. */
function shareNote(cp: Checkpoint): string | undefined {
  const asked = params.has('share') ? checkShare(params.get('share')!) : undefined;
  const saved = cp.config.share ?? { rank: 0, count: 1 };
  if (!asked?.ok || (asked.value.rank === saved.rank && asked.value.count === saved.count)) return undefined;
  const own = saved.count > 1 ? `share ${saved.rank + 1} of ${saved.count}` : 'all the training records';
  return `the saved run trains on ${own}; the URL's share=${params.get('share')} is not used for it`;
}

/**
 * A continued run's seed, share and image size, which no control shows, become the address's, as its dataset and model
 * become the controls': the address bar says what the page trains, and a reload's next Start trains the same way. The
 * address's errors about what the run set go with them (the banner, Start, and the address bar follow the controls).
 */
function adoptRunParams(cp: Checkpoint): void {
  const { seed, share, imageSize } = cp.config;
  const set = (k: string, v: string | undefined) => {
    if (v === undefined) params.delete(k);
    else params.set(k, v);
    paramErrors.delete(k);
  };
  set('seed', seed === 1 ? undefined : String(seed));
  set('share', share && share.count > 1 ? `${share.rank + 1}/${share.count}` : undefined);
  // A table's run decodes no images: the address keeps the size it had for image datasets, as it keeps the scan group.
  const image = modelById(cp.config.modelId).input === 'image';
  if (image) {
    set('size', imageSize && (imageSize.width === imageSize.height ? `${imageSize.width}` : `${imageSize.width}x${imageSize.height}`));
  }
  // The address's errors about what the run set are gone with the values: the controls hold the run's now (configFrom).
  const setByRun = ['dataset', 'manifest', 'model', 'lr', 'evalEvery', 'readers', 'echo', 'echoMode', 'shuffle', 'inflight', 'autoEcho'];
  for (const k of [...setByRun, ...(image ? ['batch'] : []), ...(Number.isFinite(cp.controls.fidelity) ? ['group'] : [])]) paramErrors.delete(k);
  for (const f of Object.values(fields)) showCheck(f);
  showParamErrors();
}

/**
 * Starts a run (Start), continues a saved one (`resume`), or starts from a loaded model's weights (`initialModel`); a
 * sweep's run ends after `lastStep`.
 */
async function start(resume?: Checkpoint, initialModel?: ModelState, lastStep?: number): Promise<void> {
  // Continue (or a loaded model) clicked as the page opens: the address's controls go in first, then the run's over them.
  if (!paramsApplied) await ready;
  if (starting) return; // a double click, or Start while the previous run still winds down
  flushMarks(); // before a continued run's settings move the controls
  if (!resume && ui.manifestUrl.dataset.probing) {
    starting = true; // Start pressed as the typed manifest URL is read: the run is read from it once the read is in
    refreshControls();
    try {
      // The latest read: one begun while waiting (the person typed again) is waited for too.
      let read: Promise<void>;
      do {
        read = typedManifestRead;
        await read;
      } while (read !== typedManifestRead);
    } finally {
      starting = false;
    }
  }
  const runId = resume?.runId ?? newRunId();
  starting = true;
  refreshControls();
  // Another tab sees the run as training from before its record is written (src/app/run-lock.ts) until its last checkpoint
  // is. A saved run is taken only if free: another tab may have continued it since this one read it (Continue pressed in
  // both). Refused before its settings go into the controls, which stay the person's.
  let release!: () => void;
  let begun = false;
  const held = holdRunLock(runId, new Promise<void>((r) => (release = r)));
  try {
    // Only a saved run can be held already (a new run's id is new): the others do not wait for the answer.
    if (resume && !(await held)) {
      focusNext = undefined; // Continue stays in view until the line says why it is refused, then focus goes to that line
      log('the saved run was continued in another tab of this lab just now: it trains there', 'warning');
      starting = false; // the line is read again only when no run is opening
      await resumePanel.refresh();
      return;
    }
    let config: LabSession['config'] | undefined;
    try {
      config = resume ? configFrom(resume) : readConfig();
    } catch (err) {
      log(`the saved run cannot be continued: ${(err as Error).message}`, 'error');
    }
    if (!config) return;
    if (initialModel) config.initialModel = initialModel;
    if (lastStep !== undefined) config.lastStep = lastStep;
    config.saveCheckpoint = (cp) => resumePanel.store.saveCheckpoint(cp);
    config.runId = runId;
    const note = resume && shareNote(resume);
    if (resume) adoptRunParams(resume);
    writeUrl(); // a continued run or a loaded model put its own settings in the controls: a reload opens them
    await session?.stop(); // the previous run ends completely (bounded) before the next one begins
    resetView();
    if (note) log(note, 'warning');
    const run: LabSession = new LabSession(
      config,
      listenerFor((): LabSession => run),
      startPipelineWorker,
    );
    session = run;
    openSessions.add(run);
    resumePanel.hide();
    const startedAt = Date.now();
    await runsPanel.begin(
      {
        id: run.runId,
        name: runName(config.model.id, config, startedAt, initialModel !== undefined),
        startedAt,
        dataset: resume?.config.datasetName ?? (ui.manifestUrl.value.trim() ? undefined : listedName()) ?? config.manifestUrl,
        model: config.model.label,
        settings: {
          batchSize: config.batchSize,
          seed: config.seed,
          learningRate: config.learningRate,
          fidelity: config.fidelity,
          echoFactor: config.echoFactor,
          echoMode: config.echoMode ?? 'examples',
          readers: resume?.config.readers ?? config.readers ?? 1,
        },
      },
      resume?.step,
      resume?.freshTrained,
    );
    const ended = run.start().finally(() => {
      openSessions.delete(run);
      refreshControls();
    });
    // A run that trained all its steps (a sweep's) has nothing to continue: its last periodic checkpoint (step 50 of 52) was
    // offered, and Continue trained the same steps again.
    const written = ended
      .then(() => run.checkpointsWritten())
      .then(async () => {
        if (!run.trainedAllSteps) return;
        await resumePanel.store.removeCheckpoint(run.runId).catch((err: Error) => log(`the finished run's checkpoint stays: ${err.message}`, 'warning'));
      });
    void written.then(release, release);
    begun = true;
    // Then the newest saved run is offered.
    void written.then(() => {
      if (run === session) void resumePanel.refresh();
    });
  } finally {
    if (!begun) {
      release(); // refused, or failed before it began: nothing of it trains here
      focusNext = undefined; // no run opened: focus stays where it is (it was to go to Pause)
    }
    starting = false;
    refreshControls();
  }
}

/** Events of `run` reach the screen only while it is the current session. */
function listenerFor(current: () => LabSession): SessionListener {
  const shown = () => current() === session;
  return {
    state: (s, d) => {
      if (!shown()) return;
      if (!LIVE_STATES.has(s)) metrics.flush(); // the last step's figures now, before the controls open again
      showState(s, d);
      runsPanel.state(s);
      if (s === 'failed') metrics.failed();
      const before = setupBeforeLoad?.run === current() ? setupBeforeLoad : undefined;
      if (before && !LIVE_STATES.has(s)) {
        setupBeforeLoad = undefined;
        // Failed before it trained, or stopped while its dataset would not open (a server that hangs): nothing of it stays in
        // the controls. (Stopped during its first evaluation, its dataset opened: it stays, as after any run.)
        if (current().stepsTrained === 0 && (s === 'failed' || !before.opened)) {
          restoreSetup(before.setup);
          log(`the loaded model's run ${s === 'failed' ? 'failed' : 'stopped'} before its first step: the dataset and model chosen before it are back`, 'info');
        }
      }
    },
    testSplit(t, why) {
      if (shown()) metrics.testSplit(t !== undefined, why);
    },
    info(i) {
      if (!shown()) return;
      info = i;
      if (setupBeforeLoad?.run === current()) setupBeforeLoad.opened = true;
      // The readers that run (at most one per record) and what the run trains on: a table echoes batches, whatever was asked.
      runsPanel.opened(i.kind, current().readers, i.name);
      const toc = current().config.model.tocColumns;
      const tocColumns = toc === 'classes' ? i.classes.length : toc;
      metrics.opened({ info: i, shares: current().share?.count ?? 1, readers: current().readers, ...(tocColumns !== undefined ? { tocColumns } : {}) });
      if (i.kind === 'image') showGroups(i.fidelityLevels);
      const shape = i.image
        ? `${i.image.width}x${i.image.height}x${i.image.channels} images, ${i.fidelityLevels} scan groups`
        : `${i.inputShape[0]} columns, TOC-compressed`;
      const share = session?.share;
      datasetLine =
        `${i.name}: ${i.examples} training examples, ${shape}, ${i.classes.length} ` +
        `classes.${i.attribution ? ` ${i.attribution}.` : ''}` +
        (share && share.count > 1 ? ` This tab trains on share ${share.rank + 1} of ${share.count} of the training records (URL share=).` : '');
      ui.datasetInfo.textContent = datasetLine;
      const tabular = i.kind === 'tabular';
      showKindControls(tabular);
      ui.samples.hidden = tabular;
      ui.features.hidden = !tabular;
      if (tabular) {
        ui.samplesCaption.textContent = `${i.inputShape[0]} columns`;
        ui.features.textContent = (i.featureNames ?? []).join(' · ');
      }
      drawFidelityTable(i);
      updateFidelityLabel();
    },
    step(m) {
      if (!shown()) return;
      warningsAtStep = current().warnings.total;
      if (stallShown) showStall(); // a batch came: the stall's words go now, not at the next tick
      // A step's batch brings the counters as it was handed over; those read since may be newer (the session keeps the newest).
      metrics.step(m, current().counters ?? m.pipeline);
      runsPanel.step(m);
      if (m.step === 1) modelPanel.refresh();
      if (m.step % 5 === 1 && info?.kind === 'image') void refreshSamples(current());
    },
    counters: (p, steps) => shown() && metrics.counters(p, steps),
    totals: (p, steps) => shown() && metrics.totals(p, steps),
    eval(m) {
      if (shown()) runsPanel.eval(m, metrics.eval(m));
    },
    restored(h) {
      if (shown()) metrics.restored(h, current().config.resume?.step ?? 0);
    },
    checkpoint: (step, error) => {
      if (!error) runsPanel.checkpointed();
      if (shown()) resumePanel.saved(step, error);
      // "saving the run at its last step" is over once the write's bookkeeping is done (after this event): then said.
      if (shown() && session?.state === 'paused') setTimeout(() => session?.state === 'paused' && showState('paused'));
    },
    pendingEvals: (n) => shown() && metrics.pendingEvals(n),
    fetch() {
      if (!shown()) return;
      metrics.cacheShare(current().fetchTotals);
      void showCacheUsage(2000);
    },
    warning: (message) => shown() && log(message, 'warning'),
    echo(r, factor) {
      if (!shown()) return;
      if (ui.echoAuto.checked && ui.echo.value !== String(factor)) {
        putEchoByAuto(factor);
        markCharts(`auto echo ${factor}`, { echoFactor: factor }, stepNow());
      }
      metrics.echo(r, factor);
    },
  };
}

// ---------------------------------------------------------------- prefix cache

const resumePanel = setupResumePanel(
  $('resume'),
  $('resume-text'),
  $<HTMLButtonElement>('resume-go'),
  $<HTMLButtonElement>('resume-discard'),
  (cp) => void start(cp),
  runOpen,
);

const runsPanel = setupRunsPanel(
  resumePanel.store,
  {
    chart: $('runs-chart'),
    table: $<HTMLTableElement>('runs-table'),
    metric: $<HTMLSelectElement>('runs-metric'),
    x: $<HTMLSelectElement>('runs-x'),
    target: $<HTMLInputElement>('runs-target'),
    exportJson: $<HTMLButtonElement>('runs-export'),
    importFile: $<HTMLInputElement>('runs-import'),
    status: $('runs-status'),
    importStatus: $('runs-import-status'),
  },
  (m) => log(m),
  () => void resumePanel.refresh(), // a deleted run's Continue offer goes (it trained the deleted run)
);

// ---------------------------------------------------------------- models

const modelPanel = setupModelPanel(
  {
    save: $<HTMLButtonElement>('model-save'),
    download: $<HTMLButtonElement>('model-download'),
    saved: $<HTMLSelectElement>('model-saved'),
    load: $<HTMLButtonElement>('model-load'),
    files: $<HTMLInputElement>('model-files'),
    status: $('model-status'),
  },
  () => session,
  async (meta, weights) => {
    await ready; // a click as the page opens: the address's controls first, then the model's dataset over them
    const busy = 'stop the run first: a loaded model starts a run of its own';
    if (runOpen()) return busy;
    // Before the controls move: its dataset's idb:// address in the manifest field would only be refused there.
    if (await isMissingLocal(meta.dataset.manifestUrl))
      return (
        `not started: its dataset, ${meta.dataset.name}, was built in a browser and is not in this one's built datasets ` +
        '(deleted, or built in another browser)'
      );
    if (runOpen()) return busy; // Start pressed while the built datasets were read
    const typed = checkManifestUrl(ui.manifestUrl.value, location.href);
    const named = typed.ok && typed.value ? ui.manifestUrl.value.trim() : !ui.manifestUrl.value.trim() && ui.dataset.value && listedName();
    const before = named ? { url: chosenManifestUrl(), name: named } : undefined;
    // A load that does not start, or whose run fails before its first step, leaves the person's choice as it was (it left
    // the model's unreadable dataset in the controls and the address, and Start off after a reload).
    const setup = currentSetup();
    showDatasetAndModel(meta.dataset.manifestUrl, meta.modelId);
    // Its own dataset, said (it was switched without a word), and the controls its kind rules follow it: a table's echo
    // mode ("batches") went into an image model's run.
    const replaced = before && before.url !== chosenManifestUrl() ? before.name : undefined;
    previewDataset();
    // The model trains at the image size it was made for (a size= run's), whatever the address says now.
    if (modelById(meta.modelId).input === 'image') {
      const [height, width] = meta.dataset.inputShape;
      params.set('size', width === height ? `${width}` : `${width}x${height}`);
      paramErrors.delete('size');
      showParamErrors();
    }
    const blockers = startBlockers();
    if (blockers.length) {
      restoreSetup(setup);
      return `not started: ${blockers.join('; ')}`;
    }
    const last = session;
    await start(undefined, freshOptimizerState(weights));
    if (session === last) {
      restoreSetup(setup);
      return 'not started: the log says why';
    }
    setupBeforeLoad = { run: session, setup };
    return replaced ? { replaced } : {};
  },
);

// ---------------------------------------------------------------- sweeps

sweepPanel = setupSweepPanel(ui.sweepStart, ui.sweepStop, {
  startBlockers,
  runOpen,
  maxGroup: () => Number(ui.fidelity.max),
  refuses: (kind) => (kind === 'echo' && ui.echoAuto.checked ? 'auto echo sets the echo factor itself: untick "auto" to sweep it' : undefined),
  paramsApplied: () => (paramsApplied ? Promise.resolve() : ready),
  takeControl(kind) {
    const control = kind === 'group' ? ui.fidelity : ui.echo;
    const before = (sweptAside = { kind, value: control.value, touched: fidelityTouched });
    return {
      set(value) {
        control.value = String(value);
        if (kind === 'group') {
          fidelityTouched = true;
          updateFidelityLabel();
        }
        writeUrl();
      },
      value: () => control.value,
      restore() {
        control.value = before.value;
        if (kind === 'group') {
          fidelityTouched = before.touched;
          updateFidelityLabel();
        }
      },
      release() {
        sweptAside = undefined;
      },
    };
  },
  async start(lastStep) {
    const before = session;
    await start(undefined, undefined, lastStep);
    return session !== before ? session : undefined;
  },
  stop,
  changed() {
    refreshControls(); // Start, Run sweep and Delete of a built dataset follow
    if (!sweepPanel?.running) void resumePanel.refresh(); // the last run's saved run is offered (not between the sweep's runs)
    writeUrl();
  },
});

const cachePanel = setupCachePanel(
  ui.cacheUsage,
  ui.cacheClear,
  (m) => log(m),
  () => ((r) => (r.ok ? r.value : undefined))(checkCacheLimit(ui.cacheLimit.value)),
);
const showCacheUsage = (throttleMs?: number) => cachePanel.show(throttleMs);
// A lowered limit applies now (the field is off while a run reads), not when a later run first writes.
ui.cacheLimit.addEventListener('change', () => {
  const r = checkCacheLimit(ui.cacheLimit.value);
  if (r.ok) void cachePanel.limit(r.value * 2 ** 20);
  else void cachePanel.show(); // what it holds, without the last valid limit's words ("Off for runs (limit 0)")
});

async function stop(): Promise<void> {
  flushMarks();
  await session?.stop();
  refreshControls();
}

// ---------------------------------------------------------------- controls

ui.start.addEventListener('click', () => void start());
// Leaving the page just after Pause or Stop, before its checkpoint is saved, would lose the steps since the last one, though
// the person asked to keep the run: the browser asks first. (A running run is not held: it is saved every 50 steps or 30 s.)
window.addEventListener('beforeunload', (e) => {
  if (session?.unsaved) e.preventDefault();
});
void resumePanel.refresh();
ui.pause.addEventListener('click', () => {
  if (session?.pausing) return; // "Pausing…": heard already
  if (session?.state === 'paused') session.resume();
  else session?.pause();
  refreshControls();
});
ui.stop.addEventListener('click', () => {
  // Stop ends what is under way, a sweep included: before, the sweep went on with its next value and left a row cut short.
  sweepPanel?.stopByRun();
  void stop();
});
/**
 * A live field applies each keystroke's value to the run; its one mark goes, when the field is left, to the step where the
 * typing first took effect (`applied` on input, `marked` on change), in the run it was typed in, not one that has ended since.
 */
function typedMarks() {
  let at: { run: LabSession; step: number | undefined; opened: boolean; label: string; change: Partial<RunRecord['settings']> } | undefined;
  const marks = {
    /** A value the run took; the last one is marked (a bad value typed after it was not applied). */
    applied(label: string, change: Partial<RunRecord['settings']>) {
      if (!session || session.ended) return;
      at = at?.run === session ? { ...at, label, change } : { run: session, step: stepNow(), opened: session.info !== undefined, label, change };
      // Taken as the run's start (markCharts): its row says so as it is typed, not once the field is left.
      if (at.step === undefined && !at.opened && !session.config.resume) amendStart(change);
    },
    marked() {
      if (at && at.run === session) markCharts(at.label, at.change, at.step, at.opened);
      at = undefined;
    },
  };
  typedFields.push(marks);
  return marks;
}
const typedFields: { marked(): void }[] = [];
/** Marks what was typed or moved and not marked yet: before a run stops, or another starts. */
const flushMarks = () => {
  clearTimeout(fidelityMark);
  for (const f of typedFields) f.marked();
};
const fidelityMoved = typedMarks();
const FIDELITY_MARK_MS = 400;
const echoTyped = typedMarks();
const learningRateTyped = typedMarks();
const shuffleTyped = typedMarks();
ui.fidelity.addEventListener('input', () => {
  fidelityTouched = true;
  groupFromUrl = false;
  clearParamError('group');
  refreshControls();
  updateFidelityLabel();
  if (session && !session.ended) {
    session.setFidelity(Number(ui.fidelity.value));
    fidelityMoved.applied(`group ${ui.fidelity.value}`, { fidelity: Number(ui.fidelity.value) });
  }
});
// On release; arrow keys release at each press, so presses in a row make one mark, where the first took effect.
let fidelityMark: ReturnType<typeof setTimeout> | undefined;
ui.fidelity.addEventListener('change', () => {
  clearTimeout(fidelityMark);
  fidelityMark = setTimeout(() => fidelityMoved.marked(), FIDELITY_MARK_MS);
});
ui.echo.addEventListener('change', () => echoTyped.marked());
ui.learningRate.addEventListener('change', () => learningRateTyped.marked());
/** A chart mark's words for each echo mode: the two example modes told apart. */
const ECHO_MODE_MARKS: Record<string, string> = { examples: 'echo examples', 'examples-after-augment': 'echo after flip', batches: 'echo batches' };
ui.echoMode.addEventListener('change', () => markCharts(ECHO_MODE_MARKS[ui.echoMode.value] ?? ui.echoMode.value, { echoMode: ui.echoMode.value }, stepNow()));
ui.echo.addEventListener('input', () => {
  const r = checkEchoFactor(ui.echo.value);
  if (!r.ok || !session || session.ended) return; // a bad value is shown and not applied
  session.setEchoFactor(r.value);
  echoTyped.applied(`echo ${r.value}`, { echoFactor: r.value });
});
ui.learningRate.addEventListener('input', () => {
  const r = checkLearningRate(ui.learningRate.value);
  if (!r.ok || !session || session.ended) return;
  session.setLearningRate(r.value);
  learningRateTyped.applied(`lr ${r.value}`, { learningRate: r.value });
});
/** A change taken as where the live run starts: its record's settings and its name in the runs table say so. */
const amendStart = (change: Partial<RunRecord['settings']>) =>
  runsPanel.amend(change, (r) => runName(session!.config.model.id, r.settings, r.startedAt, session!.config.initialModel !== undefined));

/** The last step the open run reported; undefined before its first. */
const stepNow = (): number | undefined => (session && !session.ended ? session.steps.last()?.step : undefined);

/**
 * Marks every chart where a control changed, at `step` (stepNow(), or where a typed value first took effect). A change
 * before a new run's training split opens is where the run starts instead: its record's settings and name say so, and
 * nothing is marked. Once it has opened, its first records are asked for at the old values: a change before the first step
 * is marked at step 0.
 */
function markCharts(label: string, change: Partial<RunRecord['settings']>, step: number | undefined, opened = session?.info !== undefined): void {
  if (!session || session.ended) return;
  // From the moment the run exists (Start), before its state has moved on from idle.
  if (step === undefined && !session.config.resume && !opened) {
    amendStart(change);
    return;
  }
  if (!LIVE_STATES.has(session.state)) return;
  const at = step ?? session.config.resume?.step ?? 0; // a continued run's first new step follows its checkpoint's
  metrics.mark(at, label);
  runsPanel.mark(at, label);
}

/** A run's name in the runs table: what sets it apart from the others (`loaded`: it started from a loaded model's weights). */
function runName(modelId: string, s: Pick<RunRecord['settings'], 'fidelity' | 'echoFactor'>, startedAt: number, loaded = false): string {
  // A TOC table is lossless: one fidelity, no scan group to name.
  const tabular = MODELS.find((m) => m.id === modelId)?.input === 'tabular';
  const group = tabular ? '' : Number.isFinite(s.fidelity) ? `group ${s.fidelity} · ` : 'full fidelity · ';
  return `${modelId}${loaded ? ' (loaded)' : ''} · ${group}echo ${s.echoFactor} · ${new Date(startedAt).toLocaleTimeString()}`;
}

/** A factor auto echo put in the field: any error there (typed, or the address's echo=) was about the value it replaced. */
function putEchoByAuto(factor: number): void {
  ui.echo.value = String(factor);
  clearParamError('echo');
  showCheck(fields.echo);
  refreshControls();
}

/** Auto echo writes the echo field: it is read-only then, looks it, and says why. */
function echoSetByAuto(auto: boolean): void {
  ui.echo.readOnly = auto;
  ui.echo.title = auto ? 'set by auto echo from the measured R: untick auto to type a factor' : '';
}

/** The echo factor in the field when the person ticked auto echo: it comes back when they untick it. */
let echoBeforeAuto: string | undefined;
ui.echoAuto.addEventListener('change', () => {
  clearParamError('autoEcho');
  sweepPanel?.recheck(); // an echo sweep whose factor auto echo would now set compares nothing
  echoSetByAuto(ui.echoAuto.checked);
  metrics.hideSuggestion();
  if (session && !session.ended) session.setAutoEcho(ui.echoAuto.checked);
  if (ui.echoAuto.checked) {
    // A bad value typed before is not kept to come back: auto starts from the factor in force (1 before a run).
    if (!checkEchoFactor(ui.echo.value).ok) {
      putEchoByAuto(session && !session.ended ? session.echoFactor : 1);
    }
    echoBeforeAuto = ui.echo.value;
  } else if (echoBeforeAuto !== undefined) {
    // Before, auto's last factor stayed on: the person's own came back only if they typed it again.
    const typed = echoBeforeAuto;
    echoBeforeAuto = undefined;
    if (ui.echo.value !== typed) {
      log(`auto echo off: the echo factor is back to ${typed}, as it was before auto echo set ${ui.echo.value}`);
      ui.echo.value = typed;
      // As if typed: applied to the live run, marked on the charts, checked beside the field.
      ui.echo.dispatchEvent(new Event('input'));
      ui.echo.dispatchEvent(new Event('change'));
    }
  }
});
ui.echoMode.addEventListener('change', () => {
  clearParamError('echoMode');
  if (session && !session.ended) session.setEchoMode(ui.echoMode.value as EchoMode);
});
ui.shuffleBuffer.addEventListener('input', () => {
  const r = checkShuffleBuffer(ui.shuffleBuffer.value);
  if (!r.ok || !session || session.ended) return;
  session.setShuffleBuffer(r.value);
  shuffleTyped.applied(`shuffle ${r.value}`, {}); // marked like echo and lr: it changes the duplicates within a batch
});
ui.shuffleBuffer.addEventListener('change', () => shuffleTyped.marked());
ui.requestsInFlight.addEventListener('input', () => {
  const r = checkRequestsInFlight(ui.requestsInFlight.value);
  if (r.ok && session && !session.ended) session.setRequestsInFlight(r.value);
});
ui.echoUse.addEventListener('click', () => {
  const suggested = ui.echoUse.dataset.value;
  if (!suggested) return;
  ui.echo.value = suggested;
  ui.echo.dispatchEvent(new Event('input'));
  ui.echo.dispatchEvent(new Event('change')); // taken at once: marked where it took effect
  metrics.hideSuggestion();
});
ui.dataset.addEventListener('change', () => {
  clearParamError('dataset');
  emptyManifestField();
  clearParamError('manifest'); // a dataset from the list, instead of the URL's manifest
  listModels(modelForChosenDataset());
  previewDataset();
  buildPanel.refresh();
});
ui.model.addEventListener('change', () => {
  clearParamError('model');
  refreshControls();
});
ui.manifestUrl.addEventListener('change', () => {
  clearParamError('manifest');
  void probeTypedManifest();
});

// ---------------------------------------------------------------- URL parameters

/** Puts each URL parameter into its control; one that is bad or names nothing is shown, never replaced by a default. */
async function applyParams(): Promise<void> {
  // Shown above the page, not only logged (a guessed name, fidelity= for group=, ran at the default unnoticed), but no block on
  // Start: nothing of the run depends on it. Kept under a key no parameter has, so no control's change clears it.
  for (const k of unknownParams(params)) paramErrors.set(`?${k}`, unknownParamMessage(k));
  // Said, not an error: the first is read and the address bar keeps it alone (an error would hold the URL and, for a name, Start).
  for (const [k, values] of repeatedParams(params)) {
    log(`URL parameter ${k} is given ${values.length} times (${values.join(', ')}): the first is read, the others are not`, 'warning');
  }
  const put = (name: string, f: Field, set: (text: string) => void = (text) => void (f.input.value = text)) => {
    const text = params.get(name);
    if (text === null) return;
    set(text);
    const r = f.check(text);
    if (!r.ok) paramErrors.set(name, `URL parameter ${name}=${text}: ${r.reason}`);
    showCheck(f);
  };
  put('batch', fields.batchSize, putBatch);
  put('lr', fields.learningRate);
  put('evalEvery', fields.evalEvery);
  put('cache', fields.cacheLimit);
  put('shuffle', fields.shuffleBuffer);
  put('readers', fields.readers);
  put('inflight', fields.requestsInFlight);
  /** A parameter with no field of its own: its value applied when good, its error kept (said above the page) when not. */
  const take = <T>(name: string, check: (text: string) => Checked<T>, apply?: (value: T) => void) => {
    const text = params.get(name);
    if (text === null) return;
    const r = check(text);
    if (r.ok) apply?.(r.value);
    else paramErrors.set(name, `URL parameter ${name}=${text}: ${r.reason}`);
  };
  take('echoMode', checkEchoMode, putEchoMode);
  take('evalMode', checkEvalMode, (mode) => void (ui.evalMode.value = mode));
  take(
    'autoEcho',
    (text) => checkFlag('autoEcho', text),
    (on) => echoSetByAuto((ui.echoAuto.checked = on)),
  );
  // A bad autostart starts nothing, said in the log (not above the page: no control could clear it there), and leaves the URL.
  if (autostartParam && !autostartParam.ok) log(`URL parameter autostart=${params.get('autostart')}: ${autostartParam.reason}; nothing was started`, 'warning');
  put('echo', fields.echo);
  // Checked here, read when a run starts (configFrom and the session).
  take('seed', checkSeed);
  take('size', checkImageSize);
  take('share', checkShare);

  const dataset = params.get('dataset');
  const entry = dataset === null ? undefined : DATASETS.find((d) => d.id === dataset);
  // A dataset built in this browser (the build panel): local:<its id>, as writeUrl puts it.
  const local = dataset?.startsWith(LOCAL_PARAM) ? localManifestUrl(dataset.slice(LOCAL_PARAM.length)) : undefined;
  if (dataset !== null && !entry && !local)
    paramErrors.set('dataset', `URL parameter dataset=${dataset} names no dataset (have ${DATASETS.map((d) => d.id).join(', ')})`);
  await listDatasets(entry?.manifest ?? local);
  if (local && ui.dataset.value !== local) {
    paramErrors.set('dataset', `URL parameter dataset=${dataset} names no dataset built in this browser (they are listed under "Built in this browser")`);
  }
  if (entry && ui.dataset.value !== entry.manifest) {
    const p = probes.get(entry.manifest);
    paramErrors.set('dataset', `URL parameter dataset=${dataset}: ${entry.build ? `not built; run ${entry.build}` : p && !p.ok ? p.reason : 'not available'}`);
  }
  if (paramErrors.has('dataset')) {
    ui.dataset.value = ''; // nothing chosen, rather than a dataset the person did not ask for
    listModels();
    previewDataset(); // nor the first dataset's scan groups under the slider
  }
  const manifest = params.get('manifest');
  if (manifest !== null && !manifest.trim()) paramErrors.set('manifest', 'URL parameter manifest= is empty: give a manifest URL, or leave it out');
  else if (manifest !== null) {
    ui.manifestUrl.value = manifest;
    await probeTypedManifest();
    const r = fields.manifestUrl.check();
    if (!r.ok) paramErrors.set('manifest', `URL parameter manifest=${manifest}: ${r.reason}`);
  }

  // Parameters that do nothing for what was chosen are said, so none is ignored silently.
  if (dataset !== null && manifest?.trim()) {
    log(`URL parameters dataset= and manifest= are both given: the manifest is read (the dataset list applies once the manifest field is empty)`, 'warning');
  }
  if (selectedKind() === 'tabular') {
    for (const k of IMAGE_ONLY_PARAMS) {
      const what = 'a TOC table is read as it is, in its own batches, and echoes whole batches';
      // A bad one is said above the page instead, as waiting for an image dataset.
      if (params.has(k) && !paramErrors.has(k)) log(`URL parameter ${k}=${params.get(k)} is for image datasets: ${what}`, 'info');
    }
  }

  const model = params.get('model');
  if (model !== null) {
    const spec = MODELS.find((m) => m.id === model);
    const kind = selectedKind();
    if (!spec) paramErrors.set('model', `URL parameter model=${model} names no model (have ${MODELS.map((m) => m.id).join(', ')})`);
    else if (kind && spec.input !== kind)
      paramErrors.set('model', `URL parameter model=${model}: ${spec.label} reads ${spec.input} data, the chosen dataset is ${kind}`);
    else listModels(model);
    if (paramErrors.has('model')) ui.model.value = '';
  }

  const group = params.get('group');
  if (group !== null) {
    const p = chosenProbe();
    // A TOC table has no scan groups: its group is the person's for image datasets, checked against the most any has.
    const r = checkScanGroup(group, p?.ok && p.kind === 'image' ? p.fidelityLevels : undefined);
    if (!r.ok) paramErrors.set('group', `URL parameter group=${group}: ${r.reason}`);
    else {
      ui.fidelity.max = String(Math.max(r.value, Number(ui.fidelity.max)));
      ui.fidelity.value = String(r.value);
      fidelityTouched = true;
      groupFromUrl = true;
      updateFidelityLabel();
    }
  }
  showParamErrors();
  refreshControls();
}

// ---------------------------------------------------------------- test API

/** A step as the test API reports it: without the pipeline counters, so long histories stay small. */
const stepLite = ({ step, loss, time, examplesPerSecond, bytesFetched, batchKey, examples, echoed }: StepMetrics): LabSnapshot['steps'][number] => ({
  step,
  batchKey,
  loss,
  time,
  examplesPerSecond,
  bytesFetched,
  examples,
  echoed,
});

window.__lab = {
  snapshot: (): LabSnapshot => ({
    backend,
    adapter,
    gpuError,
    state: session?.state ?? 'idle',
    dataset: info,
    fidelity: Number(ui.fidelity.value),
    echoFactor: Number(ui.echo.value),
    steps: (session?.steps.toArray() ?? []).map(stepLite),
    evals: session?.evals.toArray() ?? [],
    fetches: session?.fetches.toArray() ?? [],
    warnings: session?.warnings.toArray() ?? [],
    pipeline: session?.counters,
  }),
  progress: () => {
    const steps = session?.steps;
    const lite = (m: StepMetrics | undefined) => m && stepLite(m);
    return {
      state: session?.state ?? 'idle',
      adapter,
      steps: steps?.total ?? 0,
      first: lite(steps?.first()),
      last: lite(steps?.last()),
      lastEval: session?.evals.last(),
      warnings: session?.warnings.total ?? 0,
      waitingForDataMs: session?.waitingForDataMs ?? 0,
    };
  },
  runs: () => ({ open: openSessions.size, workers: liveWorkerCount() }),
  marks: () => metrics.markLabels(),
  records: () => runsPanel.records(),
  cache: () => showCacheUsage(),
  memory: () => ({ tensors: tf.memory().numTensors, bytes: tf.memory().numBytes, kernelBuffers: kernelBufferCount() }),
  // As a person's Start: start() waits for the address to be read, as a click waits for Start to come on.
  start: () => start(),
  pause: () => session?.pause(),
  resume: () => session?.resume(),
  stop,
};

// ---------------------------------------------------------------- the URL follows the controls

/**
 * Writes the current settings into the address bar (replaceState: no history
 * entry per keystroke), so the URL can be shared or reloaded. Only valid values
 * are written; a field that fails its check keeps what the URL said. Defaults
 * are left out; autostart stays as it was.
 */
/** The scan group the address bar holds: the URL's, then the last one chosen on an image dataset. */
let urlGroup = params.get('group');
/** The swept control's value before a sweep: the address keeps it while the sweep sets the control (a reload gives it back). */
let sweptAside: { kind: 'group' | 'echo'; value: string; touched: boolean } | undefined;

function writeUrl(): void {
  // The URL being fixed is shown above the page; it changes once it is fixed (a name it does not read is dropped at once).
  if ([...paramErrors.keys()].some((k) => !k.startsWith('?') && !waitsForImages(k))) return;
  const next = new URLSearchParams();
  const dataset = DATASETS.find((d) => d.manifest === ui.dataset.value);
  const typed = checkManifestUrl(ui.manifestUrl.value, location.href);
  if (typed.ok && typed.value) next.set('manifest', ui.manifestUrl.value.trim());
  else if (dataset) next.set('dataset', dataset.id);
  else if (ui.dataset.value.startsWith(LOCAL_PREFIX)) next.set('dataset', `${LOCAL_PARAM}${localIdOf(ui.dataset.value)}`);
  if (ui.model.value) next.set('model', ui.model.value);
  const put = (name: string, f: Field, fallback: string, text = f.input.value.trim()) => {
    const keep = f.check(text).ok ? text : params.get(name);
    if (keep !== null && keep !== fallback) next.set(name, keep);
  };
  put('batch', fields.batchSize, ui.batchSize.defaultValue, (fixedBatch?.chosen ?? ui.batchSize.value).trim());
  put('lr', fields.learningRate, ui.learningRate.defaultValue);
  put('evalEvery', fields.evalEvery, ui.evalEvery.defaultValue);
  put('echo', fields.echo, ui.echo.defaultValue, sweptAside?.kind === 'echo' ? sweptAside.value : undefined);
  put('shuffle', fields.shuffleBuffer, ui.shuffleBuffer.defaultValue);
  put('cache', fields.cacheLimit, ui.cacheLimit.defaultValue);
  put('readers', fields.readers, String(DEFAULT_READERS));
  put('inflight', fields.requestsInFlight, String(DEFAULT_REQUESTS_IN_FLIGHT));
  // A TOC table has no groups: the group last chosen (or the URL's) is kept for the image datasets it may be switched to.
  const group = sweptAside?.kind === 'group' ? sweptAside : { value: ui.fidelity.value, touched: fidelityTouched };
  if (selectedKind() !== 'tabular') urlGroup = group.touched ? group.value : null; // untouched: the dataset's full fidelity
  if (urlGroup !== null) next.set('group', urlGroup);
  // A table's "batches" is not the person's choice; a bad echoMode= waiting for an image dataset is kept as typed.
  const echoMode = paramErrors.has('echoMode') ? params.get('echoMode')! : (echoModeAside ?? ui.echoMode.value);
  if (echoMode !== 'examples') next.set('echoMode', echoMode);
  if (ui.evalMode.value !== 'live') next.set('evalMode', ui.evalMode.value);
  if (ui.echoAuto.checked) next.set('autoEcho', '');
  for (const k of ['seed', 'size', 'share']) if (params.has(k)) next.set(k, params.get(k)!.trim()); // as read: " 32" is 32
  // Not once a name the lab does not read has been dropped: a reload would then start the run that was refused.
  if (autostartParam?.ok && ![...paramErrors.keys()].some((k) => k.startsWith('?'))) next.set('autostart', params.get('autostart')!);
  // Flags without "="; and "/", ":" and "," as they are (legal in a query), so an address reads as it was typed.
  const query = next
    .toString()
    .replace(/=(&|$)/g, '$1')
    .replace(/%2F/g, '/')
    .replace(/%3A/g, ':')
    .replace(/%2C/g, ',');
  if (query !== location.search.slice(1)) history.replaceState(null, '', `${location.pathname}${query ? `?${query}` : ''}`);
}

for (const el of [ui.dataset, ui.model, ui.echoMode, ui.evalMode, ui.echoAuto, ui.fidelity]) el.addEventListener('change', writeUrl);
ui.evalMode.addEventListener('change', () => clearParamError('evalMode'));
for (const f of Object.values(fields)) f.input.addEventListener('input', writeUrl);

// One reader per spare core (the page thread and the GPU driver need one), up to 4; a URL parameter may say otherwise.
const DEFAULT_READERS = Math.min(4, Math.max(1, (navigator.hardwareConcurrency || 2) - 1));
ui.readers.value = String(DEFAULT_READERS);
const ready = applyParams()
  .catch((err: Error) => log(`the address could not be read in full: ${err.message}`, 'error'))
  .then(() => {
    paramsApplied = true;
    writeUrl();
    refreshControls();
  });
void showCacheUsage();
showState('idle');
webgpuBackend()
  .then(async (device) => {
    backend = tf.getBackend();
    adapter = await adapterDescription(device);
    ui.backend.textContent = `backend: ${backend} (${adapter})`;
    ui.backend.classList.add('ok');
    await ready;
    if (autostartParam?.ok && autostartParam.value) {
      // A parameter the lab does not read refuses it too: fidelity=2 meant for group= would train at the default unnoticed.
      if (paramErrors.size) log('autostart refused: the URL has errors (see above)', 'error');
      else void start();
    }
  })
  .catch((err: Error) => {
    gpuError = err.message;
    ui.backend.textContent = 'backend: none (WebGPU unavailable)';
    ui.backend.classList.add('bad');
    ui.gpuError.hidden = false;
    ui.gpuError.textContent = err.message;
    refreshControls();
  });
