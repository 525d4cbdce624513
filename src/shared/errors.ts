// Errors shared by the formats (PCR and TOC) and their readers, so neither
// format's code imports the other's just to throw.

/** A manifest that does not hold what it must; the message names the file and the field. */
export class ManifestError extends Error {
  override name = 'ManifestError';
}
