// Errors shared by the formats (PCR and TOC) and their readers, so neither
// format's code imports the other's just to throw.

/** A manifest that does not hold what it must; the message names the file and the field. */
export class ManifestError extends Error {
  override name = 'ManifestError';
}

/**
 * A reader gave up: every record it can be given failed since it last read one. Its name crosses the worker boundary (comlink keeps an
 * error's name), so the session can tell a reader that ran dry from a pipeline that broke.
 */
export class NoReadableData extends Error {
  override name = 'NoReadableData';
}

/** The dataset has no such split (a manifest without a test split, say): by its name the session tells it from one that fails. */
export class NoSuchSplit extends Error {
  override name = 'NoSuchSplit';
}
