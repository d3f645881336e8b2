// The phog console: a single page that talks only to this server's public REST API.
import './styles.css'
import { render } from 'preact'
import { useEffect, useMemo, useState } from 'preact/hooks'
import { api, ApiFailure, mayBeSignedIn, whenSignedOut } from './lib/api'
import { match, navigate, usePath } from './lib/router'
import { ErrorNote, Loading } from './lib/ui'
import { rememberedProject, rememberProject, Session, type Me, type SessionState } from './lib/session'
import { LoginPage } from './login/LoginPage'
import { Shell } from './shell/Shell'
import { LiveEvents } from './events/LiveEvents'
import { FlagList } from './flags/FlagList'
import { FlagEditor } from './flags/FlagEditor'
import { CohortList } from './cohorts/CohortList'
import { CohortPage } from './cohorts/CohortPage'
import { DefinitionList } from './definitions/DefinitionList'
import { DefinitionPage } from './definitions/DefinitionPage'
import { Persons } from './persons/Persons'
import { PersonPage } from './persons/PersonPage'
import { Health } from './health/Health'
import { Settings } from './settings/Settings'
import { Insights } from './insights/Insights'
import { DashboardList } from './dashboards/DashboardList'
import { DashboardPage } from './dashboards/DashboardPage'
import { ExperimentList } from './experiments/ExperimentList'
import { ExperimentPage } from './experiments/ExperimentPage'
import { WebAnalytics } from './web/WebAnalytics'
import { Recordings } from './replay/Recordings'
import { RecordingPage } from './replay/RecordingPage'
import { SurveyList } from './surveys/SurveyList'
import { SurveyPage } from './surveys/SurveyPage'
import { IssueList } from './error-tracking/IssueList'
import { IssuePage } from './error-tracking/IssuePage'

type Route = [pattern: string, view: (params: Record<string, string>) => preact.JSX.Element]

const ROUTES: Route[] = [
  ['/events', () => <LiveEvents />],
  ['/insights', () => <Insights key="new" id={null} />],
  ['/insights/:id', (p) => <Insights key={p.id} id={p.id} />],
  ['/dashboards', () => <DashboardList />],
  ['/dashboards/:id', (p) => <DashboardPage id={p.id} />],
  ['/web', () => <WebAnalytics />],
  ['/replay', () => <Recordings />],
  ['/replay/:sessionId', (p) => <RecordingPage key={p.sessionId} sessionId={p.sessionId} />],
  ['/experiments', () => <ExperimentList />],
  ['/experiments/new', () => <ExperimentPage id={null} />],
  ['/experiments/:id', (p) => <ExperimentPage id={p.id} />],
  ['/surveys', () => <SurveyList />],
  ['/surveys/new', () => <SurveyPage id={null} />],
  ['/surveys/:id', (p) => <SurveyPage id={p.id} />],
  ['/surveys/:id/edit', (p) => <SurveyPage id={p.id} edit />],
  ['/error-tracking', () => <IssueList />],
  ['/error-tracking/:id', (p) => <IssuePage key={p.id} id={p.id} />],
  ['/flags', () => <FlagList />],
  ['/flags/new', () => <FlagEditor id={null} />],
  ['/flags/:id', (p) => <FlagEditor id={p.id} />],
  ['/cohorts', () => <CohortList />],
  ['/cohorts/new', () => <CohortPage id={null} />],
  ['/cohorts/:id', (p) => <CohortPage id={p.id} />],
  ['/event-definitions', () => <DefinitionList kind="event" />],
  ['/event-definitions/:id', (p) => <DefinitionPage kind="event" id={p.id} />],
  ['/property-definitions', () => <DefinitionList kind="property" />],
  ['/property-definitions/:id', (p) => <DefinitionPage kind="property" id={p.id} />],
  ['/persons', () => <Persons />],
  ['/persons/:distinctId', (p) => <PersonPage distinctId={p.distinctId} />],
  ['/health', () => <Health />],
  ['/settings', () => <Settings />],
]

function NotFound() {
  return (
    <section class="page">
      <h1>Not found</h1>
      <p>This console page does not exist.</p>
    </section>
  )
}

let returnTo: string | null = null

function App() {
  const path = usePath()
  const [me, setMe] = useState<Me | null | undefined>(undefined)
  const [error, setError] = useState<unknown>(null)
  const [projectId, setProjectId] = useState<number | null>(null)

  useEffect(() => {
    whenSignedOut(() => setMe(null))
    // no session cookie: the sign-in page at once, without a request the browser would log as a 401
    if (!mayBeSignedIn()) return setMe(null)
    api<Me>('/api/users/@me/', { quiet401: true }).then(
      (answer) => setMe(answer),
      (failure) => (failure instanceof ApiFailure && failure.status === 401 ? setMe(null) : setError(failure)),
    )
  }, [])
  useEffect(() => {
    if (me) setProjectId(rememberedProject(me))
  }, [me])
  useEffect(() => {
    if (me === null && path !== '/login') {
      // a deep link opened while signed out comes back after sign-in
      if (path !== '/') returnTo = path
      navigate('/login', true)
    }
    if (me && (path === '/login' || path === '/')) {
      navigate(returnTo ?? '/events', true)
      returnTo = null
    }
  }, [me, path])

  const session = useMemo<SessionState | null>(() => {
    if (!me || projectId === null) return null
    return {
      me,
      projectId,
      setProject(id) {
        rememberProject(id)
        setProjectId(id)
      },
      async signOut() {
        await api('/api/logout/', { method: 'POST' }).catch(() => {})
        setMe(null)
      },
    }
  }, [me, projectId])

  if (error) return <ErrorNote error={error} />
  if (me === undefined) return <Loading />
  if (me === null) return <LoginPage onSignedIn={(answer) => setMe(answer)} />
  if (me.projects.length === 0) {
    return (
      <main class="page">
        <h1>No project</h1>
        <p>Your organization has no project yet. Create one with <code>npm run -s cli -- project create --name NAME</code>.</p>
      </main>
    )
  }
  if (!session) return <Loading />
  let view: preact.JSX.Element = <NotFound />
  for (const [pattern, render] of ROUTES) {
    const params = match(pattern, path)
    if (params) {
      view = render(params)
      break
    }
  }
  return (
    <Session.Provider value={session}>
      <Shell path={path}>
        {/* a different project starts every page afresh */}
        <div key={session.projectId}>{view}</div>
      </Shell>
    </Session.Provider>
  )
}

render(<App />, document.getElementById('app')!)
