// A dropped folder walked into its files: paths from the dropped folder down, as
// the folder picker gives them, through directory readers that answer in batches.
import { describe, expect, it } from 'vitest';
import { filesUnder, type DroppedEntry } from '../../../src/app/dropped-folder.js';

const file = (name: string): DroppedEntry => ({ isFile: true, isDirectory: false, name, file: (ok) => ok(new File([name], name)) });

/** A directory whose reader answers `perBatch` entries at a time, then none (as Chromium's does, about 100 at a time). */
function dir(name: string, children: DroppedEntry[], perBatch = 2): DroppedEntry {
  return {
    isFile: false,
    isDirectory: true,
    name,
    createReader() {
      let at = 0;
      return {
        readEntries(ok) {
          const batch = children.slice(at, at + perBatch);
          at += batch.length;
          setTimeout(() => ok(batch), 0);
        },
      };
    },
  };
}

describe('a dropped folder', () => {
  it('yields every file with its path below the folder, whatever the batches', async () => {
    const tree = dir('pets', [dir('cats', [file('1.jpg'), file('2.jpg'), file('3.png')]), dir('dogs', [file('a.jpg')]), file('README')]);
    const files = await filesUnder([tree]);
    expect(files.map((f) => f.path).sort()).toEqual(['pets/README', 'pets/cats/1.jpg', 'pets/cats/2.jpg', 'pets/cats/3.png', 'pets/dogs/a.jpg']);
    expect(await files.find((f) => f.path === 'pets/dogs/a.jpg')!.file.text()).toBe('a.jpg');
  });

  it('an empty folder yields nothing', async () => {
    expect(await filesUnder([dir('empty', [])])).toEqual([]);
  });
});
