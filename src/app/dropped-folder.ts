// A folder dropped on the page, walked into its files with their paths below
// it ("cats/1.jpg"), as the folder picker gives them (webkitRelativePath): the
// File and Directory Entries API is the only way a drop reveals a folder.

/** The parts of FileSystemEntry the walk uses (so tests can give their own). */
export interface DroppedEntry {
  isFile: boolean;
  isDirectory: boolean;
  name: string;
  file?(ok: (f: File) => void, fail: (e: unknown) => void): void;
  createReader?(): { readEntries(ok: (entries: DroppedEntry[]) => void, fail: (e: unknown) => void): void };
}

/** Every file under the dropped entries, with its path from the dropped folder down. */
export async function filesUnder(entries: DroppedEntry[], prefix = ''): Promise<{ path: string; file: File }[]> {
  const out: { path: string; file: File }[] = [];
  for (const entry of entries) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isFile && entry.file) {
      out.push({ path, file: await new Promise<File>((ok, fail) => entry.file!(ok, fail)) });
    } else if (entry.isDirectory && entry.createReader) {
      const reader = entry.createReader();
      // readEntries answers in batches (about 100 in Chromium) until it answers with none.
      for (;;) {
        const batch = await new Promise<DroppedEntry[]>((ok, fail) => reader.readEntries(ok, fail));
        if (batch.length === 0) break;
        out.push(...(await filesUnder(batch, path)));
      }
    }
  }
  return out;
}
