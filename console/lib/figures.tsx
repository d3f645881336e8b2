// A row of named figures (a <dl class="figures">): each a term and its value, the value the caller's JSX.
import type { ComponentChildren } from 'preact'

export function Figures(props: { items: [term: string, value: ComponentChildren][]; label?: string }) {
  return (
    <dl class="figures" aria-label={props.label}>
      {props.items.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  )
}
