// The one error type of the JPEG reader and transcoder. Kept in its own file so
// the parser, the scan decoders and transcode.ts can all throw it without
// importing each other.

/** A JPEG the transcoder cannot (or must not) turn into the dataset's progressive script. */
export class TranscodeError extends Error {
  override name = 'TranscodeError';
}
