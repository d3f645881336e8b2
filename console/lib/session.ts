// Who is signed in and which project the console shows (remembered per browser).
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'

export interface ProjectSummary {
  id: number
  name: string
  organization: string
}

export interface Me {
  email: string
  organization: { id: string; name: string; membership_level: number } | null
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

const STORAGE_KEY = 'phog.project'

export function rememberedProject(me: Me): number | null {
  const stored = Number(localStorage.getItem(STORAGE_KEY))
  if (me.projects.some((p) => p.id === stored)) return stored
  return me.current_project ?? me.projects[0]?.id ?? null
}

export function rememberProject(id: number): void {
  localStorage.setItem(STORAGE_KEY, String(id))
}
