// The console's only way to the server: the public REST API, with the session cookie and, on writes, the CSRF
// header Django-style (X-CSRFToken equal to the phog_csrftoken cookie).

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly attr: string | null = null,
  ) {
    super(detail)
  }
}

function csrfToken(): string {
  for (const part of document.cookie.split(';')) {
    const [name, ...rest] = part.trim().split('=')
    if (name === 'phog_csrftoken') return rest.join('=')
  }
  return ''
}

/** Whether this browser holds a session at all (its readable CSRF cookie is set with it and cleared at sign-out). */
export function mayBeSignedIn(): boolean {
  return csrfToken() !== ''
}

/** Called when the server says the session is over: the app goes back to the sign-in page. */
let onSignedOut: () => void = () => {}
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler
}

export interface RequestOptions {
  method?: string
  json?: unknown
  body?: BodyInit
  /** a 401 is an answer for this caller (sign-in), not a lost session */
  quiet401?: boolean
  signal?: AbortSignal
}

export async function api<T = any>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = options.method ?? (options.json !== undefined || options.body !== undefined ? 'POST' : 'GET')
  const headers: Record<string, string> = { accept: 'application/json' }
  if (method !== 'GET' && method !== 'HEAD') headers['x-csrftoken'] = csrfToken()
  let body = options.body
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(options.json)
  }
  let response: Response
  try {
    response = await fetch(path, { method, headers, body, credentials: 'same-origin', signal: options.signal })
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error
    throw new ApiFailure(0, 'network', 'The server could not be reached.')
  }
  const text = await response.text()
  let data: any = null
  try {
    data = text ? JSON.parse(text) : null
  } catch {
    data = null
  }
  if (!response.ok) {
    if (response.status === 401 && !options.quiet401) onSignedOut()
    const detail = typeof data?.detail === 'string' ? data.detail : `The server answered ${response.status}.`
    throw new ApiFailure(response.status, typeof data?.code === 'string' ? data.code : String(response.status), detail, data?.attr ?? null)
  }
  return data as T
}

/** Text of any error, for an alert: the API's detail when it gave one. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiFailure) {
    // the field a refusal names helps where the message alone cannot say it (a query's nested member, a terse
    // "This field is required."); after a sentence that explains itself it would only show a raw field name
    if (!error.attr) return error.detail
    if (error.attr.includes('__')) return `${error.detail} (${error.attr})`
    return error.detail.length < 40 ? `${error.detail} (field ${error.attr})` : error.detail
  }
  return error instanceof Error ? error.message : String(error)
}

export function projectPath(projectId: number, rest: string): string {
  return `/api/projects/${projectId}/${rest}`
}

export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') search.set(k, String(v))
  const text = search.toString()
  return text ? `?${text}` : ''
}
