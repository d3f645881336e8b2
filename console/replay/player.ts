// Loaded on demand (a separate chunk): rrweb's replayer. It rebuilds the recorded page inside an iframe sandboxed
// without allow-scripts, so the recorded page's scripts never run; the console's own Content-Security-Policy
// applies inside it too (no other host is reached).
import { Replayer } from 'rrweb'
import type { RrwebEvent } from './cv'

export interface Player {
  play(offsetMs: number): void
  pause(): void
  seek(offsetMs: number, playing: boolean): void
  setSpeed(speed: number): void
  setSkipInactive(skip: boolean): void
  currentMs(): number
  totalMs(): number
  onFinish(handler: () => void): void
  destroy(): void
}

export function createPlayer(root: HTMLElement, events: RrwebEvent[], options: { speed: number; skipInactive: boolean }): Player {
  const replayer = new Replayer(events as any, { root, speed: options.speed, skipInactive: options.skipInactive, mouseTail: false, showWarning: false, triggerFocus: false })
  return {
    play: (offset) => replayer.play(offset),
    pause: () => replayer.pause(),
    seek: (offset, playing) => (playing ? replayer.play(offset) : replayer.pause(offset)),
    setSpeed: (speed) => replayer.setConfig({ speed }),
    setSkipInactive: (skipInactive) => replayer.setConfig({ skipInactive }),
    currentMs: () => replayer.getCurrentTime(),
    totalMs: () => replayer.getMetaData().totalTime,
    onFinish: (handler) => void replayer.on('finish', handler),
    destroy: () => replayer.destroy(),
  }
}
