// The worker thread of compile-thread.ts: one query text in, its compiled statement (or why not) out.
import { compileHere, type CompileRequest } from './compile-thread'

declare const self: Worker

self.onmessage = ({ data }: MessageEvent<{ id: number; request: CompileRequest }>) => {
  self.postMessage({ id: data.id, answer: compileHere(data.request) })
}
