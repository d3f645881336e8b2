// Error tracking: the project's issues over a date range (by status), each with its occurrences, users, last seen and
// a sparkline of its occurrences per day; a row opens the issue. Issues selected ("Select <name>") are merged into the
// first one selected ("Merge selected issues", asked first): the same error fingerprinted apart, made one issue.
import { useEffect, useState } from 'preact/hooks'
import { api, projectPath, query } from '../lib/api'
import { ConfirmedButton, ErrorNote, Field, Link, Options, Page, time, valueOf } from '../lib/ui'
import { useAction } from '../lib/forms'
import { ListBody, LoadMore, Table, usePages } from '../lib/lists'
import { useSession } from '../lib/session'
import { issueOf, RANGES, sparklinePoints, STATUS_TEXT, toggled, MAX_MERGED } from './issues'

const STATUSES = [
  ['active', 'Active'],
  ['resolved', 'Resolved'],
  ['suppressed', 'Suppressed'],
  ['all', 'All'],
] as const

/** "Date range": the ranges the issues API is asked for, on the list and on an issue's page. */
export function RangeField(props: { range: string; onChange: (range: string) => void }) {
  return (
    <Field label="Date range">
      <select value={props.range} onChange={(e) => props.onChange(valueOf(e))}>
        <Options choices={RANGES} />
      </select>
    </Field>
  )
}

export function Sparkline(props: { name: string; volume: number[] }) {
  const width = 100
  const height = 24
  const total = props.volume.reduce((sum, v) => sum + v, 0)
  return (
    <svg class="sparkline" role="img" aria-label={`${props.name}: ${total} over ${props.volume.length} days`} viewBox={`0 0 ${width} ${height + 2}`} width={width} height={height + 2}>
      <title>{`${props.name}: ${props.volume.join(', ')}`}</title>
      {props.volume.length > 1 ? <polyline points={sparklinePoints(props.volume, width, height)} fill="none" class="line" transform="translate(0 1)" /> : null}
    </svg>
  )
}

export function IssueList() {
  const { projectId } = useSession()
  const [status, setStatus] = useState('active')
  const [range, setRange] = useState('-7d')
  const path = projectPath(projectId, `error_tracking/issues/${query({ status, date_from: range, limit: 50 })}`)
  const issues = usePages<Record<string, any>>(path, (i) => String(i.id), [path])
  const rows = issues.items.map(issueOf)
  // ids in the order they were selected: the first is the one the others are merged into
  const [selected, setSelected] = useState<string[]>([])
  useEffect(() => setSelected([]), [path])
  const merge = useAction()
  const into = rows.find((r) => r.id === selected[0])
  const mergeSelected = () =>
    merge.run(async () => {
      const [target, ...others] = selected
      await api(projectPath(projectId, `error_tracking/issues/${encodeURIComponent(target!)}/merge/`), { json: { ids: others } })
      setSelected([])
      issues.reload()
    })
  return (
    <Page
      title="Error tracking"
      actions={
        selected.length >= 2 && into ? (
          <ConfirmedButton label="Merge" name="Merge selected issues" title={`Merge ${selected.length} issues into “${into.name}”?`} disabled={merge.busy} onConfirm={mergeSelected}>
            <p>{`The ${selected.length - 1} other issues become part of “${into.name}”, the first one selected: their past and future exceptions count there.`}</p>
          </ConfirmedButton>
        ) : null
      }
    >
      <div class="filters">
        <Field label="Status">
          <select value={status} onChange={(e) => setStatus(valueOf(e))}>
            <Options choices={STATUSES} />
          </select>
        </Field>
        <RangeField range={range} onChange={setRange} />
      </div>
      <ErrorNote error={issues.error ?? merge.error} />
      {rows.length > 1 && selected.length < 2 ? <p class="muted small">Select two issues or more to merge them into the first one selected.</p> : null}
      <ListBody state={issues} count={rows.length} what="issues" empty={status === 'active' ? 'No active issues in this range: exceptions posthog-js captures show here.' : 'No issue matches.'}>
        <Table caption="Issues" columns={['Select', 'Issue', 'Occurrences', 'Users', 'Last seen', 'Per day', status === 'all' && 'Status']}>
          {rows.map((issue) => (
            <tr key={issue.id}>
              <td>
                <input type="checkbox" aria-label={`Select ${issue.name}`} checked={selected.includes(issue.id)} disabled={!selected.includes(issue.id) && selected.length > MAX_MERGED} onChange={() => setSelected(toggled(selected, issue.id))} />
              </td>
              <td class="issue">
                <Link to={`/error-tracking/${encodeURIComponent(issue.id)}${query({ date_from: range })}`}>{issue.name}</Link>
                {issue.description ? <div class="muted small wrap">{issue.description.slice(0, 300)}</div> : null}
              </td>
              <td>{issue.occurrences}</td>
              <td>{issue.users}</td>
              <td>{time(issue.last_seen)}</td>
              <td>
                <Sparkline name={`Occurrences of ${issue.name} per day`} volume={issue.volume} />
              </td>
              {status === 'all' ? <td>{STATUS_TEXT[issue.status] ?? issue.status}</td> : null}
            </tr>
          ))}
        </Table>
      </ListBody>
      <LoadMore pages={issues} what="issues" />
    </Page>
  )
}
