// Session replay: the project's recordings, newest first, a page at a time (the list API's offset and has_next),
// found by person (distinct id), start date and minimum duration; a row opens its player (/replay/<session id>).
// rrweb's player styles (its cursor, its frame) in the main style sheet: the page links one style sheet
import 'rrweb/dist/style.css'
import { useState } from 'preact/hooks'
import { api, projectPath, query } from '../lib/api'
import { ErrorNote, Field, Link, Page, useAsync, valueOf } from '../lib/ui'
import { ListBody, Table } from '../lib/lists'
import { useSession } from '../lib/session'
import { timeIn, useProjectTimezone } from '../lib/timezone'

export interface Recording {
  id: string
  distinct_id: string
  recording_duration: number
  active_seconds: number
  start_time: string
  end_time: string
  click_count: number
  keypress_count: number
  console_error_count: number
  start_url: string | null
  person: { id: string; distinct_ids: string[]; properties: Record<string, unknown> } | null
}

const PAGE = 25

/** 75 → "1:15", 3725 → "1:02:05". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  const hms = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60]
  const [h, m, sec] = hms
  const two = (n: number) => String(n).padStart(2, '0')
  return h > 0 ? `${h}:${two(m!)}:${two(sec!)}` : `${m}:${two(sec!)}`
}

/** A recording's person as the Persons page names them: email, else the distinct id. */
export function recordingPerson(r: Recording): string {
  const email = r.person?.properties?.email
  return typeof email === 'string' && email.trim() ? email : r.distinct_id
}

export function Recordings() {
  const { projectId } = useSession()
  const timezone = useProjectTimezone()
  // a person's page links here with ?person_uuid= (all their distinct ids), Live events with ?distinct_id=
  const linked = new URLSearchParams(location.search)
  const personUuid = linked.get('person_uuid')?.slice(0, 100) ?? ''
  const initial = { distinctId: linked.get('distinct_id')?.slice(0, 200) ?? '', from: '', minDuration: '' }
  const [form, setForm] = useState(initial)
  const [submitted, setSubmitted] = useState(initial)
  const [offset, setOffset] = useState(0)
  const path = projectPath(
    projectId,
    `session_recordings/${query({ person_uuid: personUuid, distinct_id: submitted.distinctId.trim(), date_from: submitted.from, duration_min: submitted.minDuration, limit: PAGE, offset })}`,
  )
  const page = useAsync((signal) => api<{ results: Recording[]; has_next: boolean }>(path, { signal }), [path])
  const items = page.data?.results ?? []
  const filtered = Boolean(personUuid || submitted.distinctId.trim() || submitted.from || submitted.minDuration)
  return (
    <Page title="Session replay">
      <form
        class="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault()
          setSubmitted(form)
          setOffset(0)
        }}
      >
        <Field label="Person" hint="a distinct id">
          <input type="search" maxLength={200} value={form.distinctId} onInput={(e) => setForm({ ...form, distinctId: valueOf(e) })} />
        </Field>
        <Field label="Started after">
          <input type="date" value={form.from} onInput={(e) => setForm({ ...form, from: valueOf(e) })} />
        </Field>
        <Field label="Minimum duration (seconds)">
          <input type="number" min={0} max={86400} step={1} value={form.minDuration} onInput={(e) => setForm({ ...form, minDuration: valueOf(e) })} />
        </Field>
        <button type="submit">Find</button>
      </form>
      {personUuid ? (
        <p>
          Only one person's recordings. <Link to="/replay">All recordings</Link>
        </p>
      ) : null}
      <ErrorNote error={page.error} />
      <ListBody state={page} count={items.length} what="recordings" empty={filtered ? 'No recording matches.' : 'No recordings yet: turn recording on in Settings, and posthog-js records.'}>
        <Table caption="Recordings" columns={['Person', 'Start', 'Duration', 'Start URL', 'Clicks']}>
          {items.map((r) => (
            <tr key={r.id}>
              <td>
                <Link to={`/replay/${encodeURIComponent(r.id)}`}>{recordingPerson(r)}</Link>
              </td>
              <td>{timeIn(r.start_time, timezone)}</td>
              <td>{duration(r.recording_duration)}</td>
              <td class="mono small">{r.start_url ?? '—'}</td>
              <td>{r.click_count}</td>
            </tr>
          ))}
        </Table>
      </ListBody>
      <div class="row">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Previous page
        </button>
        <button type="button" disabled={!page.data?.has_next} onClick={() => setOffset(offset + PAGE)}>
          Next page
        </button>
      </div>
    </Page>
  )
}
