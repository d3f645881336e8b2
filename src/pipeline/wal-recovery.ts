// Recovery: the log's segments as a previous process left them. Each segment is scanned until a frame is short,
// fails its crc, or carries the wrong sequence number (stale bytes of a recycled file always carry older ones):
// appends resume there. A segment after a gap in the numbering, or an empty one before the newest, is set aside.
import { closeSync, fstatSync, openSync, renameSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { readRecordAt, type Segment } from './wal-reader'

const SEGMENT = /^(\d{16})\.seg$/

/** The segments found among the directory's `names`, in order, each with the extent of its valid records. */
export function recoverSegments(dir: string, names: string[]): Segment[] {
  const segments: Segment[] = []
  const found = names
    .map((n) => SEGMENT.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ firstSeq: Number(m[1]), path: join(dir, m[0]) }))
    .sort((a, b) => a.firstSeq - b.firstSeq)

  let expect: number | null = null
  for (let i = 0; i < found.length; i++) {
    const { firstSeq, path } = found[i]
    if (expect !== null && firstSeq !== expect) {
      // A gap means the segments after it cannot be trusted in order; keep them out of the way.
      renameSync(path, `${path}.orphan`)
      continue
    }
    const fd = openSync(path, 'r')
    const limit = fstatSync(fd).size
    let offset = 0
    let seq: number = firstSeq
    while (true) {
      const record = readRecordAt(fd, offset, limit, seq)
      if (!record) break
      offset += record.size
      seq++
    }
    closeSync(fd)
    if (offset === 0 && i < found.length - 1) {
      renameSync(path, `${path}.orphan`)
      continue
    }
    segments.push({ firstSeq, path, size: offset, lastSeq: seq - 1 })
    expect = seq
  }
  // A segment with no records is only kept if it is the newest (appends continue into it).
  while (segments.length > 0 && segments[0].size === 0 && segments.length > 1) {
    const empty = segments.shift()!
    unlinkSync(empty.path)
  }
  return segments
}
