// A small history router: the app lives under /console/, every deep link loads it and shows its page.
import { useEffect, useState } from 'preact/hooks'

export const BASE = '/console'

export function currentPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname
  return path === '' ? '/' : path
}

const listeners = new Set<() => void>()

export function navigate(path: string, replace = false): void {
  const url = `${BASE}${path}`
  if (replace) history.replaceState(null, '', url)
  else history.pushState(null, '', url)
  for (const l of listeners) l()
  window.scrollTo(0, 0)
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath())
  useEffect(() => {
    const update = () => setPath(currentPath())
    listeners.add(update)
    window.addEventListener('popstate', update)
    return () => {
      listeners.delete(update)
      window.removeEventListener('popstate', update)
    }
  }, [])
  return path
}

/** Matches "/flags/:id" against "/flags/12" → { id: "12" }. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split('/').filter(Boolean)
  const b = path.split('/').filter(Boolean)
  if (a.length !== b.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < a.length; i++) {
    if (a[i].startsWith(':')) params[a[i].slice(1)] = decodeURIComponent(b[i])
    else if (a[i] !== b[i]) return null
  }
  return params
}
