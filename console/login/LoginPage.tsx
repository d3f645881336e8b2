import { useState } from 'preact/hooks'
import { api, ApiFailure, messageOf } from '../lib/api'
import { Field, valueOf } from '../lib/ui'
import type { Me } from '../lib/session'

export function LoginPage(props: { onSignedIn: (me: Me) => void }) {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      props.onSignedIn(await api<Me>('/api/login/', { json: { email, password }, quiet401: true }))
    } catch (failure) {
      if (failure instanceof ApiFailure && failure.status === 401) setError('Invalid email or password')
      else if (failure instanceof ApiFailure && failure.status === 429) setError(`Too many attempts. ${failure.detail}`)
      else setError(messageOf(failure))
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class="login">
      <form onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Sign in to phog</h1>
        <Field label="Email">
          <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail(valueOf(e))} />
        </Field>
        <Field label="Password">
          <input type="password" name="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(valueOf(e))} />
        </Field>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
        <p class="muted small">
          No user yet? Create one with <code>npm run -s cli -- user create --email you@example.com --password-stdin</code>.
        </p>
      </form>
    </main>
  )
}
