// Per-project caps on learned definitions: event definitions, and property definitions of each type (event,
// person, group). Past its cap a project's events are still stored, but no new definition is made for it; the
// definitions it has keep being updated (last_seen_at, a first type). Pure bookkeeping: the counts come from the
// repositories through `count`, and the learner splits its writes with `split`.
//
// A project far below its cap costs nothing: its count is read once and then raised by every batch's candidates
// (an upper bound, as some of them already existed). Only when that bound passes the cap is the count read again,
// and only then are the project's candidates sorted into existing definitions and new ones, of which at most the
// room left is written. So one project's burst of new names is cut to the room it has before any write, and the
// other projects of the batch are written as before.

export type CappedKind = 'event' | 'event_property' | 'person_property' | 'group_property'

export interface CapsOptions {
  limits: Record<CappedKind, number>
  /** how many definitions of this kind the project has now */
  count(teamId: number, kind: CappedKind): Promise<number>
  /** new definitions not made because the project is at its cap */
  refused(teamId: number, kind: CappedKind, howMany: number): void
}

/** A project whose candidates must be sorted: at most `room` new definitions may be made from them. */
export interface Tight<T> {
  teamId: number
  rows: T[]
  room: number
}

export class DefinitionCaps {
  /** `${kind}:${teamId}` → an upper bound of the project's definitions of that kind */
  private readonly bounds = new Map<string, number>()

  constructor(private readonly options: CapsOptions) {}

  /**
   * Sort candidate rows: those of projects with room for all of them (written as usual), and per project with
   * too little room, its rows with the room it has left.
   */
  async split<T>(kind: CappedKind, rows: T[], teamOf: (row: T) => number): Promise<{ free: T[]; tight: Tight<T>[] }> {
    const byTeam = new Map<number, T[]>()
    for (const row of rows) {
      const teamId = teamOf(row)
      let list = byTeam.get(teamId)
      if (!list) byTeam.set(teamId, (list = []))
      list.push(row)
    }
    const limit = this.options.limits[kind]
    const free: T[] = []
    const tight: Tight<T>[] = []
    for (const [teamId, list] of byTeam) {
      const key = `${kind}:${teamId}`
      let bound = this.bounds.get(key)
      if (bound === undefined || bound + list.length > limit) bound = await this.options.count(teamId, kind)
      if (bound + list.length <= limit) {
        this.bounds.set(key, bound + list.length)
        for (const row of list) free.push(row)
      } else {
        this.bounds.set(key, bound)
        tight.push({ teamId, rows: list, room: Math.max(0, limit - bound) })
      }
    }
    return { free, tight }
  }

  /** A tight project's rows were sorted: `made` new definitions were written, `refused` were not. */
  settle(kind: CappedKind, teamId: number, made: number, refused: number): void {
    const key = `${kind}:${teamId}`
    this.bounds.set(key, (this.bounds.get(key) ?? 0) + made)
    if (refused > 0) this.options.refused(teamId, kind, refused)
  }

  /** Definitions were deleted or the counts may be stale: read them again when next needed. */
  forget(): void {
    this.bounds.clear()
  }
}

/**
 * Of a tight project's rows, those to write: every row whose definition exists (`exists`), then new ones up to
 * `room`, in the order given; and the new ones left out.
 */
export function withinRoom<T>(rows: T[], room: number, exists: (row: T) => boolean): { write: T[]; made: number; refused: T[] } {
  const write: T[] = []
  const refused: T[] = []
  let made = 0
  for (const row of rows) {
    if (exists(row)) write.push(row)
    else if (made < room) {
      write.push(row)
      made++
    } else refused.push(row)
  }
  return { write, made, refused }
}
