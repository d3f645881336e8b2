// One recording: its facts ("Delete" asks first), and the player (rrweb's replayer, loaded as its own chunk on this page only) with
// Play/Pause, Speed, Skip inactivity and a Timeline slider; below it the session's console log (rrweb's console
// plugin events, when the recording carries them) and its events (the person's events in the recording's time
// range that carry its $session_id), each a button that moves the player to it.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, projectPath, query } from '../lib/api'
import { ConfirmedButton, ErrorNote, Field, Link, Loading, Page, useAsync, valueOf } from '../lib/ui'
import { useAction } from '../lib/forms'
import { navigate } from '../lib/router'
import { Table } from '../lib/lists'
import { useSession } from '../lib/session'
import { timeIn, useProjectTimezone } from '../lib/timezone'
import type { RrwebEvent } from './cv'
import type { Player } from './player'
import { duration, recordingPerson, type Recording } from './Recordings'
import { consoleLines } from './reading'
import { loadRecordingEvents } from './snapshots'

const SPEEDS = ['0.5', '1', '2', '4', '8']

interface SessionEvent {
  id: string
  event: string
  timestamp: string
  properties: Record<string, unknown>
}

export function RecordingPage(props: { sessionId: string }) {
  const { projectId } = useSession()
  const timezone = useProjectTimezone()
  const base = projectPath(projectId, `session_recordings/${encodeURIComponent(props.sessionId)}/`)
  const recording = useAsync((signal) => api<Recording>(base, { signal }), [base])
  const snapshots = useAsync((signal) => loadRecordingEvents(projectId, props.sessionId, signal), [projectId, props.sessionId])
  const r = recording.data
  const deleting = useAction()
  const remove = () =>
    void deleting.run(async () => {
      await api(base, { method: 'DELETE' })
      navigate('/replay')
    })
  return (
    <Page
      title="Recording"
      actions={
        <div class="row">
          <Link to="/replay">All recordings</Link>
          {r ? (
            <ConfirmedButton label="Delete" name="Delete recording" title="Delete this recording?" disabled={deleting.busy} onConfirm={remove}>
              <p>Its snapshots and its metadata are deleted; the session's events stay.</p>
            </ConfirmedButton>
          ) : null}
        </div>
      }
    >
      <ErrorNote error={deleting.error} />
      <ErrorNote error={recording.error} />
      {r ? (
        <dl class="facts">
          <dt>Person</dt>
          <dd>
            <Link to={`/persons/${encodeURIComponent(r.distinct_id)}`}>{recordingPerson(r)}</Link>
          </dd>
          <dt>Start</dt>
          <dd>{timeIn(r.start_time, timezone)}</dd>
          <dt>Duration</dt>
          <dd>
            {duration(r.recording_duration)} ({duration(r.active_seconds)} active)
          </dd>
          <dt>Start URL</dt>
          <dd class="mono small">{r.start_url ?? '—'}</dd>
          <dt>Clicks, keypresses, console errors</dt>
          <dd>
            {r.click_count}, {r.keypress_count}, {r.console_error_count}
          </dd>
        </dl>
      ) : null}
      <ErrorNote error={snapshots.error} />
      {snapshots.data ? (
        <PlayerView events={snapshots.data.events} truncated={snapshots.data.truncated} recording={r ?? null} projectId={projectId} timezone={timezone} />
      ) : snapshots.loading ? (
        <Loading what="the recording" />
      ) : null}
    </Page>
  )
}

