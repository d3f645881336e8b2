// How every list reads: "Loading …" until the first answer, a note when it is empty, then its rows in a table
// named by a caption for screen readers. Cells are the caller's JSX, so user data stays text.
import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api } from './api'
import { Loading, useAsync } from './ui'

/** The body of a list loaded by useAsync: its loading note, its empty note, or (with rows) its children. */
export function ListBody(props: { state: { data: unknown; loading: boolean }; count: number; what: string; empty: ComponentChildren; children: ComponentChildren }) {
  const { state } = props
  return (
    <>
      {state.loading && !state.data ? <Loading what={props.what} /> : null}
      {state.data && props.count === 0 ? <p class="muted">{props.empty}</p> : null}
      {props.count > 0 ? props.children : null}
    </>
  )
}

/** A table with one header row (a false column is left out), in a horizontal scroller unless `scroll` is false. */
export function Table(props: { caption: string; columns: (string | false)[]; class?: string; scroll?: boolean; children: ComponentChildren }) {
  const table = (
    <table class={props.class}>
      <caption class="sr-only">{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((name) =>
            name === false ? null : (
              <th scope="col" key={name}>
                {name}
              </th>
            ),
          )}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  )
  return props.scroll === false ? table : <div class="scroll">{table}</div>
}

/** A list read page by page through the REST API's own `next` links ("Load more"). */
export interface Pages<T> {
  items: T[]
  /** the first page as answered (undefined until it is): what ListBody reads */
  data: unknown
  /** the list's total when the API gives one */
  count: number | null
  /** the first page has not answered yet */
  loading: boolean
  /** a further page is being read */
  loadingMore: boolean
  error: unknown
  /** the API said there is more */
  hasMore: boolean
  loadMore: () => void
  /** reads the first page again (pages already loaded after it stay, without duplicates) */
  reload: () => void
}

/** The path and query of a `next` link: the console talks to the host that served it, whatever the link's host. */
export function sameOrigin(next: string): string {
  const url = new URL(next, location.origin)
  return `${url.pathname}${url.search}`
}

/** Reads `firstPath`, then each `next` on demand; items are told apart by `keyOf`. */
export function usePages<T>(firstPath: string, keyOf: (item: T) => string | number, deps: unknown[]): Pages<T> {
  const first = useAsync((signal) => api<{ results: T[]; next: string | null; count?: number }>(firstPath, { signal }), deps)
  const [later, setLater] = useState<{ items: T[]; next: string | null; started: boolean }>({ items: [], next: null, started: false })
  const [loadingMore, setLoadingMore] = useState(false)
  const [moreError, setMoreError] = useState<unknown>(null)
  // a new list (other filters, other project) starts from its first page
  useEffect(() => {
    setLater({ items: [], next: null, started: false })
    setMoreError(null)
  }, deps)
  const next = later.started ? later.next : (first.data?.next ?? null)
  const loadMore = () => {
    if (!next || loadingMore) return
    setLoadingMore(true)
    setMoreError(null)
    api<{ results: T[]; next: string | null }>(sameOrigin(next)).then(
      (page) => setLater((l) => ({ items: [...l.items, ...page.results], next: page.next, started: true })),
      (error) => setMoreError(error),
    ).finally(() => setLoadingMore(false))
  }
  const seen = new Set<string | number>()
  const items: T[] = []
  for (const item of [...(first.data?.results ?? []), ...later.items]) {
    const key = keyOf(item)
    if (!seen.has(key)) {
      seen.add(key)
      items.push(item)
    }
  }
  return {
    items,
    data: first.data,
    count: typeof first.data?.count === 'number' ? first.data.count : null,
    loading: first.loading && !first.data,
    loadingMore,
    error: first.error ?? moreError,
    hasMore: Boolean(next),
    loadMore,
    reload: first.reload,
  }
}

/** "Load more" under a paged list, with how many are shown (of how many, when known). */
export function LoadMore(props: { pages: Pages<unknown>; what: string }) {
  const { pages } = props
  if (pages.items.length === 0) return null
  return (
    <div class="row">
      <span class="muted small" aria-live="polite">
        {pages.items.length}
        {pages.count !== null ? ` of ${pages.count}` : ''} {props.what} shown
      </span>
      {pages.hasMore ? (
        <button type="button" onClick={pages.loadMore} disabled={pages.loadingMore}>
          {pages.loadingMore ? 'Loading…' : 'Load more'}
        </button>
      ) : null}
    </div>
  )
}
