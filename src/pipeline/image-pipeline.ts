// The image pipeline over PCR records: fetch -> decode -> echo -> augment ->
// shuffle -> batch. Bad records and images are reported as warnings naming the
// record, image and byte offset, and skipped: the stream goes on with the rest.
import { JpegDecodeError, type TurboJpeg } from '../jpeg/turbo.js';
import { bytesForGroup, imageCount, validateManifest, type PcrManifest, type RecordEntry } from '../pcr/manifest.js';
import { RecordError, RecordPrefix } from '../pcr/record.js';
import type { Batch, DatasetInfo, PipelineEvent, SampleImages } from './api.js';
import { BasePipeline } from './base.js';
import { decodeToShape, firstSamples, imageBatches, sampleOf, type ImageExample } from './image-stages.js';

/** Per-record cap on image-level warnings, so one rotten record cannot flood the log. */
const IMAGE_WARNINGS_PER_RECORD = 3;

export class ImagePipeline extends BasePipeline<PcrManifest> {
  private latest: SampleImages | undefined;

  constructor(
    private readonly decoder: TurboJpeg,
    emit: (event: PipelineEvent) => void,
  ) {
    super(emit);
  }

  protected validate(json: unknown, where: string): PcrManifest {
    return validateManifest(json, where);
  }

  protected describe(): DatasetInfo {
    const m = this.manifest;
    const split = this.options.split;
    return {
      kind: 'image',
      name: m.name,
      classes: m.classes,
      inputShape: [m.image.height, m.image.width, m.image.channels],
      image: m.image,
      scanGroups: m.scanGroups,
      examples: imageCount(m, split),
      bytesPerGroup: Array.from({ length: m.scanGroups }, (_, g) => bytesForGroup(m, split, g + 1)),
      ...(m.msssim ? { msssim: m.msssim } : {}),
      ...(m.attribution ? { attribution: m.attribution } : {}),
    };
  }

  setScanGroup(group: number): void {
    this.options.scanGroup = Math.min(this.manifest.scanGroups, Math.max(1, Math.round(group)));
  }

  /** The first images of the most recently decoded record, as the model sees them. */
  samples(n: number): SampleImages | undefined {
    return firstSamples(this.latest, n);
  }

  protected batches(): AsyncIterable<Batch> {
    const o = this.options;
    const examples = this.readEpochs(this.manifest.splits[o.split]!.records, (r) => this.readRecord(r));
    return imageBatches(examples, { shape: this.manifest.image, ...this.stageControls() });
  }

  /** Fetches a record up to the current scan group and decodes every image. Never throws for bad data. */
  private async readRecord(entry: RecordEntry): Promise<ImageExample[]> {
    const loaded = await this.fetchRecord(entry);
    if (!loaded) return [];
    const { prefix, group } = loaded;
    const { width, height, channels } = this.manifest.image;
    // Images stored at their own sizes are decoded at a reduced DCT scale where possible, then scaled to the model's input.
    const variable = this.manifest.variableSize === true;
    const start = performance.now();
    const examples: ImageExample[] = [];
    let warned = 0;
    for (let i = 0; i < prefix.header.images; i++) {
      try {
        const jpeg = prefix.image(i, group);
        const img = variable ? decodeToShape(this.decoder, jpeg, this.manifest.image) : this.decoder.decode(jpeg, channels);
        if (img.width !== width || img.height !== height) throw new JpegDecodeError(`decoded ${img.width}x${img.height}, the manifest says ${width}x${height}`);
        examples.push({ pixels: img.data, label: prefix.header.labels[i]! });
      } catch (err) {
        if (!(err instanceof JpegDecodeError)) throw err;
        this.stats.examplesDropped++;
        if (warned++ < IMAGE_WARNINGS_PER_RECORD)
          this.warn(`record ${entry.file}, image ${i} (chunk at byte ${prefix.chunkOffset(i, 1)}): ${err.message}; image left out`);
      }
    }
    if (warned > IMAGE_WARNINGS_PER_RECORD) this.warn(`record ${entry.file}: ${warned - IMAGE_WARNINGS_PER_RECORD} more images left out`);
    this.stats.decodeMs += performance.now() - start;
    this.stats.examplesRead += examples.length;
    this.latest = sampleOf(examples, this.manifest.image, group) ?? this.latest;
    return examples;
  }

  /**
   * One Range request for the record's prefix at the current group. The record's
   * own header is the truth: if the manifest's offsets disagree we say so, and
   * fetch again with the right length when the first read came up short.
   */
  private async fetchRecord(entry: RecordEntry): Promise<{ prefix: RecordPrefix; group: number } | undefined> {
    const group = this.options.scanGroup;
    let prefix: RecordPrefix;
    try {
      let bytes = await this.fetchCounted(entry.file, entry.groupEnds[group]!, group, entry.images);
      prefix = new RecordPrefix(bytes, entry.file);
      if (prefix.header.groups !== this.manifest.scanGroups) {
        throw new RecordError(entry.file, 12, `has ${prefix.header.groups} scan groups, the manifest says ${this.manifest.scanGroups}`);
      }
      const trueEnd = prefix.header.groupEnds[group]!;
      if (trueEnd !== entry.groupEnds[group] || prefix.header.images !== entry.images) {
        this.warn(
          `record ${entry.file}: the manifest says ${entry.images} images with group ${group} ending at byte ${entry.groupEnds[group]}, the record's header ` +
            `says ${prefix.header.images} images ending at byte ${trueEnd}; following the header`,
        );
        if (trueEnd > bytes.byteLength && bytes.byteLength === entry.groupEnds[group]) {
          bytes = await this.fetchCounted(entry.file, trueEnd, group, prefix.header.images);
          prefix = new RecordPrefix(bytes, entry.file);
        }
      }
    } catch (err) {
      if (this.abort.signal.aborted) return undefined;
      this.warn(`${(err as Error).message}; record skipped`);
      return undefined;
    }
    const usable = Math.min(group, prefix.completeGroups);
    if (usable === 0) {
      this.warn(
        `record ${entry.file}: truncated at byte ${prefix.bytes.byteLength}, before scan group 1 ends (byte ${prefix.header.groupEnds[1]}); record skipped`,
      );
      return undefined;
    }
    if (usable < group) {
      this.warn(
        `record ${entry.file}: truncated at byte ${prefix.bytes.byteLength}, scan group ${group} would end at byte ${prefix.header.groupEnds[group]}; using ` +
          `group ${usable}`,
      );
    }
    return { prefix, group: usable };
  }
}