function PlayerView(props: { events: RrwebEvent[]; truncated: boolean; recording: Recording | null; projectId: number; timezone: string | null }) {
  const frame = useRef<HTMLDivElement>(null)
  const player = useRef<Player | null>(null)
  const [ready, setReady] = useState(false)
  const [loadError, setLoadError] = useState<unknown>(null)
  const [playing, setPlaying] = useState(false)
  const [current, setCurrent] = useState(0)
  const [total, setTotal] = useState(0)
  const [speed, setSpeed] = useState('1')
  const [skipInactive, setSkipInactive] = useState(true)
  const start = props.events[0]?.timestamp ?? 0
  const playable = props.events.some((e) => e.type === 2)

  useEffect(() => {
    if (!playable || !frame.current) return
    let live = true
    import('./player').then(
      ({ createPlayer }) => {
        if (!live || !frame.current) return
        const p = createPlayer(frame.current, props.events, { speed: Number(speed), skipInactive })
        p.onFinish(() => {
          setPlaying(false)
          setCurrent(p.totalMs())
        })
        player.current = p
        setTotal(p.totalMs())
        p.seek(0, false)
        setReady(true)
      },
      (error) => live && setLoadError(error),
    )
    return () => {
      live = false
      player.current?.destroy()
      player.current = null
    }
  }, [props.events])

  useEffect(() => {
    if (!playing) return
    const timer = setInterval(() => setCurrent(Math.min(player.current?.currentMs() ?? 0, total)), 250)
    return () => clearInterval(timer)
  }, [playing, total])

  const seek = (ms: number) => {
    setCurrent(ms)
    player.current?.seek(ms, playing)
  }
  const consoleLog = consoleLines(props.events)
  return (
    <>
      <section class="player" role="region" aria-label="Player">
        {!playable ? <p class="muted">This recording has no full snapshot of the page yet: there is nothing to play.</p> : null}
        <ErrorNote error={loadError} />
        {playable && !ready && !loadError ? <Loading what="the player" /> : null}
        <div class="row">
          <button
            type="button"
            disabled={!ready}
            onClick={() => {
              if (!player.current) return
              if (playing) {
                player.current.pause()
                setCurrent(player.current.currentMs())
                setPlaying(false)
              } else {
                player.current.play(current >= total ? 0 : current)
                setPlaying(true)
              }
            }}
          >
            {playing ? 'Pause' : 'Play'}
          </button>
          <Field label="Speed">
            <select
              value={speed}
              onChange={(e) => {
                setSpeed(valueOf(e))
                player.current?.setSpeed(Number(valueOf(e)))
              }}
            >
              {SPEEDS.map((s) => (
                <option key={s} value={s}>
                  {s}×
                </option>
              ))}
            </select>
          </Field>
          <label class="check">
            <input
              type="checkbox"
              checked={skipInactive}
              onChange={(e) => {
                setSkipInactive(e.currentTarget.checked)
                player.current?.setSkipInactive(e.currentTarget.checked)
              }}
            />
            Skip inactivity
          </label>
          <input
            class="timeline"
            type="range"
            aria-label="Timeline"
            aria-valuetext={`${duration(current / 1000)} of ${duration(total / 1000)}`}
            min={0}
            max={Math.max(total, 1)}
            step={1}
            value={current}
            disabled={!ready}
            onInput={(e) => seek(Number(valueOf(e)))}
          />
          <span class="muted">
            {duration(current / 1000)} / {duration(total / 1000)}
          </span>
        </div>
        {props.truncated ? <p class="muted">This recording is long: it plays up to its first 200,000 events.</p> : null}
        <div class="replay-frame" ref={frame} />
      </section>
      {consoleLog.length > 0 ? (
        <section aria-label="Console log">
          <h2>Console log</h2>
          <Table caption="Console log" columns={['At', 'Level', 'Message']}>
            {consoleLog.map((line, i) => (
              <tr key={i}>
                <td>
                  <button type="button" class="link" onClick={() => seek(Math.max(0, line.timestamp - start))}>
                    {duration((line.timestamp - start) / 1000)}
                  </button>
                </td>
                <td>{line.level}</td>
                <td class="mono small">{line.text}</td>
              </tr>
            ))}
          </Table>
        </section>
      ) : null}
      {props.recording ? <SessionEvents recording={props.recording} projectId={props.projectId} start={start} timezone={props.timezone} onSeek={seek} /> : null}
    </>
  )
}

/** The events API has no $session_id filter: the person's events in the recording's time range, kept when they carry its id. */
function SessionEvents(props: { recording: Recording; projectId: number; start: number; timezone: string | null; onSeek: (ms: number) => void }) {
  const r = props.recording
  const before = new Date(new Date(r.end_time).getTime() + 1000).toISOString()
  const path = projectPath(props.projectId, `events/${query({ distinct_id: r.distinct_id, after: r.start_time, before, limit: 1000 })}`)
  const events = useAsync((signal) => api<{ results: SessionEvent[] }>(path, { signal }), [path])
  const mine = (events.data?.results ?? []).filter((e) => e.properties?.$session_id === r.id).reverse()
  return (
    <section aria-label="Session events">
      <h2>Events</h2>
      <ErrorNote error={events.error} />
      {events.data && mine.length === 0 ? <p class="muted">No event of this session.</p> : null}
      {mine.length > 0 ? (
        <Table caption="Events of this session" columns={['At', 'Event', 'Time']}>
          {mine.map((e) => {
            const at = Math.max(0, new Date(e.timestamp).getTime() - props.start)
            return (
              <tr key={e.id}>
                <td>
                  <button type="button" class="link" aria-label={`Go to ${e.event} at ${duration(at / 1000)}`} onClick={() => props.onSeek(at)}>
                    {duration(at / 1000)}
                  </button>
                </td>
                <td>{e.event}</td>
                <td>{timeIn(e.timestamp, props.timezone)}</td>
              </tr>
            )
          })}
        </Table>
      ) : null}
    </section>
  )
}
