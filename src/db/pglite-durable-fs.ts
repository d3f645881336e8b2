// PGlite's Node file system with fsync that reaches the disk.
//
// PGlite runs Postgres compiled to WebAssembly over Emscripten's NODEFS, whose files are real files in DATA_DIR/pg:
// every write reaches the operating system at once (so a killed process loses nothing Postgres committed), but
// NODEFS has no fsync and Emscripten's fdatasync does nothing, so Postgres's fsync never reached the disk and an
// OS crash or a power cut could lose the last commits. Here fsync(2) is given to NODEFS, and Postgres is told to
// use it for its write-ahead log (wal_sync_method=fsync): a commit returns once its WAL record is on the disk.
import { fsyncSync } from 'node:fs'
import { NodeFS } from '@electric-sql/pglite/nodefs'

interface NodeFsStream {
  nfd?: number
}

interface EmscriptenModule {
  FS: {
    filesystems: { NODEFS: { stream_ops: Record<string, unknown>; convertNodeCode(error: unknown): number } }
    ErrnoError: new (errno: number) => Error
  }
}

/** Postgres's start parameters without `-F` (fsync off), and WAL synced with fsync(2), the call NODEFS now has. */
export function durableStartParams(defaults: readonly string[]): string[] {
  return [...defaults.filter((p) => p !== '-F'), '-c', 'fsync=on', '-c', 'wal_sync_method=fsync']
}

export class DurableNodeFS extends NodeFS {
  override async init(...args: Parameters<NodeFS['init']>): ReturnType<NodeFS['init']> {
    const { emscriptenOpts } = await super.init(...args)
    const giveFsync = (mod: EmscriptenModule) => {
      const nodefs = mod.FS.filesystems.NODEFS
      nodefs.stream_ops.fsync = (stream: NodeFsStream) => {
        if (typeof stream.nfd !== 'number') return 0
        try {
          fsyncSync(stream.nfd)
          return 0
        } catch (error) {
          // Postgres sees the errno and, for a data file, stops rather than carry on believing the data is safe
          throw new mod.FS.ErrnoError(nodefs.convertNodeCode(error))
        }
      }
    }
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...((emscriptenOpts.preRun as unknown[] | undefined) ?? []), giveFsync] } as never }
  }
}
