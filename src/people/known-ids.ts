// The distinct ids the learner need not ask Postgres about again, per project: those known to have a person (their
// plain events need no work) and those known to have a mapping row of some kind, a person's or a personless one
// (their personless events need no work). Bounded in bytes, oldest learned forgotten first: every anonymous
// visitor brings a new distinct id, and a flood of them must not grow the flush worker's memory. A forgotten id
// costs one more look in Postgres when it is next seen, nothing else.

/** What an entry costs beyond its key's characters (the hash table's slot, the string's header), as measured in Bun. */
const ENTRY_OVERHEAD_BYTES = 160

const keyOf = (teamId: number, distinctId: string) => `${teamId}\u0000${distinctId}`
const bytesOf = (key: string) => key.length * 2 + ENTRY_OVERHEAD_BYTES

export class KnownIds {
  /** key → whether the id has a person (false: a mapping row, perhaps a personless one); oldest first */
  private readonly ids = new Map<string, boolean>()
  private used = 0

  constructor(private readonly maxBytes: number) {}

  /** what the entries cost now, at most `maxBytes` */
  get bytes(): number {
    return this.used
  }

  get size(): number {
    return this.ids.size
  }

  hasPerson(teamId: number, distinctId: string): boolean {
    return this.ids.get(keyOf(teamId, distinctId)) === true
  }

  /** the id has a person or a personless mapping row: its personless events need no work */
  mapped(teamId: number, distinctId: string): boolean {
    return this.ids.has(keyOf(teamId, distinctId))
  }

  /** Remember ids that have a person now (whatever was known of them before). */
  addPersons(teamId: number, distinctIds: Iterable<string>): void {
    for (const id of distinctIds) this.add(keyOf(teamId, id), true)
  }

  /** Remember ids that have a mapping row now; an id known to have a person keeps that. */
  addMapped(teamId: number, distinctIds: Iterable<string>): void {
    for (const id of distinctIds) {
      const key = keyOf(teamId, id)
      if (!this.ids.has(key)) this.add(key, false)
    }
  }

  /** Forget these ids of a project; with no ids the whole project; with no project everything. */
  forget(teamId: number | undefined, distinctIds?: Iterable<string>): void {
    if (teamId === undefined) {
      this.ids.clear()
      this.used = 0
    } else if (distinctIds === undefined) {
      // rare (an interrupted change feed, a project's erasure): a walk over at most `maxBytes` of entries
      const prefix = `${teamId}\u0000`
      for (const key of this.ids.keys()) if (key.startsWith(prefix)) this.drop(key)
    } else for (const id of distinctIds) this.drop(keyOf(teamId, id))
  }

  private add(key: string, hasPerson: boolean): void {
    const bytes = bytesOf(key)
    if (bytes > this.maxBytes) return
    if (!this.ids.has(key)) this.used += bytes
    // re-set keeps the entry's place: an id is forgotten by when it was first learned, whatever happened since
    this.ids.set(key, hasPerson)
    while (this.used > this.maxBytes) {
      const oldest = this.ids.keys().next().value
      if (oldest === undefined) break
      this.drop(oldest)
    }
  }

  private drop(key: string): void {
    if (this.ids.delete(key)) this.used -= bytesOf(key)
  }
}
