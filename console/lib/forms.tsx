// What every form and button that writes shares: one write at a time, its failure shown as an alert, "Saved." as a
// status once a save went through.
import { useState } from 'preact/hooks'
import { ErrorNote } from './ui'

export interface Action {
  /** a write is under way (its buttons are off) */
  busy: boolean
  /** why the last write failed (null when it did not) */
  error: unknown
  /** the last write said it is done (a save that stays on the page) */
  done: boolean
  /** Runs `work`, keeping its failure instead of throwing; `work` returns true to say "Saved.". */
  run: (work: () => Promise<boolean | void>) => Promise<void>
  /** Forgets the last failure and "Saved.": the form changed since, so they no longer describe it. */
  reset: () => void
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [done, setDone] = useState(false)
  const run = async (work: () => Promise<boolean | void>) => {
    setBusy(true)
    setError(null)
    setDone(false)
    try {
      if ((await work()) === true) setDone(true)
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  const reset = () => {
    setError(null)
    setDone(false)
  }
  return { busy, error, done, run, reset }
}

/** A form's end: the failure (role alert), "Saved." (role status) and the Save button, off while saving. */
export function SaveFooter(props: { action: Action }) {
  return (
    <>
      <ErrorNote error={props.action.error} />
      {props.action.done ? (
        <p role="status" class="ok">
          Saved.
        </p>
      ) : null}
      <div class="row">
        <button type="submit" class="primary" disabled={props.action.busy}>
          Save
        </button>
      </div>
    </>
  )
}
