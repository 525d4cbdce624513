// What the test split says about the model, redrawn at each evaluation: the
// confusion matrix with each class's accuracy (its row's diagonal share), and a
// few misclassified test images with their true and predicted classes.
import type { Mistake } from '../train/trainer.js';

/** Rows: true class; columns: predicted class. Cells shaded by their share of the row, so errors stand out at any split size. */
export function drawConfusion(table: HTMLTableElement, classes: string[], confusion: number[], examples: number): void {
  const k = classes.length;
  // Upright over their columns (style.css), the names take height, not width: longer ones than the rows' ("T-shirt/top").
  const columns = classes.map((c) => `<th scope="col" title="${esc(c)}">${esc(short(c, 14))}</th>`).join('');
  const head = `<tr><th scope="col">true \\ predicted</th>${columns}<th scope="col">accuracy</th></tr>`;
  const rows = classes.map((name, t) => {
    const row = confusion.slice(t * k, (t + 1) * k);
    const total = row.reduce((a, b) => a + b, 0);
    const cells = row.map((v, p) => {
      const share = total ? v / total : 0;
      // Diagonal cells in green, errors in red; the shade says how large a share of the class.
      const hue = p === t ? 140 : 0;
      // Never darker than 72% lightness: the dark numbers keep a 4.5:1 contrast on every shade.
      const style = v ? ` style="background: hsl(${hue} 60% ${Math.round(97 - 25 * share)}%)"` : '';
      return `<td${style} title="${v} of ${total} ${esc(name)} predicted ${esc(classes[p]!)}">${v}</td>`;
    });
    const accuracy = total ? `${((100 * row[t]!) / total).toFixed(0)}%` : '–';
    return `<tr><th scope="row" title="${esc(name)}">${esc(short(name))}</th>${cells.join('')}<td class="class-accuracy">${accuracy}</td></tr>`;
  });
  table.innerHTML = `<caption>Test split: ${examples.toLocaleString('en-US')} examples</caption>${head}${rows.join('')}`;
}

/** The test split's largest class and its share (`counts`: its examples per class, classTotals): what always guessing it scores. */
export function majorityClass(classes: string[], counts: number[]): { name: string; share: number } | undefined {
  const examples = counts.reduce((a, b) => a + b, 0);
  if (!examples || counts.length !== classes.length) return undefined;
  const top = counts.indexOf(Math.max(...counts));
  return { name: classes[top]!, share: counts[top]! / examples };
}

/**
 * The line under the accuracy tile: what always guessing the largest class would score, so that 89.5% on a table where
 * 89.5% of rows are one class reads as no learning. Shares are compared as the tile shows them, to 0.1%.
 */
export function baselineLine(accuracy: number, base: { name: string; share: number }): string {
  const shown = (x: number) => (100 * x).toFixed(1);
  const always = `always “${base.name}”: ${shown(base.share)}%`;
  return Number(shown(accuracy)) <= Number(shown(base.share)) ? `no better than ${always}` : always;
}

/** Small canvases of misclassified images, each captioned "true → predicted". */
export function drawMistakes(box: HTMLElement, classes: string[], shape: { width: number; height: number; channels: number }, mistakes: Mistake[]): void {
  const { width: w, height: h, channels: c } = shape;
  box.replaceChildren(
    ...mistakes.map((m) => {
      const figure = document.createElement('figure');
      const canvas = document.createElement('canvas');
      canvas.width = w;
      canvas.height = h;
      const ctx = canvas.getContext('2d')!;
      const image = ctx.createImageData(w, h);
      for (let i = 0; i < w * h; i++) {
        image.data[4 * i] = m.pixels[i * c]!;
        image.data[4 * i + 1] = m.pixels[i * c + (c === 3 ? 1 : 0)]!;
        image.data[4 * i + 2] = m.pixels[i * c + (c === 3 ? 2 : 0)]!;
        image.data[4 * i + 3] = 255;
      }
      ctx.putImageData(image, 0, 0);
      const caption = document.createElement('figcaption');
      caption.textContent = `${classes[m.label]} → ${classes[m.predicted]}`;
      canvas.setAttribute('role', 'img');
      canvas.setAttribute('aria-label', `a ${classes[m.label]} taken for a ${classes[m.predicted]}`);
      figure.append(canvas, caption);
      return figure;
    }),
  );
}

const short = (name: string, max = 8) => (name.length > max ? `${name.slice(0, max - 1)}…` : name);
const esc = (s: string) => s.replace(/[&<>"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
