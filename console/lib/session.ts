// Who is signed in and which project the console shows (remembered per browser).
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'

export interface ProjectSummary {
  id: number
  name: string
  organization: string
}

export interface Membership {
  id: string
  name: string
  membership_level: number
}

export interface Me {
  email: string
  organization: Membership | null
  organizations?: Membership[]
  projects: ProjectSummary[]
  current_project: number | null
}

export interface SessionState {
  me: Me
  projectId: number
  setProject(id: number): void
  signOut(): Promise<void>
}

export const Session = createContext<SessionState | null>(null)

export function useSession(): SessionState {
  const session = useContext(Session)
  if (!session) throw new Error('no session')
  return session
}

/** PostHog's organization levels: admins and owners manage the project (its token); members use it. */
export const ADMIN_LEVEL = 8

/** The signed-in user's level in the organization of `projectId` (0 when not known). */
export function levelIn(me: Me, projectId: number): number {
  const organization = me.projects.find((p) => p.id === projectId)?.organization
  const membership = me.organizations?.find((o) => o.id === organization) ?? (me.organization?.id === organization ? me.organization : null)
  return membership?.membership_level ?? 0
}

const STORAGE_KEY = 'phog.project'

export function rememberedProject(me: Me): number | null {
  const stored = Number(localStorage.getItem(STORAGE_KEY))
  if (me.projects.some((p) => p.id === stored)) return stored
  return me.current_project ?? me.projects[0]?.id ?? null
}

export function rememberProject(id: number): void {
  localStorage.setItem(STORAGE_KEY, String(id))
}
