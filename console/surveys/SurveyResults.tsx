// A survey's results: its figures (shown, sent, dismissed, response rate, from the stats API) and, per question, what
// was answered, read from its `survey sent` events through the query API. Every answer is drawn as text.
import { useState } from 'preact/hooks'
import { api, projectPath } from '../lib/api'
import { ErrorNote, Link, Loading, time, useAsync } from '../lib/ui'
import { Table } from '../lib/lists'
import { Figures } from '../lib/figures'
import { useSession } from '../lib/session'
import { answersNode, ANSWERS_PAGE, choiceCounts, countsNode, figures, percentText, ratingCounts, type Count, type CountRow, type SurveyStats } from './results'
import type { Survey, SurveyQuestion } from './types'

interface EventsAnswer {
  results: unknown[][]
  hasMore?: boolean
}

/** Runs an EventsQuery node; `fresh` asks for it computed anew rather than from the cache. */
function useEventsQuery(node: Record<string, unknown>, fresh: number) {
  const { projectId } = useSession()
  const text = JSON.stringify(node)
  return useAsync(
    (signal) => api<EventsAnswer>(projectPath(projectId, 'query/'), { json: { query: JSON.parse(text), refresh: fresh ? 'force_blocking' : undefined }, signal }),
    [projectId, text, fresh],
  )
}

function share(count: number, total: number): string {
  return total > 0 ? `${Math.round((count / total) * 1000) / 10}%` : '—'
}

/** Bars for counts, drawn in SVG (role img, named; each bar's figure in its title), the figures in the table beside. */
function CountBars(props: { name: string; counts: Count[] }) {
  const width = 640
  const height = 120
  const max = Math.max(1, ...props.counts.map((c) => c.count))
  const slot = width / Math.max(1, props.counts.length)
  return (
    <figure class="chart">
      <svg role="img" aria-label={props.name} viewBox={`0 0 ${width} ${height + 20}`} preserveAspectRatio="none">
        <title>{props.name}</title>
        <line x1={0} y1={height} x2={width} y2={height} class="axis" />
        {props.counts.map((c, i) => {
          const h = (c.count / max) * (height - 8)
          return (
            <g key={c.value}>
              <rect x={i * slot + 2} y={height - h} width={Math.max(1, slot - 4)} height={h} class="bar">
                <title>{`${c.value}: ${c.count}`}</title>
              </rect>
              <text x={i * slot + slot / 2} y={height + 15} text-anchor="middle" class="tick">
                {c.value}
              </text>
            </g>
          )
        })}
      </svg>
    </figure>
  )
}

function CountsTable(props: { caption: string; first: string; counts: Count[] }) {
  const total = props.counts.reduce((sum, c) => sum + c.count, 0)
  return (
    <Table caption={props.caption} columns={[props.first, 'Responses', 'Share']}>
      {props.counts.map((c) => (
        <tr key={c.value}>
          <td class="wrap">{c.value}</td>
          <td>{c.count}</td>
          <td>{share(c.count, total)}</td>
        </tr>
      ))}
    </Table>
  )
}

function CountedAnswers(props: { survey: Survey; question: SurveyQuestion; index: number; fresh: number }) {
  const { question, index } = props
  const answer = useEventsQuery(countsNode(props.survey, question, index), props.fresh)
  const rows = (answer.data?.results ?? []) as CountRow[]
  const label = `Question ${index + 1}`
  if (!answer.data) return answer.error ? <ErrorNote error={answer.error} /> : <Loading what="the answers" />
  if (question.type === 'rating') {
    const { counts, offScale } = ratingCounts(question, rows)
    return (
      <>
        <ErrorNote error={answer.error} />
        <CountBars name={`${label} ratings`} counts={counts} />
        <CountsTable caption={`${label} ratings`} first="Rating" counts={counts} />
        {offScale ? <p class="muted small">{`${offScale} answers were off the scale.`}</p> : null}
      </>
    )
  }
  const counts = choiceCounts(question, rows)
  return (
    <>
      <ErrorNote error={answer.error} />
      {counts.length ? <CountsTable caption={`${label} choices`} first={question.type === 'link' ? 'Answer' : 'Choice'} counts={counts} /> : <p class="muted">No answers yet.</p>}
    </>
  )
}

function OpenAnswers(props: { survey: Survey; question: SurveyQuestion; index: number; fresh: number }) {
  const [offset, setOffset] = useState(0)
  const answer = useEventsQuery(answersNode(props.survey, props.question, props.index, offset), props.fresh)
  const rows = answer.data?.results ?? []
  if (!answer.data) return answer.error ? <ErrorNote error={answer.error} /> : <Loading what="the answers" />
  return (
    <>
      <ErrorNote error={answer.error} />
      {rows.length === 0 && offset === 0 ? <p class="muted">No answers yet.</p> : null}
      {rows.length ? (
        <Table caption={`Question ${props.index + 1} answers`} columns={['Answer', 'Person', 'Time']}>
          {rows.map((row, i) => {
            const distinctId = String(row[1] ?? '')
            return (
              <tr key={`${offset}-${i}`}>
                <td class="wrap">{typeof row[0] === 'string' ? row[0] : JSON.stringify(row[0])}</td>
                <td class="mono small">
                  <Link to={`/persons/${encodeURIComponent(distinctId)}`}>{distinctId}</Link>
                </td>
                <td>{time(typeof row[2] === 'string' ? row[2] : null)}</td>
              </tr>
            )
          })}
        </Table>
      ) : null}
      {offset > 0 || answer.data.hasMore ? (
        <div class="row">
          <button type="button" aria-label={`Newer answers to question ${props.index + 1}`} disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - ANSWERS_PAGE))}>
            Newer
          </button>
          <button type="button" aria-label={`Older answers to question ${props.index + 1}`} disabled={!answer.data.hasMore} onClick={() => setOffset(offset + ANSWERS_PAGE)}>
            Older
          </button>
        </div>
      ) : null}
    </>
  )
}

export function SurveyResults(props: { survey: Survey }) {
  const { projectId } = useSession()
  const { survey } = props
  const [fresh, setFresh] = useState(0)
  const stats = useAsync(
    (signal) => api<SurveyStats>(projectPath(projectId, `surveys/${encodeURIComponent(survey.id)}/stats/`), { signal }),
    [projectId, survey.id, fresh],
  )
  const f = stats.data ? figures(stats.data) : null
  return (
    <section aria-labelledby="results-title">
      <div class="page-head">
        <h2 id="results-title">Results</h2>
        <button type="button" onClick={() => setFresh(fresh + 1)} disabled={stats.loading}>
          {stats.loading ? 'Reading…' : 'Reload results'}
        </button>
      </div>
      <ErrorNote error={stats.error} />
      {f ? (
        <Figures
          label="Survey figures"
          items={[
            ['Shown', f.shown],
            ['Sent', f.sent],
            ['Dismissed', f.dismissed],
            ['Response rate', percentText(f.responseRate)],
          ]}
        />
      ) : stats.loading ? (
        <Loading what="the figures" />
      ) : null}
      {survey.questions.map((q, i) => (
        <section key={q.id ?? i} aria-label={`Question ${i + 1} results`}>
          <h3 class="wrap">{`${i + 1}. ${q.question}`}</h3>
          {q.type === 'open' ? <OpenAnswers survey={survey} question={q} index={i} fresh={fresh} /> : <CountedAnswers survey={survey} question={q} index={i} fresh={fresh} />}
        </section>
      ))}
    </section>
  )
}
