// Recent answers of the query API, by project and query: a dashboard opened twice within the time to live runs its
// insights once. Bounded in bytes (an answer larger than an eighth of the cache is not kept), oldest dropped first.
// The key holds what changes an answer besides the data: the project, its timezone and week start, the query.
import type { InsightProject } from './service'

interface Entry {
  body: Record<string, unknown>
  bytes: number
  expires: number
}

export class AnswerCache {
  private readonly entries = new Map<string, Entry>()
  private bytes = 0

  constructor(
    private readonly maxBytes: number,
    private readonly ttlMs: number,
  ) {}

  key(project: InsightProject, node: unknown): string {
    return `${project.id}\n${project.timezone}\n${project.weekStartDay}\n${JSON.stringify(node)}`
  }

  get(key: string): Record<string, unknown> | undefined {
    const entry = this.entries.get(key)
    if (!entry) return undefined
    if (entry.expires <= Date.now()) {
      this.drop(key, entry)
      return undefined
    }
    return entry.body
  }

  set(key: string, body: Record<string, unknown>): void {
    if (this.ttlMs <= 0 || this.maxBytes <= 0) return
    const bytes = (key.length + JSON.stringify(body).length) * 2
    const previous = this.entries.get(key)
    if (previous) this.drop(key, previous)
    if (bytes > this.maxBytes / 8) return
    this.entries.set(key, { body, bytes, expires: Date.now() + this.ttlMs })
    this.bytes += bytes
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break
      this.drop(oldest, entry)
    }
  }

  get sizeBytes(): number {
    return this.bytes
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key)
    this.bytes -= entry.bytes
  }
}
