// Types of the page's per-frame redraw (frame.js runs in the browser as written).

export const NO_FRAME_MS: number;

export interface FrameEnv {
  requestAnimationFrame?(cb: (t: number) => void): number;
  cancelAnimationFrame?(id: number): void;
  setTimeout(cb: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
  document?: {
    visibilityState: string;
    addEventListener?(type: string, cb: () => void): void;
    removeEventListener?(type: string, cb: () => void): void;
  };
}

export interface PerFrame {
  request(): void;
  now(): void;
  cancel(): void;
  stop(): void;
}

export function perFrame(draw: () => void, env?: FrameEnv): PerFrame;
