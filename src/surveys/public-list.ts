// The survey list posthog-js fetches (GET /api/surveys/?token=): the project's surveys that are not archived, as
// one JSON text kept in memory per project. It is on the serving thread, so a warm project costs no Postgres read:
// the text is stamped with the project's flag version (every survey write bumps it, and the flag cache learns of a
// bump from any process) and read again only when the flag cache holds a newer version. Bounded in bytes, the
// least recently used project dropped first (the project just loaded always kept); a load that fails serves the
// last text known.
import type { Sql } from 'postgres'
import { activeSurveys, projectActions } from './repository'
import { publicSurveyJson, type SurveyAction } from './serialize'

/** Where the project's flag version comes from: the flag cache. */
export interface VersionSource {
  peek(teamId: number): { version: number } | undefined
  get(teamId: number): Promise<{ version: number }>
}

interface Entry {
  version: number
  text: string
  bytes: number
}

export class PublicSurveyList {
  private readonly entries = new Map<number, Entry>()
  private readonly loading = new Map<number, Promise<Entry>>()
  private bytes = 0

  constructor(private readonly deps: { sql: Sql; versions: VersionSource; maxBytes: number }) {}

  /** The answer's text for the project. */
  async answer(teamId: number): Promise<string> {
    const stamp = this.deps.versions.peek(teamId) ?? (await this.deps.versions.get(teamId).catch(() => undefined))
    const cached = this.entries.get(teamId)
    if (cached && stamp && cached.version === stamp.version) {
      // least recently used last out: a hit moves the project to the end
      this.entries.delete(teamId)
      this.entries.set(teamId, cached)
      return cached.text
    }
    try {
      return (await this.load(teamId, stamp?.version ?? -1)).text
    } catch (error) {
      if (cached) return cached.text
      throw error
    }
  }

  /** Cached bytes and projects (for the tests and /metrics). */
  size(): { bytes: number; projects: number } {
    return { bytes: this.bytes, projects: this.entries.size }
  }

  private load(teamId: number, version: number): Promise<Entry> {
    const running = this.loading.get(teamId)
    if (running) return running
    const promise = (async () => {
      const rows = await activeSurveys(this.deps.sql, teamId)
      const ids = new Set<number>()
      for (const row of rows) {
        const values = (row.conditions?.actions as { values?: { id?: unknown }[] } | undefined)?.values
        if (Array.isArray(values)) for (const v of values) if (Number.isInteger(v?.id)) ids.add(v.id as number)
      }
      const actions = new Map<number, SurveyAction>((await projectActions(this.deps.sql, teamId, [...ids])).map((a) => [a.id, a]))
      const text = JSON.stringify({ surveys: rows.map((r) => publicSurveyJson(r, actions)), survey_config: null })
      const entry: Entry = { version, text, bytes: Buffer.byteLength(text) }
      this.store(teamId, entry)
      return entry
    })().finally(() => this.loading.delete(teamId))
    this.loading.set(teamId, promise)
    return promise
  }

  private store(teamId: number, entry: Entry): void {
    const old = this.entries.get(teamId)
    if (old) {
      this.entries.delete(teamId)
      this.bytes -= old.bytes
    }
    if (entry.version < 0) return
    this.entries.set(teamId, entry)
    this.bytes += entry.bytes
    // the least recently used go first; the answer just made stays even alone past the budget (it is at most
    // SURVEYS_MAX_PER_PROJECT × SURVEY_MAX_BYTES): were it dropped, every request would read Postgres again
    for (const [id, e] of this.entries) {
      if (this.bytes <= this.deps.maxBytes || id === teamId) break
      this.entries.delete(id)
      this.bytes -= e.bytes
    }
  }
}
