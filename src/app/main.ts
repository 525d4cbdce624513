// The page: wires controls, charts and the sample grid to a LabSession.
// URL parameters preset the controls (dataset, model, batch, group, echo, evalEvery, autostart).
import './style.css';
import * as tf from '@tensorflow/tfjs';
import { adapterDescription, webgpuBackend } from '../gpu/backend.js';
import type { DatasetInfo } from '../pipeline/api.js';
import { MODELS, modelById, modelsFor } from '../train/models/registry.js';
import { LabSession } from '../train/session.js';
import type { TrainerState } from '../train/trainer.js';
import { localManifestUrl, LOCAL_PREFIX } from '../pipeline/local-store.js';
import { setupBuildPanel } from './build-panel.js';
import { LiveChart } from './charts.js';
import { DATASETS } from './datasets.js';
import { drawSamples } from './samples.js';
import type { LabSnapshot } from './test-api.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const params = new URLSearchParams(location.search);

const ui = {
  backend: $('backend'),
  state: $('state'),
  gpuError: $('gpu-error'),
  dataset: $<HTMLSelectElement>('dataset'),
  manifestUrl: $<HTMLInputElement>('manifest-url'),
  model: $<HTMLSelectElement>('model'),
  batchSize: $<HTMLInputElement>('batch-size'),
  start: $<HTMLButtonElement>('start'),
  pause: $<HTMLButtonElement>('pause'),
  stop: $<HTMLButtonElement>('stop'),
  fidelity: $<HTMLInputElement>('fidelity'),
  fidelityLabel: $('fidelity-label'),
  fidelityTable: $<HTMLTableElement>('fidelity-table'),
  echo: $<HTMLInputElement>('echo'),
  datasetInfo: $('dataset-info'),
  log: $<HTMLOListElement>('log'),
  samples: $<HTMLCanvasElement>('samples'),
  samplesCaption: $('samples-caption'),
  features: $('features'),
  batchHint: $('batch-hint'),
  m: { step: $('m-step'), loss: $('m-loss'), acc: $('m-acc'), speed: $('m-speed'), bytes: $('m-bytes'), wait: $('m-wait') },
};

const charts = {
  loss: new LiveChart($('chart-loss'), 'training loss', 'step', '#c0392b'),
  acc: new LiveChart($('chart-acc'), 'test accuracy', 'step', '#1f7a4d'),
  speed: new LiveChart($('chart-speed'), 'images / s', 'step', '#2c5aa0'),
  bytes: new LiveChart($('chart-bytes'), 'MB fetched', 'step', '#7d3c98'),
};

/** The served datasets at once, then those built in this browser (IndexedDB) as they are read. */
async function listDatasets(select?: string): Promise<void> {
  const served = document.createElement('optgroup');
  served.label = 'Served';
  served.append(...DATASETS.map((d) => new Option(d.label, d.manifest)));
  const show = (local: Awaited<ReturnType<typeof buildPanel.list>>) => {
    const mine = document.createElement('optgroup');
    mine.label = 'Built in this browser';
    mine.append(...local.map((d) => new Option(`${d.name} (${(d.bytes / 1024).toFixed(0)} KiB)`, localManifestUrl(d.id))));
    const current = ui.dataset.value;
    ui.dataset.replaceChildren(served, ...(local.length ? [mine] : []));
    ui.dataset.value = select ?? (current || DATASETS[0]!.manifest);
    if (!ui.dataset.value) ui.dataset.value = DATASETS[0]!.manifest;
    listModels(ui.model.value);
  };
  show([]);
  show(await buildPanel.list().catch(() => []));
}

const buildPanel = setupBuildPanel({
  selected: () => ui.dataset.value,
  log: (m, kind) => log(m, kind),
  onBuilt: (r) => void listDatasets(r.manifestUrl),
  onDeleted: () => void listDatasets(),
});

/** Lists the models that read the chosen dataset's kind (all of them for a typed-in URL). */
function listModels(preferred?: string): void {
  const entry = ui.manifestUrl.value.trim() ? undefined : DATASETS.find((d) => d.manifest === ui.dataset.value);
  const kind = entry?.kind ?? (ui.dataset.value.startsWith(LOCAL_PREFIX) && !ui.manifestUrl.value.trim() ? 'image' : undefined);
  const models = kind ? modelsFor(kind) : MODELS;
  ui.model.replaceChildren(...models.map((m) => new Option(m.label, m.id)));
  if (preferred && models.some((m) => m.id === preferred)) ui.model.value = preferred;
}
if (params.get('manifest')) ui.manifestUrl.value = params.get('manifest')!;
const initialModel = params.get('model') ?? 'cnn';
void listDatasets(DATASETS.find((d) => d.id === params.get('dataset'))?.manifest);
listModels(initialModel);
ui.dataset.addEventListener('change', () => {
  listModels(ui.model.value);
  buildPanel.refresh();
});
ui.manifestUrl.addEventListener('change', () => listModels(ui.model.value));
ui.batchSize.value = params.get('batch') ?? ui.batchSize.value;
ui.echo.value = params.get('echo') ?? ui.echo.value;

