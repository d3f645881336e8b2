// A person's erasure, as a PostHog user honours a deletion request: the person, its distinct ids and its static
// cohort memberships are gone when the call returns, on every process (the person cache of this one at once,
// the others' at commit, by NOTIFY; the learners forget the ids so that the next capture makes a new person).
// With `deleteEvents`, the person's events go too: first every event accepted before the call is let reach the
// event store, then they are deleted there (and the write-ahead log deletes its raw copies once every consumer has
// passed them, rather than recycling its segments), then the person — so a failure leaves the person, and the call
// can be repeated.
import type { Sql } from 'postgres'
import type { EventStore } from '../events/store'
import { databaseWork, errors } from '../http/errors'
import { deletePerson, personDistinctIds } from './erasure-repository'
import type { PersonChange } from './person-cache'

/** Longest wait for the event store to take what was accepted before an erasure with its events. */
const STORE_CATCH_UP_MS = 15_000

export interface ErasureDeps {
  sql: Sql
  events: EventStore
  /** true once the event store writer has finished every record accepted before the call */
  eventsStored(timeoutMs: number): Promise<boolean>
  /** after the events are deleted from the store: the write-ahead log deletes its copies once consumed */
  forgetLoggedEvents(): void
  /** after the commit: this process's caches and learner forget the person */
  onErased(change: PersonChange): void
  /** the person's session recordings (src/replay/): deleted with the person */
  recordings?: { deleteDistinctIds(teamId: number, distinctIds: string[]): Promise<number> }
}

export class PersonErasure {
  constructor(private readonly deps: ErasureDeps) {}

  /** Erase the person (404 when the project has none with this id); returns the distinct ids it had. */
  async erase(teamId: number, personUuid: string, options: { deleteEvents: boolean }): Promise<string[]> {
    if (options.deleteEvents) await this.eraseEvents(teamId, personUuid)
    const distinctIds = await databaseWork(() => deletePerson(this.deps.sql, teamId, personUuid))
    if (distinctIds === null) throw errors.notFound('Person not found.')
    this.deps.onErased({ teamId, distinctIds, groups: [], deleted: true })
    // recordings go whether or not the events do: a recording shows the person's screen
    await this.deps.recordings?.deleteDistinctIds(teamId, distinctIds)
    return distinctIds
  }

  private async eraseEvents(teamId: number, personUuid: string): Promise<void> {
    const distinctIds = await databaseWork(() => personDistinctIds(this.deps.sql, teamId, personUuid))
    if (distinctIds === null) throw errors.notFound('Person not found.')
    if (distinctIds.length === 0) return
    if (!(await this.deps.events.health())) {
      throw errors.unavailable('event_store_unavailable', 'The event store cannot be reached, so the events cannot be deleted now; nothing was deleted. Please retry.')
    }
    if (!(await this.deps.eventsStored(STORE_CATCH_UP_MS))) {
      throw errors.unavailable('event_store_behind', 'Events accepted earlier are still being written; nothing was deleted. Please retry shortly.')
    }
    try {
      await this.deps.events.deleteEvents(teamId, distinctIds)
    } catch (error) {
      throw Object.assign(errors.unavailable('event_store_unavailable', 'The events could not be deleted; the person was kept. Please retry.'), { cause: error })
    }
    this.deps.forgetLoggedEvents()
  }
}
