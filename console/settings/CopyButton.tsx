import { useState } from 'preact/hooks'
import { messageOf } from '../lib/api'

export function CopyButton(props: { text: string; label: string }) {
  const [copied, setCopied] = useState<string | null>(null)
  return (
    <>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard?.writeText(props.text).then(
            () => setCopied('Copied.'),
            (e) => setCopied(`Could not copy: ${messageOf(e)}`),
          ) ?? setCopied('Copying needs https or localhost: select the text instead.')
        }
      >
        {props.label}
      </button>
      {copied ? (
        <span role="status" class="muted small">
          {copied}
        </span>
      ) : null}
    </>
  )
}
