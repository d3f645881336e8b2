// The project token (copy, reset behind a confirmation), personal API keys (create shown once, roll, revoke), the
// organization's members and SDK snippets pointing at this host.
import { useState } from 'preact/hooks'
import { api, projectPath } from '../lib/api'
import { Confirm, ErrorNote, Field, Loading, Page, setDisplayZone, useAsync, valueOf } from '../lib/ui'
import { SaveFooter, useAction } from '../lib/forms'
import { timezoneChoices } from '../lib/timezone'
import { ADMIN_LEVEL, levelIn, useSession } from '../lib/session'
import { PersonalKeys } from './PersonalKeys'
import { Members } from './Members'
import { CopyButton } from './CopyButton'

interface Project {
  id: number
  name: string
  api_token: string | null
  api_token_hint: string
  timezone?: string | null
}

/** The project's timezone (PATCH /api/projects/:id/): insights bucket days in it and the console writes times in it. */
function ProjectTimezone(props: { project: Project; onSaved: () => void }) {
  const { projectId } = useSession()
  const [zone, setZone] = useState(props.project.timezone || 'UTC')
  const action = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    action.run(async () => {
      await api(projectPath(projectId, ''), { method: 'PATCH', json: { timezone: zone } })
      setDisplayZone(zone)
      props.onSaved()
      return true
    })
  }
  return (
    <section aria-labelledby="timezone-title">
      <h2 id="timezone-title">Timezone</h2>
      <p class="muted small">Insights count days, weeks and months in it; the console writes every time in it.</p>
      <form class="stack" onSubmit={submit}>
        <Field label="Timezone">
          <select
            value={zone}
            onChange={(e) => {
              setZone(valueOf(e))
              action.reset()
            }}
          >
            {timezoneChoices(props.project.timezone ?? null).map((z) => (
              <option key={z} value={z}>
                {z}
              </option>
            ))}
          </select>
        </Field>
        <SaveFooter action={action} />
      </form>
    </section>
  )
}

export function Settings() {
  const { projectId, me } = useSession()
  // resetting the token needs an admin or owner: a member is not offered a button that can only fail
  const mayReset = levelIn(me, projectId) >= ADMIN_LEVEL
  const project = useAsync((signal) => api<Project>(projectPath(projectId, ''), { signal }), [projectId])
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const reset = async () => {
    setConfirming(false)
    setError(null)
    setNotice(null)
    try {
      await api(projectPath(projectId, 'reset_token/'), { method: 'PATCH' })
      setNotice('The project token was reset: update every site and app that sends events with the old one.')
      project.reload()
    } catch (failure) {
      setError(failure)
    }
  }
  const token = project.data?.api_token ?? null
  const host = location.origin
  return (
    <Page title="Settings">
      <section aria-labelledby="token-title">
        <h2 id="token-title">Project token</h2>
        <p class="muted small">
          Public by design: it goes into every web page and app that sends events to this project.
          {mayReset ? '' : ' An admin or owner of the organization can reset it.'}
        </p>
        {project.loading && !project.data ? <Loading what="the project" /> : null}
        <ErrorNote error={project.error ?? error} />
        {project.data ? (
          <div class="row">
            <code class="token" aria-label="Current project token">
              {token ?? project.data.api_token_hint}
            </code>
            {token ? <CopyButton text={token} label="Copy token" /> : null}
            {mayReset ? (
              <button type="button" class="danger" onClick={() => setConfirming(true)}>
                Reset token
              </button>
            ) : null}
          </div>
        ) : null}
        {notice ? (
          <p role="status" class="ok">
            {notice}
          </p>
        ) : null}
        <Confirm open={confirming} title="Reset the project token?" confirmLabel="Reset" onConfirm={reset} onCancel={() => setConfirming(false)}>
          <p>The current token stops working at once: events and flag requests sent with it are refused.</p>
        </Confirm>
      </section>
      {project.data ? <ProjectTimezone key={project.data.timezone ?? ''} project={project.data} onSaved={project.reload} /> : null}
      <PersonalKeys />
      <Members />
      <section aria-labelledby="sdk-title">
        <h2 id="sdk-title">SDK snippets</h2>
        <h3>Web (posthog-js)</h3>
        <pre class="snippet">{`import posthog from 'posthog-js'

posthog.init('${token ?? '<project token>'}', { api_host: '${host}' })`}</pre>
        <h3>Node.js (posthog-node)</h3>
        <pre class="snippet">{`import { PostHog } from 'posthog-node'

const client = new PostHog('${token ?? '<project token>'}', { host: '${host}' })
client.capture({ distinctId: 'user-1', event: 'signed_up' })
await client.shutdown()`}</pre>
        <h3>Python (posthog)</h3>
        <pre class="snippet">{`from posthog import Posthog

posthog = Posthog('${token ?? '<project token>'}', host='${host}')`}</pre>
        <h3>curl</h3>
        <pre class="snippet">{`curl -X POST ${host}/capture/ -H 'Content-Type: application/json' \\
  -d '{"api_key": "${token ?? '<project token>'}", "event": "hello", "distinct_id": "user-1"}'`}</pre>
      </section>
    </Page>
  )
}
