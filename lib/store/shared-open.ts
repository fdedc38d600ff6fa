/**
 * An open that several users share (a backend that several capability stores open): the first `open` starts it and
 * the others wait for that start; the last `close` stops it. A start that fails is undone for the callers that waited
 * on it, and the next `open` starts again.
 */
export class SharedOpen {
  private opens = 0;
  private opening?: Promise<void>;

  constructor(
    private readonly start: () => Promise<void>,
    /** Lets go of what `start` made; called once the last user closed. */
    private readonly stop: () => Promise<void>,
  ) {}

  /** Starts (the first caller; later ones share it) and resolves once started. */
  async open(): Promise<void> {
    this.opens++;
    const opening = (this.opening ??= this.start());
    try {
      await opening;
    } catch (error) {
      // A close() while this was opening already let go of it: never count below none.
      this.opens = Math.max(0, this.opens - 1);
      if (this.opening === opening) this.opening = undefined;
      throw error;
    }
  }

  /** One user is done; the last one stops it. */
  async close(): Promise<void> {
    if (this.opens === 0) return;
    if (--this.opens > 0) return;
    this.opening = undefined;
    await this.stop();
  }

  /** Whether some user holds it open. */
  isOpen(): boolean {
    return this.opens > 0;
  }
}
