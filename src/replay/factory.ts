// Which recording store the configuration asks for: the embedded one in DATA_DIR (for now on every deployment).
import { join } from 'node:path'
import type { Config } from '../config'
import { SqliteRecordingStore } from './sqlite-store'
import type { RecordingStore } from './store'

export const recordingsFile = (config: Config) => join(config.DATA_DIR, 'recordings.sqlite')

export function createRecordingStore(config: Config): RecordingStore {
  return new SqliteRecordingStore(recordingsFile(config))
}
