// The frame of every page: the navigation landmark with its links, the project combobox, "Sign out".
import type { ComponentChildren } from 'preact'
import { useMemo } from 'preact/hooks'
import { Link, Loading, setDisplayZone, valueOf } from '../lib/ui'
import { useSession } from '../lib/session'
import { useProjectTimezone } from '../lib/timezone'

export const SECTIONS: { path: string; label: string }[] = [
  { path: '/events', label: 'Live events' },
  { path: '/insights', label: 'Insights' },
  { path: '/dashboards', label: 'Dashboards' },
  { path: '/web', label: 'Web analytics' },
  { path: '/replay', label: 'Session replay' },
  { path: '/experiments', label: 'Experiments' },
  { path: '/surveys', label: 'Surveys' },
  { path: '/error-tracking', label: 'Error tracking' },
  { path: '/flags', label: 'Feature flags' },
  { path: '/cohorts', label: 'Cohorts' },
  { path: '/event-definitions', label: 'Event definitions' },
  { path: '/property-definitions', label: 'Property definitions' },
  { path: '/persons', label: 'Persons' },
  { path: '/health', label: 'Health' },
  { path: '/settings', label: 'Settings' },
]

export function Shell(props: { path: string; children: ComponentChildren }) {
  const session = useSession()
  const { me } = session
  const zone = useProjectTimezone()
  // set when it changes only: Settings sets a newly saved zone itself, which this first answer must not undo
  useMemo(() => setDisplayZone(zone), [zone])
  return (
    <div class="shell">
      <header class="top">
        <a class="skip" href="#main">
          Skip to content
        </a>
        <span class="brand">phog</span>
        {me.projects.length > 1 ? (
          <label class="project">
            <span>Project</span>
            <select value={String(session.projectId)} onChange={(e) => session.setProject(Number(valueOf(e)))}>
              {me.projects.map((p) => (
                <option key={p.id} value={String(p.id)}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <span class="muted">{me.projects[0]?.name ?? ''}</span>
        )}
        <span class="spacer" />
        <span class="muted user">{me.email}</span>
        <button type="button" onClick={() => session.signOut()}>
          Sign out
        </button>
      </header>
      <nav aria-label="Console">
        <ul>
          {SECTIONS.map((s) => {
            const current = props.path === s.path || props.path.startsWith(`${s.path}/`)
            return (
              <li key={s.path}>
                <Link to={s.path} aria-current={current ? 'page' : undefined}>
                  {s.label}
                </Link>
              </li>
            )
          })}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {/* pages write times as soon as they draw: they wait for the zone to write them in */}
        {zone === null ? <Loading what="the project" /> : props.children}
      </main>
    </div>
  )
}
