// Loaded on demand (a separate chunk): rrweb's replayer. It rebuilds the recorded page inside an iframe sandboxed
// without allow-scripts, so the recorded page's scripts never run; the console's own Content-Security-Policy
// applies inside it too (no other host is reached). That policy (style-src 'self') also keeps the recorded page's
// <style> elements and style attributes, which rrweb rebuilds as markup, from applying: their text is applied again
// through CSSOM (constructed style sheets and element.style), which the policy allows, so the page looks as it did.
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

/** rrweb's own rule (its rebuilt scripts are <noscript> elements), which its blocked <style> could not apply. */
const BASE_RULES = 'noscript { display: none !important; }'

function restyle(doc: Document, made: WeakMap<Element, { text: string; sheet: CSSStyleSheet }>): void {
  const win = doc.defaultView as (Window & typeof globalThis) | null
  if (!win) return
  const sheets: CSSStyleSheet[] = []
  const base = new win.CSSStyleSheet()
  base.replaceSync(BASE_RULES)
  sheets.push(base)
  for (const element of doc.querySelectorAll('style')) {
    if (element.sheet) continue // the browser applied it
    const text = element.textContent ?? ''
    let entry = made.get(element)
    if (!entry || entry.text !== text) {
      const sheet = new win.CSSStyleSheet()
      try {
        sheet.replaceSync(text)
      } catch {
        continue
      }
      entry = { text, sheet }
      made.set(element, entry)
    }
    sheets.push(entry.sheet)
  }
  doc.adoptedStyleSheets = sheets
  for (const element of doc.querySelectorAll<HTMLElement>('[style]')) {
    const text = element.getAttribute('style') ?? ''
    if (element.style.cssText === '' && text.trim() !== '') element.style.cssText = text
  }
}

export function createPlayer(root: HTMLElement, events: RrwebEvent[], options: { speed: number; skipInactive: boolean }): Player {
  const replayer = new Replayer(events as any, { root, speed: options.speed, skipInactive: options.skipInactive, mouseTail: false, showWarning: false, triggerFocus: false })
  const made = new WeakMap<Element, { text: string; sheet: CSSStyleSheet }>()
  let scheduled = false
  const restyleSoon = () => {
    if (scheduled) return
    scheduled = true
    requestAnimationFrame(() => {
      scheduled = false
      const doc = replayer.iframe.contentDocument
      if (doc) restyle(doc, made)
    })
  }
  replayer.on('fullsnapshot-rebuilded', restyleSoon)
  // a mutation (source 0) or a style sheet rule (8) may add or change styles
  replayer.on('event-cast', (event: any) => {
    if (event?.type === 3 && (event.data?.source === 0 || event.data?.source === 8)) restyleSoon()
  })
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
