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
