// RetentionQuery and EventsQuery on the embedded event store (SQLite, queries in a child process).
import { embeddedEvents, startStack } from '../helpers/stack'
import { retentionOverManyPersons } from './insights-retention-many'
import { retentionContract } from './insights-retention.contract'

const start = () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 })
retentionContract('embedded store', start)

retentionOverManyPersons('embedded SQLite store', start, async (stack, events, mapping) => {
  const db = await embeddedEvents(stack)
  const insert = db.prepare('INSERT INTO events (uuid, team_id, event, distinct_id, properties, timestamp, created_at, person_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
  const map = db.prepare('INSERT INTO person_distinct_id (team_id, distinct_id, person_id, version) VALUES (?, ?, ?, ?)')
  db.transaction(() => {
    for (const m of mapping) map.run(m.teamId, m.distinctId, m.personId, m.version)
    for (const e of events) insert.run(e.uuid, e.teamId, e.event, e.distinctId, e.properties, e.timestamp, e.createdAt, e.personId)
  })()
  db.close()
})
