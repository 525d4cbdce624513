// The record source for bytelab's own PCR format (docs/pcr.md): manifest.json
// lists each record's file, image count and where every scan group ends, so a
// record at group g is its first groupEnds[g] bytes. The record's own header is
// the truth: when the manifest disagrees we say so and follow the header.
import { validateManifest, type RecordEntry } from '../pcr/manifest.js';
import { RecordError, RecordPrefix } from '../pcr/record.js';
import { fetchManifest } from './base.js';
import type { ImageRecordPrefix, RecordSource } from './image-pipeline.js';

export const pcrRecords: RecordSource<RecordEntry> = {
  async open(options, given, { signal }) {
    const json = given ?? (await fetchManifest(options.manifestUrl, signal));
    return { url: options.manifestUrl, dataset: validateManifest(json, options.manifestUrl) };
  },

  // The manifest checks that every record has scanGroups + 1 group ends.
  groups: (entry) => entry.groupEnds.length - 1,

  prefixLength: (entry, group) => entry.groupEnds[group]!,

  async parse(entry, bytes, group, { warn, fetch }): Promise<ImageRecordPrefix> {
    let prefix = new RecordPrefix(bytes, entry.file);
    const groups = entry.groupEnds.length - 1;
    if (prefix.header.groups !== groups) throw new RecordError(entry.file, 12, `has ${prefix.header.groups} scan groups, the manifest says ${groups}`);
    const trueEnd = prefix.header.groupEnds[group]!;
    if (trueEnd !== entry.groupEnds[group] || prefix.header.images !== entry.images) {
      warn(
        `record ${entry.file}: the manifest says ${entry.images} images with group ${group} ending at byte ${entry.groupEnds[group]}, the record's header ` +
          `says ${prefix.header.images} images ending at byte ${trueEnd}; following the header`,
      );
      // The first read came up short because the manifest was wrong, not because the file is: read the rest.
      if (trueEnd > bytes.byteLength && bytes.byteLength === entry.groupEnds[group]) {
        prefix = new RecordPrefix(await fetch(trueEnd, prefix.header.images), entry.file);
      }
    }
    return prefix;
  },
};
