// Waiting with a bound: a store that hangs must not hold a request, a readiness probe or a boot forever.

export class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} timed out after ${ms} ms`)
    this.name = 'TimeoutError'
  }
}

/** The promise's outcome, or a TimeoutError after `ms` (the promise itself runs on; its outcome is then ignored). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what = 'operation'): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(what, ms)), ms)
  })
  // a late rejection of the abandoned promise is not an unhandled one
  promise.catch(() => undefined)
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** The promise's value, or `fallback` when it fails or takes longer than `ms`. */
export async function valueWithin<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  try {
    return await withTimeout(promise, ms)
  } catch {
    return fallback
  }
}
