import { join } from 'node:path'
import { EmbeddedEventStore } from '../../src/events/embedded'
import { eventStoreContract } from './event-store.contract'
import { tempDir } from '../helpers/temp'

const dir = tempDir('phog-store-')
eventStoreContract('embedded SQLite', {
  make: async () => {
    const store = new EmbeddedEventStore(join(dir, 'events.sqlite'))
    await store.init()
    return store
  },
})

// The server's request side reads on a worker thread with its own read-only connection: the same contract.
const offThreadDir = tempDir('phog-store-reader-')
eventStoreContract('embedded SQLite, reads on a worker thread', {
  make: async () => {
    const store = new EmbeddedEventStore(join(offThreadDir, 'events.sqlite'), { readOffThread: true })
    await store.init()
    return store
  },
})
