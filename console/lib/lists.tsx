// How every list reads: "Loading …" until the first answer, a note when it is empty, then its rows in a table
// named by a caption for screen readers. Cells are the caller's JSX, so user data stays text.
import type { ComponentChildren } from 'preact'
import { Loading } from './ui'

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
