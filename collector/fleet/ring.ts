// The last sequenced frames of this epoch, kept so a hub that reconnects can be brought up to date
// without a fresh snapshot. Bounded by count and by bytes; the oldest frames fall out first.

export class FrameRing {
  private frames: { seq: number; text: string }[] = [];
  private bytes = 0;

  constructor(
    private readonly maxFrames = 4096,
    private readonly maxBytes = 16 << 20,
  ) {}

  push(seq: number, text: string): void {
    this.frames.push({ seq, text });
    this.bytes += text.length;
    while (this.frames.length > this.maxFrames || (this.bytes > this.maxBytes && this.frames.length > 1)) {
      this.bytes -= this.frames.shift()!.text.length;
    }
  }

  /**
   * Frames after `seq` up to `last`, or null when some of them are no longer held (or `seq` was
   * never sent): then only a snapshot can bring the receiver up to date.
   */
  since(seq: number, last: number): string[] | null {
    if (seq === last) return [];
    if (seq > last || seq < 0) return null;
    const first = this.frames[0];
    if (!first || first.seq > seq + 1) return null;
    return this.frames.filter((f) => f.seq > seq).map((f) => f.text);
  }
}