let session: LabSession | undefined;
let backend = 'none';
let adapter = '';
let gpuError: string | undefined;
let info: DatasetInfo | undefined;

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 ** 2).toFixed(2)} MiB`;
}

function log(message: string, kind: 'info' | 'warning' | 'error' = 'info'): void {
  const li = document.createElement('li');
  li.className = kind;
  li.textContent = message;
  ui.log.append(li);
  ui.log.scrollTop = ui.log.scrollHeight;
}

function showState(state: TrainerState, detail?: string): void {
  ui.state.textContent = detail ? `${state}: ${detail}` : state;
  const live = state === 'running' || state === 'paused' || state === 'loading';
  ui.start.disabled = live || !!gpuError;
  ui.pause.disabled = !(state === 'running' || state === 'paused');
  ui.pause.textContent = state === 'paused' ? 'Resume' : 'Pause';
  ui.stop.disabled = !live;
  if (state === 'failed') log(`training failed: ${detail}`, 'error');
}

/** One row per scan group: bytes per image, share of the full record, MS-SSIM. */
function drawFidelityTable(i: DatasetInfo): void {
  const full = i.bytesPerGroup[i.scanGroups - 1]!;
  const head = `<tr><th>group</th><th>B/image</th><th>bytes</th>${i.msssim ? '<th>MS-SSIM</th>' : ''}</tr>`;
  const rows = i.bytesPerGroup.map((b, g) => `<tr data-group="${g + 1}"><td>${g + 1}</td><td>${(b / i.examples).toFixed(0)}</td><td>${((100 * b) / full).toFixed(0)}%</td>${i.msssim ? `<td>${i.msssim[g]!.toFixed(3)}</td>` : ''}</tr>`);
  ui.fidelityTable.innerHTML = i.kind === 'image' ? head + rows.join('') : '';
}

function updateFidelityLabel(): void {
  for (const row of ui.fidelityTable.querySelectorAll('tr[data-group]')) row.classList.toggle('current', (row as HTMLElement).dataset.group === ui.fidelity.value);
  const g = Number(ui.fidelity.value);
  const max = Number(ui.fidelity.max);
  if (!info) {
    ui.fidelityLabel.textContent = `scan group ${g} of ${max}`;
    return;
  }
  if (info.kind === 'tabular') {
    ui.fidelityLabel.textContent = `TOC is lossless: one fidelity, ${(info.bytesPerGroup[0]! / info.examples).toFixed(1)} bytes per row`;
    return;
  }
  const bytes = info.bytesPerGroup[g - 1]!;
  const full = info.bytesPerGroup[max - 1]!;
  const ssim = info.msssim ? `, MS-SSIM ${info.msssim[g - 1]!.toFixed(3)}` : '';
  ui.fidelityLabel.textContent = `scan group ${g} of ${max}: ${(bytes / info.examples).toFixed(0)} bytes/image, ${((100 * bytes) / full).toFixed(0)}% of full${ssim}`;
}

async function refreshSamples(): Promise<void> {
  const s = await session?.samples(64)?.catch(() => undefined);
  if (!s) return;
  drawSamples(ui.samples, s);
  ui.samplesCaption.textContent = `as decoded at scan group ${s.group}`;
}

async function start(): Promise<void> {
  await stop();
  for (const c of Object.values(charts)) c.clear();
  ui.log.replaceChildren();
  const manifestUrl = ui.manifestUrl.value.trim() || ui.dataset.value;
  info = undefined;
  session = new LabSession(
    {
      manifestUrl,
      model: modelById(ui.model.value),
      batchSize: Math.max(1, Number(ui.batchSize.value) || 32),
      learningRate: Number(params.get('lr') ?? 0.005),
      // Until the person moves the slider, a run starts at the dataset's full fidelity (the pipeline clamps).
      scanGroup: fidelityTouched ? Number(ui.fidelity.value) : Number(params.get('group') ?? Infinity),
      echoFactor: Math.max(1, Number(ui.echo.value) || 1),
      evalEvery: Number(params.get('evalEvery') ?? 50),
      seed: Number(params.get('seed') ?? 1),
    },
    {
      state: showState,
      info(i) {
        info = i;
        ui.fidelity.max = String(i.scanGroups);
        ui.fidelity.value = String(Math.min(session!.config.scanGroup, i.scanGroups));
        const shape = i.image ? `${i.image.width}x${i.image.height}x${i.image.channels} images, ${i.scanGroups} scan groups` : `${i.inputShape[0]} columns, TOC-compressed`;
        ui.datasetInfo.textContent = `${i.name}: ${i.examples} training examples, ${shape}, ${i.classes.length} classes.${i.attribution ? ' ' + i.attribution + '.' : ''}`;
        const tabular = i.kind === 'tabular';
        ui.fidelity.disabled = ui.batchSize.disabled = tabular;
        ui.batchHint.hidden = !tabular;
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
        ui.m.step.textContent = String(m.step);
        ui.m.loss.textContent = m.loss.toFixed(3);
        ui.m.speed.textContent = m.imagesPerSecond.toFixed(1);
        ui.m.bytes.textContent = formatBytes(m.bytesFetched);
        ui.m.wait.textContent = `${(100 * m.waitFraction).toFixed(0)}%`;
        charts.loss.push(m.step, m.loss);
        charts.speed.push(m.step, m.imagesPerSecond);
        charts.bytes.push(m.step, m.bytesFetched / 1024 ** 2);
        if (m.step % 5 === 1) void refreshSamples();
      },
      eval(m) {
        ui.m.acc.textContent = `${(100 * m.accuracy).toFixed(1)}%`;
        charts.acc.push(m.step, m.accuracy);
      },
      fetch() {},
      warning: (message) => log(message, 'warning'),
    },
  );
  try {
    await session.start();
  } catch (err) {
    log(`could not start: ${(err as Error).message}`, 'error');
    showState('failed', (err as Error).message);
  }
}

async function stop(): Promise<void> {
  await session?.stop();
}

ui.start.addEventListener('click', () => void start());
ui.pause.addEventListener('click', () => (session?.state === 'paused' ? session.resume() : session?.pause()));
ui.stop.addEventListener('click', () => void stop());
let fidelityTouched = false;
ui.fidelity.addEventListener('input', () => {
  fidelityTouched = true;
  updateFidelityLabel();
  session?.setScanGroup(Number(ui.fidelity.value));
});
ui.echo.addEventListener('change', () => {
  const e = Number(ui.echo.value);
  if (e >= 1) session?.setEchoFactor(e);
  else log(`echo factor must be at least 1, got ${ui.echo.value}`, 'warning');
});

window.__lab = {
  snapshot: (): LabSnapshot => ({
    backend,
    adapter,
    gpuError,
    state: session?.state ?? 'idle',
    dataset: info,
    scanGroup: Number(ui.fidelity.value),
    echoFactor: Number(ui.echo.value),
    steps: (session?.steps ?? []).map(({ step, loss, time, imagesPerSecond, bytesFetched }) => ({ step, loss, time, imagesPerSecond, bytesFetched })),
    evals: [...(session?.evals ?? [])],
    fetches: [...(session?.fetches ?? [])],
    warnings: [...(session?.warnings ?? [])],
    pipeline: session?.steps.at(-1)?.pipeline,
  }),
  progress: () => {
    const steps = session?.steps ?? [];
    const lite = (m: (typeof steps)[number] | undefined) => m && { step: m.step, loss: m.loss, time: m.time, imagesPerSecond: m.imagesPerSecond, bytesFetched: m.bytesFetched };
    return { state: session?.state ?? 'idle', adapter, steps: steps.length, first: lite(steps[0]), last: lite(steps.at(-1)), lastEval: session?.evals.at(-1), warnings: session?.warnings.length ?? 0 };
  },
  start,
  pause: () => session?.pause(),
  resume: () => session?.resume(),
  stop,
};

showState('idle');
webgpuBackend()
  .then(async (device) => {
    backend = tf.getBackend();
    adapter = await adapterDescription(device);
    ui.backend.textContent = `backend: ${backend} (${adapter})`;
    ui.backend.classList.add('ok');
    if (params.has('autostart')) void start();
  })
  .catch((err: Error) => {
    gpuError = err.message;
    ui.backend.textContent = 'backend: none (WebGPU unavailable)';
    ui.backend.classList.add('bad');
    ui.gpuError.hidden = false;
    ui.gpuError.textContent = err.message;
    showState('idle');
  });
