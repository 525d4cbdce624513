// The "saved run" line: the newest checkpoint in IndexedDB (a run paused,
// stopped, or cut off by a reload or a crash), with Continue and Discard. While
// a run trains, the line says where its latest checkpoint stands instead.
import { isMissingLocal } from '../storage/local-datasets.js';
import { RunStore } from '../storage/runs.js';
import type { Checkpoint } from '../train/checkpoint.js';
import { UNFINISHED_STATES } from '../train/run-record.js';
import { trainedElsewhere, whenFreed } from './run-lock.js';
import { MODELS } from '../train/models/registry.js';

export interface ResumePanel {
  store: RunStore;
  /** Shows the newest saved run (when no run is live), or nothing. */
  refresh(): Promise<void>;
  /** A live run's checkpoint was written at `step` (or failed, with the reason). */
  saved(step: number, error?: string): void;
  hide(): void;
}

export function setupResumePanel(
  box: HTMLElement,
  text: HTMLElement,
  go: HTMLButtonElement,
  discard: HTMLButtonElement,
  onContinue: (checkpoint: Checkpoint) => void,
  isLive: () => boolean,
): ResumePanel {
  const store = new RunStore();
  let shown: Checkpoint | undefined;
  let unreadable: string | undefined;
  let generation = 0; // a refresh answered after a newer one (or after a run started) is dropped
  /** Runs trained in another tab whose end this tab waits for (then the line is read again). */
  const awaitingFree = new Set<string>();

  /** `buttons`: Continue and Discard; 'discard': Discard only (a saved run that cannot be continued). */
  const show = (message: string, buttons: boolean | 'discard') => {
    const focused = document.activeElement;
    box.hidden = false;
    text.textContent = message;
    go.hidden = buttons !== true || unreadable !== undefined;
    discard.hidden = !buttons;
    // A button pressed and then hidden (Continue refused: the run trains in another tab) hands focus to the words saying
    // why, not to the page's start.
    if ((focused === go && go.hidden) || (focused === discard && discard.hidden)) text.focus({ preventScroll: true });
  };

  go.addEventListener('click', async () => {
    const clicked = shown?.runId;
    if (!clicked || isLive()) return;
    // Read again as it is now, here (a refresh may be overtaken by another): another tab may have continued the run since it
    // was shown (it trains it, or saved it later), or saved a newer one.
    const latest = await store.latestCheckpoint().catch(() => undefined);
    const offered = latest?.runId === clicked && !(await trainedElsewhere(clicked)) && !(await isMissingLocal(latest.config.manifestUrl));
    if (offered && !isLive()) return onContinue(latest);
    // The line says what stands now, and the person reads it first.
    if (!isLive()) await panel.refresh();
  });
  // Another tab saved or dropped a checkpoint: the run it trains is named here as it saves its first, not after a reload.
  store.onNews((news) => {
    if (news === 'checkpoints' && !isLive()) void panel.refresh();
  });
  // A tab come back to the front shows the saved run as it stands, not as it stood when the tab was left.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && !isLive()) void panel.refresh();
  });
  discard.addEventListener('click', async () => {
    const id = shown?.runId;
    const hadFocus = document.activeElement === discard;
    shown = undefined;
    box.hidden = true;
    // A checkpoint this lab cannot read (another format) is offered for discarding only: then every saved run goes.
    try {
      await (id ? store.removeCheckpoint(id) : store.clearCheckpoints());
      // A run cut off mid-run keeps its unfinished state in its record: it is not one cut off before its first checkpoint.
      const record = id ? await store.run(id) : undefined;
      if (record && UNFINISHED_STATES.has(record.state)) await store.saveRun({ ...record, state: 'discarded' });
    } catch (err) {
      show(`The saved run could not be discarded: ${(err as Error).message}`, false);
      return;
    }
    unreadable = undefined;
    await panel.refresh(); // the next saved run, if any, at once (not first after a reload)
    // The keyboard's focus stays on Discard for the next saved run (hidden while the line was read again, it fell to the page).
    if (hadFocus && !box.hidden) (discard.hidden ? text : discard).focus({ preventScroll: true });
  });

  /**
   * What the line says of the last run recorded, if a page closed while it ran, before its first checkpoint: it has none to
   * continue from (before, the line offered an older run without a word, and the person took it for this one).
   */
  async function cutOffNote(latest: Checkpoint | undefined): Promise<string> {
    const last = await store.newestRun().catch(() => undefined);
    if (!last || !UNFINISHED_STATES.has(last.state) || last.id === latest?.runId || (await trainedElsewhere(last.id))) return '';
    return `The last run, "${last.name}", was cut off before its first checkpoint, so it cannot be continued. `;
  }

  const panel: ResumePanel = {
    store,
    async refresh() {
      const mine = ++generation;
      let latest: Checkpoint | undefined;
      let count = 0;
      try {
        count = await store.checkpointCount();
        latest = await store.latestCheckpoint();
        unreadable = undefined;
      } catch (err) {
        unreadable = (err as Error).message;
      }
      // Its row's name in the runs table, which sets it apart from runs of the same dataset and model (their scan group, echo).
      const record = latest && (await store.run(latest.runId).catch(() => undefined));
      const elsewhere = latest !== undefined && (await trainedElsewhere(latest.runId));
      const datasetGone = latest !== undefined && (await isMissingLocal(latest.config.manifestUrl));
      const cut = unreadable ? '' : await cutOffNote(latest);
      if (mine !== generation || isLive()) return;
      shown = latest;
      if (unreadable) return show(`${unreadable}.`, true);
      if (!latest) {
        if (cut) return show(cut.trim(), false);
        box.hidden = true;
        return;
      }
      const model = MODELS.find((m) => m.id === latest.config.modelId)?.label ?? latest.config.modelId;
      const when = new Date(latest.savedAt).toLocaleString();
      const share = latest.config.share ? `, share ${latest.config.share.rank + 1} of ${latest.config.share.count}` : '';
      const named = record ? ` "${record.name}"` : '';
      const what = `${latest.config.datasetName}${share}, ${model}, step ${latest.step.toLocaleString('en-US')} (saved ${when})`;
      if (elsewhere) {
        // Not offered: a second copy would overwrite the first's record and checkpoint. Offered once that tab lets it go.
        show(`${cut}Saved run${named}: ${what}. It is training in another tab of this lab; it can be continued here once that tab stops it or closes.`, false);
        // One wait per run, however often the line is read meanwhile.
        if (!awaitingFree.has(latest.runId)) {
          awaitingFree.add(latest.runId);
          void whenFreed(latest.runId).then(() => {
            awaitingFree.delete(latest.runId);
            if (!isLive()) void panel.refresh();
          });
        }
        return;
      }
      const older = count > 1 ? ` ${count - 1} older saved run${count > 2 ? 's' : ''} behind it: Discard shows the next.` : '';
      // Its dataset was built in this browser and deleted since: there is nothing to read it from (Continue failed).
      if (datasetGone)
        return show(`${cut}Saved run${named}: ${what}. Its dataset was built in this browser and has been deleted: it cannot be continued.${older}`, 'discard');
      show(`${cut}Saved run${named}: ${what}.${older}`, true);
    },
    saved(step, error) {
      generation++;
      show(error ? `Checkpoint at step ${step} failed: ${error}` : `Checkpoint saved at step ${step.toLocaleString('en-US')}.`, false);
    },
    hide() {
      generation++;
      box.hidden = true;
    },
  };
  return panel;
}
